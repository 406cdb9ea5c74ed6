#pragma once
// The fixed ids of the special tokens. They are part of the model file format: every vocabulary
// attn trains puts them here, and the model relies on them (padding is ignored, BOS starts the
// target, EOS ends both sides).
#include <cstdint>

namespace attn {

inline constexpr std::int32_t kPadId = 0;
inline constexpr std::int32_t kUnkId = 1;
inline constexpr std::int32_t kBosId = 2;
inline constexpr std::int32_t kEosId = 3;

}  // namespace attn
