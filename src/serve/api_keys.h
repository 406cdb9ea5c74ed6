#pragma once
// `attn serve --api-key-file`: the keys a request may carry, one per line.
#include <string>
#include <vector>

namespace attn::serve {

// The file's keys in order: trailing spaces dropped, empty lines and lines starting with '#'
// skipped. Throws Error naming the file if it cannot be opened or holds no key.
std::vector<std::string> read_api_keys(const std::string& file);

}  // namespace attn::serve
