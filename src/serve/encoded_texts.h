#pragma once
// A request's texts as the model reads them: pieces of its vocabulary, within its longest sequence.
#include <cstdint>
#include <string>
#include <vector>

#include "decode/model_directory.h"

namespace attn::serve {

struct EncodedTexts {
  std::vector<std::vector<std::int32_t>> ids;  // without EOS
  std::vector<int> tokens;                     // before cropping
  std::vector<bool> cropped;
};

// Texts longer than the model reads (max_positions - 1 tokens, EOS being the last position) are
// cropped to it with `crop`, refused with ApiError 400 naming the text (from 1) otherwise.
EncodedTexts encode_texts(const LoadedModel& model, const std::vector<std::string>& texts, bool crop);

}  // namespace attn::serve
