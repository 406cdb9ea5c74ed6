#pragma once
#include <cstddef>
#include <optional>
#include <string_view>

namespace attn {

// Returns the byte offset of the first invalid UTF-8 sequence (overlong forms, surrogates and
// code points above U+10FFFF are invalid), or nullopt if the whole text is valid.
std::optional<std::size_t> find_invalid_utf8(std::string_view text);

}  // namespace attn
