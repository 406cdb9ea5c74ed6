#include "data/bpe_dropout.h"

#include <algorithm>
#include <queue>

#include "core/error.h"
#include "core/seed.h"

namespace attn::data {
namespace {

// The length of the UTF-8 character that starts with `lead`, by its high four bits, as
// SentencePiece splits text into characters (a stray continuation byte counts as one).
std::size_t utf8_length(char lead) {
  static constexpr std::uint8_t kLength[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLength[static_cast<std::uint8_t>(lead) >> 4];
}

// SplitMix64 as a stream: uniform doubles in [0, 1) from a seed alone.
class Draws {
 public:
  explicit Draws(std::uint64_t seed) : state_(seed) {}
  double next() {
    state_ += 0x9E3779B97F4A7C15ULL;
    return static_cast<double>(mix64(state_) >> 11) * 0x1.0p-53;
  }

 private:
  std::uint64_t state_;
};

}  // namespace

BpeDropout::BpeDropout(const Vocabulary& vocabulary) : vocabulary_(vocabulary), surface_(vocabulary.size()) {
  std::fill(std::begin(byte_ids_), std::end(byte_ids_), kUnkId);
  for (std::int32_t id = kEosId + 1; id < vocabulary.size(); ++id) {
    const std::string& piece = vocabulary.piece(id);
    if (vocabulary.is_byte(id)) {  // "<0xHH>"
      const int byte = std::stoi(piece.substr(3, 2), nullptr, 16);
      byte_ids_[byte] = id;
      surface_[static_cast<std::size_t>(id)] = std::string(1, static_cast<char>(byte));
    } else if (vocabulary.is_unused(id)) {
      throw Error(vocabulary.name() + ": piece " + std::to_string(id) + " (\"" + piece +
                  "\") is marked unused; BPE-dropout needs a vocabulary without unused pieces (attn vocab train)");
    } else {
      pieces_.emplace(piece, Piece{id, vocabulary.score(id)});
      surface_[static_cast<std::size_t>(id)] = piece;
    }
  }
}

std::vector<std::int32_t> BpeDropout::encode(std::string_view text, double dropout, std::uint64_t seed) const {
  // The text as the vocabulary normalises it ("▁" for spaces and before the first word).
  std::string normalized;
  for (const std::int32_t id : vocabulary_.encode(text)) {
    if (id == kUnkId)
      throw Error(vocabulary_.name() + ": BPE-dropout needs a vocabulary with byte fallback (attn vocab train)");
    normalized += surface_[static_cast<std::size_t>(id)];
  }

  // The characters, as a list whose neighbours join.
  struct Symbol {
    int prev, next;
    std::uint32_t begin, size;  // in `normalized`; size 0 once joined into its left neighbour
  };
  std::vector<Symbol> symbols;
  for (std::size_t at = 0; at < normalized.size();) {
    const std::size_t size = std::min(utf8_length(normalized[at]), normalized.size() - at);
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({index - 1, index + 1, static_cast<std::uint32_t>(at), static_cast<std::uint32_t>(size)});
    at += size;
  }
  if (symbols.empty()) return {};
  symbols.back().next = -1;

  struct Pair {
    float score;
    int left, right;
    std::uint32_t size;  // of the joined piece: a pair whose symbols changed since is stale
  };
  // The best pair on top: the highest score, on a tie the leftmost.
  const auto worse = [](const Pair& a, const Pair& b) {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  };
  std::priority_queue<Pair, std::vector<Pair>, decltype(worse)> agenda(worse);
  const auto consider = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[static_cast<std::size_t>(left)];
    const Symbol& r = symbols[static_cast<std::size_t>(right)];
    const std::string_view joined(normalized.data() + l.begin, l.size + r.size);
    if (const Piece* piece = find(joined)) agenda.push({piece->score, left, right, l.size + r.size});
  };
  for (std::size_t i = 1; i < symbols.size(); ++i) consider(static_cast<int>(i) - 1, static_cast<int>(i));

  Draws draws(seed);
  while (!agenda.empty()) {
    const Pair top = agenda.top();
    agenda.pop();
    Symbol& l = symbols[static_cast<std::size_t>(top.left)];
    Symbol& r = symbols[static_cast<std::size_t>(top.right)];
    if (l.size == 0 || r.size == 0 || l.size + r.size != top.size) continue;  // stale
    if (dropout > 0 && (dropout >= 1 || draws.next() < dropout)) continue;    // dropped
    l.size += r.size;
    l.next = r.next;
    if (r.next >= 0) symbols[static_cast<std::size_t>(r.next)].prev = top.left;
    r.size = 0;
    consider(l.prev, top.left);
    consider(top.left, l.next);
  }

  std::vector<std::int32_t> ids;
  for (int i = 0; i >= 0; i = symbols[static_cast<std::size_t>(i)].next) {
    const Symbol& s = symbols[static_cast<std::size_t>(i)];
    const std::string_view piece(normalized.data() + s.begin, s.size);
    if (const Piece* known = find(piece)) {
      ids.push_back(known->id);
    } else {  // byte fallback
      for (const char byte : piece) ids.push_back(byte_ids_[static_cast<std::uint8_t>(byte)]);
    }
  }
  return ids;
}

}  // namespace attn::data
