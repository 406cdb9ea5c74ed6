#include "eval/ngram_counts.h"

#include <algorithm>

#include "core/utf8.h"

namespace attn::eval {

namespace {

// FNV-1a: only an ordering key, ties are broken by comparing the n-grams themselves.
std::uint64_t hash_of(std::string_view ngram) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : ngram) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return hash;
}

}  // namespace

NgramCounts::NgramCounts(std::span<const std::string_view> ngrams) : total_(static_cast<long long>(ngrams.size())) {
  std::vector<Entry> keyed;
  keyed.reserve(ngrams.size());
  for (std::string_view ngram : ngrams) {
    keyed.push_back({hash_of(ngram), ngram.data(), static_cast<std::uint32_t>(ngram.size()), 1});
  }
  std::sort(keyed.begin(), keyed.end(), Before{});
  for (const Entry& entry : keyed) {
    if (!entries_.empty() && entries_.back().hash == entry.hash && entries_.back().ngram() == entry.ngram()) {
      ++entries_.back().count;
    } else {
      entries_.push_back(entry);
    }
  }
}

long long NgramCounts::matches(const NgramCounts& reference) const {
  const Before before;
  long long matched = 0;
  auto mine = entries_.begin();
  auto theirs = reference.entries_.begin();
  while (mine != entries_.end() && theirs != reference.entries_.end()) {
    if (before(*mine, *theirs)) {
      ++mine;
    } else if (before(*theirs, *mine)) {
      ++theirs;
    } else {
      matched += std::min(mine->count, theirs->count);
      ++mine, ++theirs;
    }
  }
  return matched;
}

void NgramCounts::keep_max(const NgramCounts& other) {
  const Before before;
  std::vector<Entry> merged;
  merged.reserve(entries_.size() + other.entries_.size());
  auto mine = entries_.begin();
  auto theirs = other.entries_.begin();
  while (mine != entries_.end() || theirs != other.entries_.end()) {
    if (theirs == other.entries_.end() || (mine != entries_.end() && before(*mine, *theirs))) {
      merged.push_back(*mine++);
    } else if (mine == entries_.end() || before(*theirs, *mine)) {
      merged.push_back(*theirs++);
    } else {
      merged.push_back({mine->hash, mine->data, mine->size, std::max(mine->count, theirs->count)});
      ++mine, ++theirs;
    }
  }
  entries_ = std::move(merged);
  total_ = 0;
  for (const Entry& entry : entries_) total_ += entry.count;
}

std::vector<std::string_view> token_ngrams(std::span<const std::string_view> tokens, std::size_t n) {
  std::vector<std::string_view> ngrams;
  if (n == 0 || tokens.size() < n) return ngrams;
  ngrams.reserve(tokens.size() - n + 1);
  for (std::size_t i = 0; i + n <= tokens.size(); ++i) {
    const char* begin = tokens[i].data();
    const char* end = tokens[i + n - 1].data() + tokens[i + n - 1].size();
    ngrams.emplace_back(begin, static_cast<std::size_t>(end - begin));
  }
  return ngrams;
}

std::vector<std::string_view> character_ngrams(std::string_view text, std::span<const std::size_t> boundaries,
                                               std::size_t n) {
  std::vector<std::string_view> ngrams;
  const std::size_t length = boundaries.size() - 1;  // in code points
  if (n == 0 || length < n) return ngrams;
  ngrams.reserve(length - n + 1);
  for (std::size_t i = 0; i + n <= length; ++i) {
    ngrams.push_back(text.substr(boundaries[i], boundaries[i + n] - boundaries[i]));
  }
  return ngrams;
}

std::vector<std::size_t> code_point_boundaries(std::string_view text) {
  std::vector<std::size_t> boundaries;
  boundaries.reserve(text.size() + 1);
  for (std::size_t pos = 0; pos < text.size(); pos += decode_utf8_at(text, pos).length) boundaries.push_back(pos);
  boundaries.push_back(text.size());
  return boundaries;
}

std::vector<std::string_view> split_joined_tokens(std::string_view joined) {
  std::vector<std::string_view> tokens;
  if (joined.empty()) return tokens;
  std::size_t start = 0;
  for (std::size_t space; (space = joined.find(' ', start)) != std::string_view::npos; start = space + 1) {
    tokens.push_back(joined.substr(start, space - start));
  }
  tokens.push_back(joined.substr(start));
  return tokens;
}

}  // namespace attn::eval
