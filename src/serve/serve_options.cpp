#include "serve/serve_options.h"

#include "core/error.h"
#include "decode/model_directory.h"

namespace attn::serve {

ModelSpec parse_model_spec(const std::string& text) {
  const std::string form = "--model " + text + ": give SRC-TGT=DIR (e.g. en-es=runs/en-es/model), or DIR";
  const auto equals = text.find('=');
  if (equals == std::string::npos) {  // DIR: the languages come from the folder (resolve_languages)
    if (text.empty()) throw Error(form);
    return ModelSpec{"", "", text, "", {}, kDefaultShortlistK};
  }
  if (equals + 1 == text.size()) throw Error(form);
  const std::string pair = text.substr(0, equals);
  const auto dash = pair.find('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == pair.size() ||
      pair.find('-', dash + 1) != std::string::npos)
    throw Error(form);
  ModelSpec spec{pair.substr(0, dash), pair.substr(dash + 1), text.substr(equals + 1), "", {}, kDefaultShortlistK};
  for (const std::string* code : {&spec.source, &spec.target})
    for (char c : *code)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
        throw Error("--model " + text + ": a language code is letters, digits or _ (got \"" + *code + "\")");
  return spec;
}

void resolve_languages(ModelSpec& spec) {
  if (!spec.source.empty()) return;
  const std::string dir = spec.dir.string();
  if (!std::filesystem::is_directory(spec.dir)) throw_in(dir, "no such model folder");
  if (!std::filesystem::exists(spec.dir / "model.safetensors"))
    throw_in(dir, "not a model folder: model.safetensors is missing");
  const ModelLanguages languages = read_model_languages(spec.dir);
  if (!languages.known())
    throw Error("--model " + dir +
                ": the model folder does not record its languages (trained without --source-lang and --target-lang, "
                "or before attn recorded them): give --model SRC-TGT=" +
                dir);
  spec.source = languages.source;
  spec.target = languages.target;
}

}  // namespace attn::serve
