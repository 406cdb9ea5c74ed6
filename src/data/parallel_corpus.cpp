#include "data/parallel_corpus.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <ostream>

#include "core/error.h"
#include "core/seed.h"
#include "core/text_file.h"
#include "core/sha256.h"
#include "data/token_cache.h"

namespace attn::data {
namespace {

bool is_blank(const std::string& line) { return line.find_first_not_of(" \t") == std::string::npos; }

Sha256Digest hash_lines(const std::vector<std::string>& lines) {
  Sha256 hasher;
  for (const auto& line : lines) hasher.update(line).update("\n");
  return hasher.finish();
}

std::string_view as_bytes(const Sha256Digest& digest) {
  return {reinterpret_cast<const char*>(digest.data()), digest.size()};
}

// The cache key: which vocabulary cut which text.
Sha256Digest cache_key(const Vocabulary& vocabulary, const std::vector<std::string>& source_lines,
                       const std::vector<std::string>& target_lines) {
  return Sha256()
      .update("attn token cache: vocabulary model, source text, target text\n")
      .update(as_bytes(sha256(vocabulary.model_bytes())))
      .update(as_bytes(hash_lines(source_lines)))
      .update(as_bytes(hash_lines(target_lines)))
      .finish();
}

TokenizedLines tokenize(const Vocabulary& vocabulary, const std::vector<std::string>& lines) {
  TokenizedLines tokenized;
  tokenized.offsets.reserve(lines.size() + 1);
  for (const auto& ids : vocabulary.encode_lines(lines)) tokenized.append(ids);
  return tokenized;
}

// The token ids of every line of both files, from the cache when it holds them.
TokenizedPairs tokenize_pairs(const Vocabulary& vocabulary, const ParallelCorpusOptions& options,
                              const std::vector<std::string>& source_lines,
                              const std::vector<std::string>& target_lines, bool& from_cache) {
  from_cache = false;
  if (options.cache_dir.empty()) return {tokenize(vocabulary, source_lines), tokenize(vocabulary, target_lines)};

  const auto cache_file = options.cache_dir / (options.source_file.filename().string() + "+" +
                                               options.target_file.filename().string() + ".tokens");
  const auto key = cache_key(vocabulary, source_lines, target_lines);
  auto lookup = read_token_cache(cache_file, key, vocabulary.size());
  if (lookup.pairs) {
    from_cache = true;
    return std::move(*lookup.pairs);
  }
  TokenizedPairs pairs{tokenize(vocabulary, source_lines), tokenize(vocabulary, target_lines)};
  try {
    write_token_cache(cache_file, key, pairs);
    if (options.log)
      *options.log << "token cache " << cache_file.string() << " was " << lookup.why_not << "; rebuilt\n";
  } catch (const std::exception& e) {  // a cache that cannot be written only costs time
    if (options.log) *options.log << "warning: token cache not written: " << e.what() << "\n";
  }
  return pairs;
}

// Names the first few dropped pairs of one kind and counts the rest.
class DropWarnings {
 public:
  DropWarnings(std::ostream* log, std::size_t max_named) : log_(log), max_named_(max_named) {}

  void add(const std::filesystem::path& file, std::size_t line, const std::string& problem) {
    if (log_ && count_ < max_named_) *log_ << "warning: " << file.string() << ":" << line << ": " << problem << "\n";
    ++count_;
  }
  void finish(const std::string& kind) const {
    if (log_ && count_ > max_named_) *log_ << "warning: ... and " << count_ - max_named_ << " more " << kind << "\n";
  }
  std::size_t count() const { return count_; }

 private:
  std::ostream* log_;
  std::size_t max_named_;
  std::size_t count_ = 0;
};

}  // namespace

std::string ParallelCorpusReport::summary() const {
  return std::to_string(lines) + " lines: kept " + std::to_string(kept) + " pairs (" + std::to_string(source_tokens) +
         " + " + std::to_string(target_tokens) + " tokens), dropped " + std::to_string(dropped_blank) +
         " with a blank line, " + std::to_string(dropped_too_long) + " over " + std::to_string(max_tokens) + " tokens" +
         (from_cache ? "; tokens from the cache" : "");
}

ParallelCorpus ParallelCorpus::load(const Vocabulary& vocabulary, const ParallelCorpusOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const auto source_lines = read_text_lines(options.source_file);
  const auto target_lines = read_text_lines(options.target_file);
  if (source_lines.size() != target_lines.size()) {
    throw Error("parallel corpus: " + options.source_file.string() + " has " + std::to_string(source_lines.size()) +
                " lines but " + options.target_file.string() + " has " + std::to_string(target_lines.size()) +
                "; line i of one must be the translation of line i of the other");
  }

  ParallelCorpus corpus;
  corpus.options_ = options;
  auto& report = corpus.report_;
  report.lines = source_lines.size();
  report.max_tokens = options.max_tokens;

  const TokenizedPairs all = tokenize_pairs(vocabulary, options, source_lines, target_lines, report.from_cache);

  DropWarnings blank(options.log, options.max_warnings);
  DropWarnings too_long(options.log, options.max_warnings);
  corpus.source_.offsets.reserve(report.lines + 1);
  corpus.target_.offsets.reserve(report.lines + 1);
  corpus.line_numbers_.reserve(report.lines);
  for (std::size_t i = 0; i < report.lines; ++i) {
    const std::size_t line_number = i + 1;
    if (is_blank(source_lines[i]) || is_blank(target_lines[i])) {
      const bool source_blank = is_blank(source_lines[i]);
      blank.add(source_blank ? options.source_file : options.target_file, line_number, "blank line; pair dropped");
      continue;
    }
    const std::size_t source_needs = all.source.length(i) + 1, target_needs = all.target.length(i) + 1;
    if (source_needs > options.max_tokens || target_needs > options.max_tokens) {
      const bool source_over = source_needs > options.max_tokens;
      too_long.add(source_over ? options.source_file : options.target_file, line_number,
                   std::to_string(source_over ? source_needs : target_needs) + " tokens with " +
                       (source_over ? "EOS" : "BOS/EOS") + ", over the limit of " + std::to_string(options.max_tokens) +
                       "; pair dropped");
      continue;
    }
    corpus.source_.append(all.source.line(i));
    corpus.target_.append(all.target.line(i));
    corpus.line_numbers_.push_back(static_cast<std::uint32_t>(line_number));
    if (options.keep_text) {
      corpus.source_text_.push_back(source_lines[i]);
      corpus.target_text_.push_back(target_lines[i]);
    }
  }
  blank.finish("pairs with a blank line dropped");
  too_long.finish("pairs over " + std::to_string(options.max_tokens) + " tokens dropped");

  report.kept = corpus.size();
  report.dropped_blank = blank.count();
  report.dropped_too_long = too_long.count();
  report.source_tokens = corpus.source_.tokens.size();
  report.target_tokens = corpus.target_.tokens.size();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (options.log) {
    *options.log << options.source_file.string() << " + " << options.target_file.string() << ": " << report.summary()
                 << "\n";
  }
  return corpus;
}

std::size_t ParallelCorpus::source_length_quantile(double q) const {
  if (!(q > 0 && q <= 1)) throw Error("source_length_quantile: q must be in (0, 1], got " + std::to_string(q));
  if (size() == 0) return 0;
  std::vector<std::size_t> lengths(size());
  for (std::size_t i = 0; i < size(); ++i) lengths[i] = source_length(i);
  // 1-based, and at least 1: q > 0 and size() > 0.
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(size())));
  const auto nth = lengths.begin() + static_cast<std::ptrdiff_t>(rank - 1);
  std::nth_element(lengths.begin(), nth, lengths.end());
  return *nth;
}

ParallelCorpus ParallelCorpus::resampled(const BpeDropout& bpe, double dropout, std::uint64_t seed) const {
  if (source_text_.size() != size())
    throw Error("parallel corpus " + options_.source_file.string() + ": resampled() needs the text (keep_text)");
  const auto n = static_cast<std::int64_t>(size());
  std::vector<std::vector<std::int32_t>> source(size()), target(size());
  // Exceptions must not leave an OpenMP region: the first is kept and thrown afterwards.
  std::exception_ptr failure;
#pragma omp parallel for schedule(dynamic, 256)
  for (std::int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    try {
      source[k] = bpe.encode(source_text_[k], dropout, derive_seed(seed, 2 * k));
      target[k] = bpe.encode(target_text_[k], dropout, derive_seed(seed, 2 * k + 1));
    } catch (...) {
#pragma omp critical(attn_resampled_failure)
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);

  ParallelCorpus corpus;
  corpus.options_ = options_;
  corpus.options_.keep_text = false;
  corpus.report_ = report_;
  corpus.line_numbers_ = line_numbers_;
  corpus.source_.offsets.reserve(size() + 1);
  corpus.target_.offsets.reserve(size() + 1);
  for (std::size_t k = 0; k < size(); ++k) {
    // + 1: the EOS (source) or BOS/EOS (target) batches add.
    const bool source_fits = source[k].size() + 1 <= options_.max_tokens;
    const bool target_fits = target[k].size() + 1 <= options_.max_tokens;
    corpus.source_.append(source_fits ? std::span<const std::int32_t>(source[k]) : this->source(k));
    corpus.target_.append(target_fits ? std::span<const std::int32_t>(target[k]) : this->target(k));
  }
  corpus.report_.source_tokens = corpus.source_.tokens.size();
  corpus.report_.target_tokens = corpus.target_.tokens.size();
  return corpus;
}

}  // namespace attn::data
