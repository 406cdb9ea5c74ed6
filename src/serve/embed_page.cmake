# Writes OUT, a C++ file defining attn::serve::web_page() as the contents of IN (a raw string).
file(READ "${IN}" page)
string(FIND "${page}" ")attnpage\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw string's end marker )attnpage\"")
endif()
file(WRITE "${OUT}.tmp" "// Generated from ${IN} by embed_page.cmake: do not edit.\n#include \"serve/web_page.h\"\n\nnamespace attn::serve {\n\nstd::string_view web_page() {\n  static constexpr char page[] = R\"attnpage(${page})attnpage\";\n  return {page, sizeof page - 1};\n}\n\n}  // namespace attn::serve\n")
file(RENAME "${OUT}.tmp" "${OUT}")
