#pragma once
// What the table-driven kernel test (kernels/backend_ops_test.cpp) compares with: reference
// values with their tolerances, backend memory with guard bands, random inputs, bfloat16 by the
// bits, and a softmax in double with the bound a float32 softmax keeps.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/device_vector.h"
#include "kernels/backend.h"
#include "kernels/device_buffer.h"

namespace attn::testing {

constexpr double kU32 = 0x1p-24;   // float32's unit roundoff: one rounding is off by at most kU32·|x|
constexpr double kUBf16 = 0x1p-8;  // bfloat16's (8 significant bits)

// Reference values, each with its tolerance. check() compares a result element by element (a NaN
// never passes) and names the first few misses.
struct Expected {
  std::vector<double> value, tol;
  void add(double v, double t = 0) { value.push_back(v), tol.push_back(t); }
  template <typename T>
  void check(const std::vector<T>& got, const std::string& what) const {
    ASSERT_EQ(got.size(), value.size()) << what;
    std::size_t misses = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      const double g = static_cast<double>(got[i]);
      if (std::abs(g - value[i]) <= tol[i]) continue;
      if (++misses <= 3) ADD_FAILURE() << what << "[" << i << "] = " << g << ", want " << value[i] << " ± " << tol[i];
    }
    EXPECT_EQ(misses, 0u) << what << ": " << misses << " of " << got.size() << " elements out of tolerance";
  }
};

// Backend memory with kGuard elements of a fixed byte pattern on each side: an operation may
// write only inside [data(), data() + n). Without initial contents every bit is set (a NaN for
// floats, -1 for integers), so an element the operation fails to write fails the comparison.
template <typename T>
class Guarded {
 public:
  static constexpr std::size_t kGuard = 16;
  static constexpr unsigned char kPattern = 0xA5;

  Guarded(Backend& be, const std::vector<T>& init) : be_(be), n_(init.size()), buf_(be, init.size() + 2 * kGuard) {
    std::vector<T> all = pattern(buf_.size(), kPattern);
    std::copy(init.begin(), init.end(), all.begin() + kGuard);
    be.copy_to_device(buf_.data(), all.data(), buf_.bytes());
  }
  Guarded(Backend& be, std::int64_t n) : Guarded(be, pattern(static_cast<std::size_t>(n), 0xFF)) {}

  T* data() { return buf_.data() + kGuard; }
  // The contents, after checking that both guard bands are as they were.
  std::vector<T> host() {
    const std::vector<T> all = to_host(be_, buf_), guard = pattern(kGuard, kPattern);
    EXPECT_EQ(std::memcmp(all.data(), guard.data(), kGuard * sizeof(T)), 0) << "written before the buffer";
    EXPECT_EQ(std::memcmp(all.data() + kGuard + n_, guard.data(), kGuard * sizeof(T)), 0) << "written past its end";
    return std::vector<T>(all.begin() + kGuard, all.begin() + kGuard + n_);
  }

 private:
  static std::vector<T> pattern(std::size_t n, unsigned char byte) {
    std::vector<T> v(n);
    if (n > 0) std::memset(static_cast<void*>(v.data()), byte, n * sizeof(T));  // data() may be null when empty
    return v;
  }
  Backend& be_;
  std::size_t n_;
  DeviceBuffer<T> buf_;
};

// Integers uniform in [lo, hi).
inline std::vector<std::int32_t> random_ints(std::size_t n, unsigned seed, int lo, int hi) {
  const auto u = random_values(n, seed, 0, 1);
  std::vector<std::int32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::min(hi - 1, lo + static_cast<int>(u[i] * (hi - lo)));
  return v;
}

// Floats from uniform random bit patterns: every exponent, subnormals, infinities and NaNs.
inline std::vector<float> random_float_bits(std::size_t n, unsigned seed) {
  const auto u = random_values(n, seed, 0, 1);
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::bit_cast<float>(static_cast<std::uint32_t>(u[i] * 0x1p32));
  return v;
}

// bfloat16 by the bits, apart from the kernels' conversion: the float's top half, plus one where
// the dropped half is more than half an ulp, or exactly half with an odd top half (ties to even;
// the carry may run into the exponent: FLT_MAX rounds to infinity); subnormals become ±0, as the
// contract says (backend.h: as AVX512-BF16 converts them). Not for NaNs.
inline Bf16 bf16_nearest_even(float x) {
  const auto bits = std::bit_cast<std::uint32_t>(x);
  if ((bits & 0x7F800000u) == 0) return static_cast<Bf16>((bits >> 16) & 0x8000u);  // subnormal or zero: ±0
  auto top = static_cast<Bf16>(bits >> 16);
  const std::uint32_t dropped = bits & 0xFFFFu;
  if (dropped > 0x8000u || (dropped == 0x8000u && (top & 1u))) ++top;
  return top;
}
inline float bf16_value(Bf16 b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }
inline bool bf16_is_nan(Bf16 b) { return (b & 0x7F80u) == 0x7F80u && (b & 0x7Fu) != 0; }

// softmax of (already scaled) scores in double: probabilities, and for each the bound of a
// float32 softmax, relatively (n + 16 + 2·range)·u: n exponentials summed, each exponential within
// a few ulp (8u), and its float argument x - max off by up to 2u·range, range = max - min.
struct Softmax {
  std::vector<double> p, tol;
  double lse = 0, range = 0;  // log Σ exp, and max - min of the scores
};
inline Softmax softmax(const std::vector<double>& x) {
  Softmax s;
  if (x.empty()) return s;
  const double max = *std::max_element(x.begin(), x.end());
  s.range = max - *std::min_element(x.begin(), x.end());
  double sum = 0;
  for (double v : x) sum += std::exp(v - max);
  s.lse = max + std::log(sum);
  const double rel = (static_cast<double>(x.size()) + 16 + 2 * s.range) * kU32;
  for (double v : x) {
    s.p.push_back(std::exp(v - s.lse));
    s.tol.push_back(rel * s.p.back());
  }
  return s;
}

}  // namespace attn::testing
