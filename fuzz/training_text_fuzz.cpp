// libFuzzer target: the training-text reader (data/parallel_corpus.h), which `attn train` runs on
// the user's source and target files: read_text_lines' UTF-8 checks, the line-count check, the
// tokenisation with the shared vocabulary, the dropping of blank and over-long pairs and the token
// cache.
//
// Input: one byte of options, then the source file, byte 0xFF, the target file (fuzz_support.h);
// without 0xFF the target file is empty. Options: bits 0-5 give max_tokens - 1 (1 to 64), bit 7
// loads twice through a token cache (written by the first load, read by the second).
// The vocabulary is trained once per process on tests/data/fixtures/genesis.en + genesis.es.
//
// Checked besides memory errors: every line is kept or counted as dropped; a kept pair fits
// max_tokens, holds no pad/BOS/EOS and decodes back to its lines (vocabulary.h's round trip, for
// lines without U+2581); a load from the cache keeps exactly what the first load kept.
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <utility>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/text_file.h"
#include "data/parallel_corpus.h"
#include "data/vocabulary.h"
#include "data/vocabulary_training.h"
#include "fuzz_support.h"

namespace {

using attn::data::ParallelCorpus;
using attn::data::Vocabulary;

const Vocabulary& vocabulary() {
  static const std::unique_ptr<Vocabulary> vocabulary = [] {
    attn::data::VocabularyTrainingOptions options;
    const std::filesystem::path fixtures = std::filesystem::path(ATTN_SOURCE_DIR) / "tests" / "data" / "fixtures";
    options.inputs = {fixtures / "genesis.en", fixtures / "genesis.es"};
    options.model_prefix = attn::fuzz::scratch_dir() / "vocab";
    options.vocab_size = 500;
    return std::make_unique<Vocabulary>(Vocabulary::load(attn::data::train_vocabulary(options).model_file));
  }();
  return *vocabulary;
}

void check_corpus(const ParallelCorpus& corpus, const std::vector<std::string>& source_lines,
                  const std::vector<std::string>& target_lines, std::size_t max_tokens) {
  const auto& report = corpus.report();
  FUZZ_CHECK(report.lines == source_lines.size() && source_lines.size() == target_lines.size(), report.summary());
  FUZZ_CHECK(report.kept + report.dropped_blank + report.dropped_too_long == report.lines, report.summary());
  FUZZ_CHECK(corpus.size() == report.kept, report.summary());
  std::size_t previous_line = 0;
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    const std::size_t line = corpus.line_number(i);
    FUZZ_CHECK(line > previous_line && line <= report.lines, "line number " + std::to_string(line));
    previous_line = line;
    const std::pair<std::span<const std::int32_t>, const std::string*> sides[] = {
        {corpus.source(i), &source_lines[line - 1]}, {corpus.target(i), &target_lines[line - 1]}};
    for (const auto& [ids, text] : sides) {
      FUZZ_CHECK(ids.size() + 1 <= max_tokens, "line " + std::to_string(line) + " over max_tokens");
      for (const std::int32_t id : ids) {
        FUZZ_CHECK(
            id >= 0 && id < vocabulary().size() && id != attn::kPadId && id != attn::kBosId && id != attn::kEosId,
            "id " + std::to_string(id) + " in line " + std::to_string(line));
      }
      if (text->find("\u2581") == std::string::npos) {
        FUZZ_CHECK(vocabulary().decode(ids) == *text, "line " + std::to_string(line) + " does not decode back");
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  omp_set_num_threads(1);  // one fuzzing process per core; threads would only add noise
  vocabulary();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto options_byte = static_cast<unsigned char>(bytes[0]);
  const std::size_t max_tokens = 1 + (options_byte & 0x3F);
  const bool through_cache = (options_byte & 0x80) != 0;
  const auto parts = attn::fuzz::split_parts(bytes.substr(1));

  attn::data::ParallelCorpusOptions options;
  options.source_file = attn::fuzz::write_scratch_file("train.src", parts[0]);
  options.target_file = attn::fuzz::write_scratch_file("train.tgt", parts.size() > 1 ? parts[1] : std::string_view());
  options.max_tokens = max_tokens;
  options.max_warnings = 2;
  std::ostringstream log;
  options.log = &log;
  if (through_cache) {
    options.cache_dir = attn::fuzz::scratch_dir() / "cache";
    std::filesystem::remove_all(options.cache_dir);
    std::filesystem::create_directories(options.cache_dir);
  }
  try {
    const ParallelCorpus corpus = ParallelCorpus::load(vocabulary(), options);
    const auto source_lines = attn::read_text_lines(options.source_file);
    const auto target_lines = attn::read_text_lines(options.target_file);
    check_corpus(corpus, source_lines, target_lines, max_tokens);
    if (through_cache) {
      const ParallelCorpus cached = ParallelCorpus::load(vocabulary(), options);
      FUZZ_CHECK(cached.report().from_cache, "the cache just written was not used: " + log.str());
      FUZZ_CHECK(cached.size() == corpus.size(), cached.report().summary() + " vs " + corpus.report().summary());
      for (std::size_t i = 0; i < corpus.size(); ++i) {
        FUZZ_CHECK(cached.line_number(i) == corpus.line_number(i) &&
                       std::ranges::equal(cached.source(i), corpus.source(i)) &&
                       std::ranges::equal(cached.target(i), corpus.target(i)),
                   "pair " + std::to_string(i) + " differs when read from the cache");
      }
    }
  } catch (const attn::Error&) {
    // Bad input (invalid UTF-8, different line counts), refused with a message.
  }
  return 0;
}
