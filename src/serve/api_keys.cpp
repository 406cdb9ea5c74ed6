#include "serve/api_keys.h"

#include <fstream>

#include "core/error.h"
#include "core/text_file.h"

namespace attn::serve {

std::vector<std::string> read_api_keys(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw_in(file, "cannot open");
  std::vector<std::string> keys;
  std::string line;
  while (read_line(in, line)) {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (!line.empty() && line[0] != '#') keys.push_back(line);
  }
  if (keys.empty()) throw_in(file, "holds no API key (one key per line)");
  return keys;
}

}  // namespace attn::serve
