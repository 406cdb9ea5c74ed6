#include "serve/serve_options.h"

#include "core/error.h"

namespace attn::serve {

ModelSpec parse_model_spec(const std::string& text) {
  const std::string form = "--model " + text + ": give SRC-TGT=DIR, e.g. en-es=runs/en-es/model";
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals + 1 == text.size()) throw Error(form);
  const std::string pair = text.substr(0, equals);
  const auto dash = pair.find('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == pair.size() ||
      pair.find('-', dash + 1) != std::string::npos)
    throw Error(form);
  ModelSpec spec{pair.substr(0, dash), pair.substr(dash + 1), text.substr(equals + 1), ""};
  for (const std::string* code : {&spec.source, &spec.target})
    for (char c : *code)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
        throw Error("--model " + text + ": a language code is letters, digits or _ (got \"" + *code + "\")");
  return spec;
}

}  // namespace attn::serve
