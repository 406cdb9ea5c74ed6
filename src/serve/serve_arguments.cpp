#include "serve/serve_arguments.h"

#include <fstream>

#include "core/error.h"
#include "serve/api_keys.h"

namespace attn::serve {

void attach_shortlist(std::vector<ModelSpec>& models, const std::string& given) {
  const auto equals = given.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == given.size())
    throw Error("--shortlist " + given + ": give SRC-TGT=FILE (e.g. en-es=runs/en-es/shortlist.txt)");
  const std::string id = given.substr(0, equals);
  std::string served;
  bool found = false;
  for (auto& m : models) {
    served += (served.empty() ? "" : ", ") + m.id();
    if (m.id() == id) m.shortlist = given.substr(equals + 1), found = true;
  }
  if (!found) throw Error("--shortlist " + given + ": no model " + id + " is served (served: " + served + ")");
}

ServeOptions serve_options(const ServeArguments& arguments) {
  ServeOptions o = arguments.options;
  for (const std::string& m : arguments.models) {
    o.models.push_back(parse_model_spec(m));
    resolve_languages(o.models.back());
    o.models.back().precision = arguments.precision;
  }
  for (const std::string& given : arguments.shortlists) attach_shortlist(o.models, given);
  for (auto& m : o.models) m.shortlist_k = arguments.shortlist_k;
  if (!arguments.api_key.empty()) o.api_keys.push_back(arguments.api_key);
  if (!arguments.api_key_file.empty())
    for (auto& k : read_api_keys(arguments.api_key_file)) o.api_keys.push_back(k);
  if (!o.page_file.empty() && !std::ifstream(o.page_file)) throw_in(o.page_file, "cannot open");
  return o;
}

}  // namespace attn::serve
