#pragma once
// The one escaper of markup that attn writes: SVG pictures and charts (inspect/), and the text of
// HTML and XML documents (document/).
#include <string>
#include <string_view>

namespace attn {

// & < > as entities, and with `quotes` " ' too (safe in attribute values as well as text);
// everything else (UTF-8 included) unchanged.
std::string xml_escape(std::string_view text, bool quotes = true);

}  // namespace attn
