#pragma once
// Faults a test can ask a process for, to reach an error path that a correct run never takes (the
// weights of two ranks drifting apart, say): ATTN_TEST_FAULTS="name[,name...]" in its environment.
// Never set outside tests; each place that reads one says what it breaks.
#include <string_view>

namespace attn {

// Whether the environment asks for the fault `name` (read once per process).
bool test_fault(std::string_view name);

}  // namespace attn
