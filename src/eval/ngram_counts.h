#pragma once
// Multisets of n-grams, the currency of BLEU and chrF.
//
// An n-gram is a view of a contiguous piece of text that the caller keeps alive: a character
// n-gram is a run of n code points, a word n-gram a run of n tokens of a string in which tokens
// are separated by exactly one space (so equal views mean equal token tuples). The counts are kept
// sorted (by a hash of the n-gram, then by the n-gram itself, so that most comparisons are of two
// integers), which makes clipping against a reference a linear merge rather than a lookup per n-gram.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace attn::eval {

class NgramCounts {
 public:
  NgramCounts() = default;
  explicit NgramCounts(std::span<const std::string_view> ngrams);

  // How many n-grams were counted, repeats included.
  long long total() const { return total_; }
  bool empty() const { return entries_.empty(); }

  // Sum over the n-grams of min(count here, count in `reference`): the clipped matches.
  long long matches(const NgramCounts& reference) const;

  // Raises each count to the other's count where that is larger (the union of two multisets), as
  // sacreBLEU merges the n-grams of several references.
  void keep_max(const NgramCounts& other);

 private:
  struct Entry {  // 24 bytes: references of a whole validation set stay in memory
    std::uint64_t hash;
    const char* data;
    std::uint32_t size;
    std::uint32_t count;
    std::string_view ngram() const { return {data, size}; }
  };
  struct Before {
    bool operator()(const Entry& a, const Entry& b) const {
      return a.hash != b.hash ? a.hash < b.hash : a.ngram() < b.ngram();
    }
  };
  std::vector<Entry> entries_;
  long long total_ = 0;
};

// The n-grams of n consecutive tokens. `tokens` must be views into one string, each separated from
// the next by a single character, so that an n-gram is the view from the first token's start to the
// last token's end.
std::vector<std::string_view> token_ngrams(std::span<const std::string_view> tokens, std::size_t n);

// The n-grams of n consecutive code points of `text`; `boundaries` holds the byte offset of each
// code point followed by text.size().
std::vector<std::string_view> character_ngrams(std::string_view text, std::span<const std::size_t> boundaries,
                                               std::size_t n);

// The byte offset of every code point of `text`, followed by text.size().
std::vector<std::size_t> code_point_boundaries(std::string_view text);

// Splits a string of tokens joined by single spaces (as the tokenizers produce) into its tokens.
std::vector<std::string_view> split_joined_tokens(std::string_view joined);

}  // namespace attn::eval
