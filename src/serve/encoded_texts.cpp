#include "serve/encoded_texts.h"

#include "data/vocabulary.h"
#include "serve/request_fields.h"

namespace attn::serve {

EncodedTexts encode_texts(const LoadedModel& model, const std::vector<std::string>& texts, bool crop) {
  const int max_tokens = model.model->config().max_positions - 1;
  EncodedTexts s;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    auto ids = model.vocabulary->encode(texts[i]);
    s.tokens.push_back(static_cast<int>(ids.size()));
    s.cropped.push_back(static_cast<int>(ids.size()) > max_tokens);
    if (s.cropped.back()) {
      if (!crop)
        invalid_request("text " + std::to_string(i + 1) + " is " + std::to_string(ids.size()) +
                        " tokens long; the model reads at most " + std::to_string(max_tokens));
      ids.resize(static_cast<std::size_t>(max_tokens));
    }
    s.ids.push_back(std::move(ids));
  }
  return s;
}

}  // namespace attn::serve
