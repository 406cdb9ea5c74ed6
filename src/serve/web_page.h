#pragma once
// The page served at GET /: src/serve/web/index.html (HTML, CSS and script in one file, nothing
// fetched from elsewhere), built into the binary (web_page.cpp is generated from it).
#include <string_view>

namespace attn::serve {

std::string_view web_page();

}  // namespace attn::serve
