#pragma once
// Software prefetch of short rows far apart: attention's per-(sentence, head) blocks in training and
// a decoding step's cached keys and values are rows of 128-256 bytes, 1.5-3 KB apart and few in a
// row, too few for the hardware's prefetchers, which then leave every row to wait on memory in turn.
#include <cstdint>

namespace attn::cpu {

// Asks for the cache lines of `rows` rows of `row_bytes` bytes, `stride` bytes apart, to be
// fetched (for writing where `write`) while the thread computes on what it has. (Inlined by
// force: GCC finds a function whose only effect is a prefetch free of side effects and drops the
// calls to it.)
[[gnu::always_inline]] inline void prefetch_rows(const void* at, int rows, std::int64_t stride, std::int64_t row_bytes,
                                                 bool write) {
  const char* p = static_cast<const char*>(at);
  for (int r = 0; r < rows; ++r, p += stride)
    for (std::int64_t b = 0; b < row_bytes; b += 64) {
      if (write)
        __builtin_prefetch(p + b, 1, 3);
      else
        __builtin_prefetch(p + b, 0, 3);
    }
}

// Asks for `bytes` from `at` on to be brought into L2 (not L1): a prefetch into L1 holds one of
// the core's few L1 miss buffers until its line arrives, so that many short rows asked for at
// once wait on each other there, while L2 keeps more misses in flight. For a decoding step's cached
// keys and values (hundreds of lines a task, scattered) into L1 gained nothing, into L2 1.2-2.3x
// (AMD Zen 4); training's attention blocks ask for fewer lines at a time, into L1 (prefetch_rows;
// into L2 the step took the same time, 6 interleaved pairs).
[[gnu::always_inline]] inline void prefetch_to_l2(const void* at, std::int64_t bytes) {
  const char* p = static_cast<const char*>(at);
  for (std::int64_t b = 0; b < bytes; b += 64) __builtin_prefetch(p + b, 0, 2);
}

}  // namespace attn::cpu
