#include "core/error.h"

namespace attn {

void throw_at(const std::string& path, std::size_t line, const std::string& problem) {
  throw Error(path + ":" + std::to_string(line) + ": " + problem);
}

void throw_in(const std::string& path, const std::string& problem) { throw Error(path + ": " + problem); }

}  // namespace attn
