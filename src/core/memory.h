#pragma once
// This machine's physical memory, to refuse sizes that cannot fit before allocating them.
#include <unistd.h>

namespace attn {

inline double physical_memory_bytes() {
  return static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

}  // namespace attn
