#pragma once
// The token ids of many lines in one flat array, so that a corpus costs two allocations, not one
// per line: line i is tokens[offsets[i], offsets[i+1]).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace attn::data {

struct TokenizedLines {
  std::vector<std::int32_t> tokens;
  std::vector<std::uint64_t> offsets{0};

  std::size_t size() const { return offsets.size() - 1; }
  std::span<const std::int32_t> line(std::size_t i) const {
    return std::span<const std::int32_t>(tokens).subspan(offsets[i], offsets[i + 1] - offsets[i]);
  }
  std::size_t length(std::size_t i) const { return offsets[i + 1] - offsets[i]; }
  void append(std::span<const std::int32_t> ids) {
    tokens.insert(tokens.end(), ids.begin(), ids.end());
    offsets.push_back(tokens.size());
  }
};

}  // namespace attn::data
