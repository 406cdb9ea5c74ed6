#pragma once
// Deriving independent random seeds from one: each dropout site of each step gets its own
// stream, reproducible from (run seed, step, site) alone.
#include <cstdint>

namespace attn {

// SplitMix64's finaliser: a bijective 64-bit mix with full avalanche.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

constexpr std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t salt) { return mix64(seed ^ mix64(salt)); }

}  // namespace attn
