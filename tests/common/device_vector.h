#pragma once
// Moves test data between host vectors and backend memory.
#include <vector>

#include "kernels/device_buffer.h"

namespace attn::testing {

template <typename T>
DeviceBuffer<T> to_device(Backend& be, const std::vector<T>& host) {
  DeviceBuffer<T> buf(be, host.size());
  be.copy_to_device(buf.data(), host.data(), host.size() * sizeof(T));
  return buf;
}

template <typename T>
std::vector<T> to_host(Backend& be, const DeviceBuffer<T>& buf) {
  std::vector<T> host(buf.size());
  be.copy_to_host(host.data(), buf.data(), buf.size() * sizeof(T));
  return host;
}

template <typename T>
std::vector<T> to_host(Backend& be, const T* data, std::size_t n) {
  std::vector<T> host(n);
  be.copy_to_host(host.data(), data, n * sizeof(T));
  return host;
}

// Deterministic pseudo-random values in [lo, hi) for test inputs.
inline std::vector<float> random_values(std::size_t n, unsigned seed, float lo = -1, float hi = 1) {
  std::vector<float> v(n);
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (auto& x : v) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    x = lo + (hi - lo) * static_cast<float>((s >> 11) * (1.0 / 9007199254740992.0));
  }
  return v;
}

}  // namespace attn::testing
