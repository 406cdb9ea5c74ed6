#pragma once
// Numbers as text for reports and scores: one way, exact (the decimal rounding of the double's
// exact binary value, as Python's and printf's "%.*f" give it).
#include <string>

namespace attn {

// value with exactly `decimals` digits after the point (0 to 60), e.g. format_fixed(2.5, 2) =
// "2.50", format_fixed(0.125, 2) = "0.12" (0.125 is exact: ties go to even).
std::string format_fixed(double value, int decimals);

}  // namespace attn
