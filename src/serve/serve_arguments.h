#pragma once
// What `attn serve` is told in the command's words (the models as "SRC-TGT=DIR" or "DIR", the
// shortlists as "SRC-TGT=FILE", the API keys given and in a file), turned into ServeOptions.
// The option names in its errors are the command's.
#include <string>
#include <vector>

#include "decode/shortlist.h"
#include "serve/serve_options.h"

namespace attn::serve {

struct ServeArguments {
  ServeOptions options;             // everything else; its models and API keys are added to
  std::vector<std::string> models;  // "SRC-TGT=DIR" or "DIR" (parse_model_spec)
  std::string precision;            // of every model (load_model_directory's; "" as the file is)
  std::string api_key, api_key_file;
  std::vector<std::string> shortlists;   // "SRC-TGT=FILE"
  int shortlist_k = kDefaultShortlistK;  // of every model
};

// Gives the model `given` ("SRC-TGT=FILE") names the shortlist FILE. Throws Error on another form,
// or naming the models served when none is SRC-TGT.
void attach_shortlist(std::vector<ModelSpec>& models, const std::string& given);

// The options with the models (languages resolved, in the order given), their shortlists and
// the API keys (--api-key first, then the file's). Throws Error naming what is wrong, including
// a page file (--page) that cannot be opened.
ServeOptions serve_options(const ServeArguments& arguments);

}  // namespace attn::serve
