// libFuzzer target: what `attn bleu HYP REF [REF...]` does with its files (eval/segment_files.h,
// eval/bleu.h, eval/chrf.h): read them, strip each line as sacreBLEU does, then score corpus BLEU
// (13a tokenisation, Python lower-casing) and chrF / chrF++ and format the results.
//
// Input: one byte of options, then the hypothesis file, byte 0xFF, the first reference file,
// byte 0xFF, the second, ... (fuzz_support.h; at most 4 references, the rest is ignored; without
// 0xFF the reference file is empty). Options: bit 0 lower-cases (--lowercase), bits 1-4 give
// chrF's word order (--chrf-word-order, 0 to 9), bits 5-7 the printed decimals (--width).
//
// Checked besides memory errors: both scores are finite and within [0, 100], and the BLEU
// statistics add up (matches never exceed the n-grams they are counted in). "Within 100" allows
// the last bits of exp(log(100)) = 100.00000000000004, which sacreBLEU computes for a perfect match
// too (and which attn reproduces on purpose).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "eval/bleu.h"
#include "eval/chrf.h"
#include "eval/segment_files.h"
#include "fuzz_support.h"

namespace {
constexpr double kHundred = 100 * (1 + 1e-12);  // 100 and the rounding of exp(log(100)), see above
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto options_byte = static_cast<unsigned char>(bytes[0]);
  const bool lowercase = (options_byte & 1) != 0;
  const int word_order = ((options_byte >> 1) & 0xF) % 10;
  const int width = options_byte >> 5;
  auto parts = attn::fuzz::split_parts(bytes.substr(1));
  if (parts.size() == 1) parts.emplace_back();
  if (parts.size() > 5) parts.resize(5);

  const std::string hypothesis_path = attn::fuzz::write_scratch_file("hyp.txt", parts[0]);
  std::vector<std::string> reference_paths;
  for (std::size_t k = 1; k < parts.size(); ++k) {
    reference_paths.push_back(attn::fuzz::write_scratch_file("ref" + std::to_string(k) + ".txt", parts[k]));
  }
  try {
    const std::vector<std::string> hypotheses = attn::eval::read_segments(hypothesis_path);
    const attn::eval::ReferenceSets references =
        attn::eval::read_reference_files(reference_paths, hypothesis_path, hypotheses.size());

    attn::eval::BleuOptions bleu_options;
    bleu_options.lowercase = lowercase;
    const attn::eval::BleuScore bleu = attn::eval::corpus_bleu(hypotheses, references, bleu_options);
    FUZZ_CHECK(std::isfinite(bleu.score) && bleu.score >= 0 && bleu.score <= kHundred,
               attn::eval::format_bleu(bleu, 17));
    for (std::size_t n = 0; n < bleu.counts.size(); ++n) {
      FUZZ_CHECK(bleu.counts[n] >= 0 && bleu.counts[n] <= bleu.totals[n], attn::eval::format_bleu(bleu, 17));
    }
    attn::eval::format_bleu(bleu, width);
    attn::eval::bleu_signature(bleu_options, bleu.nrefs);

    attn::eval::ChrfOptions chrf_options;
    chrf_options.lowercase = lowercase;
    chrf_options.word_order = word_order;
    const attn::eval::ChrfScore chrf = attn::eval::corpus_chrf(hypotheses, references, chrf_options);
    FUZZ_CHECK(std::isfinite(chrf.score) && chrf.score >= 0 && chrf.score <= kHundred,
               attn::eval::format_chrf(chrf, 17));
    attn::eval::format_chrf(chrf, width);
    attn::eval::chrf_signature(chrf_options, chrf.nrefs);
  } catch (const attn::Error&) {
    // Bad input (invalid UTF-8, different line counts, a segment without references), refused
    // with a message.
  }
  return 0;
}
