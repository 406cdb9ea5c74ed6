#pragma once
// Software prefetch of short rows far apart: attention's per-(sentence, head) blocks in training and
// a decoding step's cached keys and values are rows of 128-256 bytes, 1.5-3 KB apart and few in a
// row, too few for the hardware's prefetchers, which then leave every row to wait on memory in turn.
#include <cstdint>

namespace attn::cpu {

// Asks for `bytes` from `at` on to be brought into L2 (not L1): a prefetch into L1 holds one of
// the core's few L1 miss buffers until its line arrives, so that many short rows asked for at
// once wait on each other there, while L2 keeps more misses in flight. On AMD Zen 4, with the
// operands in memory: a decoding step's cached keys and values (hundreds of lines a task) gained
// nothing from prefetches into L1 and 1.2-2.3x from the same into L2; training's attention blocks
// 1.2-1.5x forward and 1.1-1.3x backward against their prefetches into L1 (gemm_bench).
[[gnu::always_inline]] inline void prefetch_to_l2(const void* at, std::int64_t bytes) {
  const char* p = static_cast<const char*>(at);
  for (std::int64_t b = 0; b < bytes; b += 64) __builtin_prefetch(p + b, 0, 2);
}

// Asks for the cache lines of `rows` rows of `row_bytes` bytes, `stride` bytes apart, to be
// fetched (for writing where `write`) while the thread computes on what it has; lines to be read
// into L2, as prefetch_to_l2 says why. (Inlined by force: GCC finds a function whose only effect is
// a prefetch free of side effects and drops the calls to it.)
[[gnu::always_inline]] inline void prefetch_rows(const void* at, int rows, std::int64_t stride, std::int64_t row_bytes,
                                                 bool write) {
  const char* p = static_cast<const char*>(at);
  for (int r = 0; r < rows; ++r, p += stride) {
    if (!write) {
      prefetch_to_l2(p, row_bytes);
      continue;
    }
    for (std::int64_t b = 0; b < row_bytes; b += 64) __builtin_prefetch(p + b, 1, 3);
  }
}

}  // namespace attn::cpu
