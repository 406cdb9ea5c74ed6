#pragma once
// A parallel corpus: two UTF-8 text files whose line i are translations of each other, read,
// checked and tokenised once with the shared vocabulary.
//
// What is kept: a pair is dropped, counted and reported (the first few by file:line) when either
// line is blank (empty or only spaces/tabs), or when either side needs more than max_tokens
// tokens including the EOS (source, target output) or BOS (target input) that batches add, i.e.
// when tokens + 1 > max_tokens. Files with different line counts, unreadable files and invalid
// UTF-8 are errors naming the file (and line).
//
// Cache: with a cache folder, the token ids of both files are stored there in one file per pair
// of file names, keyed by SHA-256 of the vocabulary model bytes and of the text read; a cache made
// for other inputs, or damaged, is ignored and rewritten. The filtering above runs on every load,
// so changing max_tokens needs no new cache.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <span>
#include <string>
#include <vector>

#include "data/bpe_dropout.h"
#include "data/tokenized_lines.h"
#include "data/vocabulary.h"

namespace attn::data {

struct ParallelCorpusOptions {
  std::filesystem::path source_file;
  std::filesystem::path target_file;
  std::filesystem::path cache_dir;  // empty: tokenise on every load
  std::size_t max_tokens = 256;     // per side, counting the EOS/BOS added in batches
  std::size_t max_warnings = 5;     // named per kind of problem; the rest are only counted
  std::ostream* log = nullptr;      // warnings, the cache's fate and the summary; nullptr: silent
  bool keep_text = false;           // keep the kept pairs' text, for resampled()
};

// What a load kept and dropped.
struct ParallelCorpusReport {
  std::size_t lines = 0;             // in each file
  std::size_t kept = 0;              // pairs
  std::size_t dropped_blank = 0;     // pairs with a blank line on either side
  std::size_t dropped_too_long = 0;  // pairs over max_tokens on either side
  std::size_t max_tokens = 0;        // the limit applied
  std::size_t source_tokens = 0;     // in the kept pairs, without EOS
  std::size_t target_tokens = 0;     // in the kept pairs, without BOS/EOS
  bool from_cache = false;
  double seconds = 0;  // the whole load

  // One line, e.g. "31084 lines: kept 31080 pairs (1000342 + 991573 tokens), dropped 3 with a blank
  // line, 1 over 256 tokens"
  std::string summary() const;
};

class ParallelCorpus {
 public:
  // Reads, checks and tokenises both files (or takes the tokens from the cache). Throws Error on
  // unreadable files, invalid UTF-8 (naming file:line) and different line counts.
  static ParallelCorpus load(const Vocabulary& vocabulary, const ParallelCorpusOptions& options);

  std::size_t size() const { return line_numbers_.size(); }  // kept pairs
  // Token ids of kept pair i, without EOS/BOS.
  std::span<const std::int32_t> source(std::size_t i) const { return source_.line(i); }
  std::span<const std::int32_t> target(std::size_t i) const { return target_.line(i); }
  std::size_t source_length(std::size_t i) const { return source_.length(i); }
  // The q-quantile (0 < q <= 1) of the kept pairs' source lengths, by nearest rank: the smallest
  // length that at least q of the sources do not exceed. 0 for an empty corpus.
  std::size_t source_length_quantile(double q) const;
  std::size_t target_length(std::size_t i) const { return target_.length(i); }
  // The line of kept pair i in both files, counting from 1.
  std::size_t line_number(std::size_t i) const { return line_numbers_[i]; }

  // The same pairs cut again with BPE-dropout (bpe_dropout.h), pair i's source drawn from
  // derive_seed(seed, 2i) and its target from derive_seed(seed, 2i + 1), so the result depends on
  // the seed alone, not on threads. A line the dropout makes longer than max_tokens keeps its usual
  // pieces, so every pair stays. Needs a corpus loaded with keep_text; the result keeps no text.
  ParallelCorpus resampled(const BpeDropout& bpe, double dropout, std::uint64_t seed) const;

  const ParallelCorpusReport& report() const { return report_; }
  const ParallelCorpusOptions& options() const { return options_; }

 private:
  ParallelCorpusOptions options_;
  ParallelCorpusReport report_;
  TokenizedLines source_;
  TokenizedLines target_;
  std::vector<std::uint32_t> line_numbers_;
  std::vector<std::string> source_text_, target_text_;  // of the kept pairs, with keep_text
};

}  // namespace attn::data
