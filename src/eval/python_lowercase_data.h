#pragma once
// Unicode tables behind python_lower(), generated from Python by generate_python_lowercase_data.py.
#include <cstdint>
#include <span>

namespace attn::eval {

// Code points first, first + stride, ..., last lowercase to code point + delta.
struct LowercaseRun {
  char32_t first;
  char32_t last;
  std::uint8_t stride;
  std::int32_t delta;
};

struct CodePointRange {
  char32_t first;
  char32_t last;
};

// The Unicode version of the Python the tables were read from.
const char* python_lowercase_unicode_version();

// Sorted by `first`. U+0130 (lowercases to two code points) is not in it.
std::span<const LowercaseRun> python_lowercase_runs();

// The two properties Python's Final_Sigma rule looks at, as sorted ranges.
std::span<const CodePointRange> python_case_ignorable_ranges();
std::span<const CodePointRange> python_cased_not_ignorable_ranges();

}  // namespace attn::eval
