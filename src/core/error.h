#pragma once
// Errors a user can act on. Every message about an input names the file, the line and the problem.
#include <cstddef>
#include <string>

#include "attn/error.h"  // class Error, part of the public API

namespace attn {

// Throws Error("path:line: problem"). Lines count from 1.
[[noreturn]] void throw_at(const std::string& path, std::size_t line, const std::string& problem);

// Throws Error("path: problem").
[[noreturn]] void throw_in(const std::string& path, const std::string& problem);

// Checks an internal invariant that a caller could break with bad arguments.
#define ATTN_CHECK(cond, msg)                                                         \
  do {                                                                                \
    if (!(cond)) throw ::attn::Error(std::string("internal check failed: ") + (msg)); \
  } while (0)

}  // namespace attn
