// libFuzzer target: the lexical shortlist files `attn translate --shortlist FILE` reads
// (decode/shortlist.h, docs/shortlist.md), against a vocabulary of 400 pieces trained once from
// the committed Genesis text.
//
// Input: one byte, then the file. Byte bit 0 clear: the rest is the file as it is (the checksum
// and vocabulary checks); set: the rest is the body after the first two lines, which the harness
// writes for this vocabulary, and the harness appends the body's checksum, so that the fuzzer
// reaches the parser behind the checksum.
//
// Checked besides memory errors: a shortlist that loads selects ascending, distinct ids within the
// vocabulary, with the special tokens; saved and loaded again, it selects the same ids.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/error.h"
#include "core/sha256.h"
#include "data/vocabulary.h"
#include "data/vocabulary_training.h"
#include "decode/shortlist.h"
#include "fuzz_support.h"

namespace {

const attn::data::Vocabulary& vocabulary() {
  static const auto* v = [] {
    attn::data::VocabularyTrainingOptions options;
    const std::string fixtures = std::string(ATTN_SOURCE_DIR) + "/tests/data/fixtures/";
    options.inputs = {fixtures + "genesis.en", fixtures + "genesis.es"};
    options.model_prefix = attn::fuzz::scratch_dir() / "vocab";
    options.vocab_size = 400;
    return new attn::data::Vocabulary(attn::data::Vocabulary::load(attn::data::train_vocabulary(options).model_file));
  }();
  return *v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const attn::data::Vocabulary& v = vocabulary();
  std::string file(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) {
    file = "attn shortlist 1\nvocabulary " + attn::vocabulary_fingerprint(v) + " " + std::to_string(v.size()) + "\n" +
           file;
    if (!file.empty() && file.back() != '\n') file += '\n';
    file += "sha256 " + attn::sha256_hex(file) + "\n";
  }
  const std::string path = attn::fuzz::write_scratch_file("shortlist.txt", file);
  std::unique_ptr<attn::Shortlist> shortlist;
  try {
    shortlist = std::make_unique<attn::Shortlist>(attn::Shortlist::load(path, v));
  } catch (const attn::Error&) {
    return 0;  // bad input, refused with a message
  }
  const std::vector<std::vector<std::int32_t>> sources{{4, 5, 6, 7}, {v.size() - 1, 10}};
  const auto ids = shortlist->select(sources, 1000);
  FUZZ_CHECK(std::adjacent_find(ids.begin(), ids.end(), [](int a, int b) { return a >= b; }) == ids.end(),
             "select's ids are not ascending and distinct");
  FUZZ_CHECK(!ids.empty() && ids.front() >= 0 && ids.back() < v.size(), "select's ids leave the vocabulary");
  FUZZ_CHECK(ids.size() >= 4 && ids[3] == 3, "select left out a special token");
  const std::string saved = (attn::fuzz::scratch_dir() / "saved.txt").string();
  shortlist->save(saved);
  FUZZ_CHECK(attn::Shortlist::load(saved, v).select(sources, 1000) == ids, "saved and loaded, it selects otherwise");
  return 0;
}
