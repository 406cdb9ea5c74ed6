#pragma once
// LibreTranslate's GET endpoints, from the models served: /languages and /frontend/settings.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/serve_options.h"

namespace attn::serve {

// English names of common codes, for /languages and LibreTranslate's messages; other codes name
// themselves.
std::string language_name(const std::string& code);

// GET /languages: every code a model reads or writes (sorted), with the codes it translates into
// (sorted; none for a code that is only written).
nlohmann::json languages_reply(const std::vector<ModelSpec>& specs);

// GET /frontend/settings: what LibreTranslate's own page asks first; clients built on it read the
// limits from here. The first model's languages are the page's default pair.
nlohmann::json frontend_settings_reply(const std::vector<ModelSpec>& specs, const Limits& limits, bool keys_required);

}  // namespace attn::serve
