#include "core/text_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/utf8.h"

namespace attn {

bool read_line(std::istream& in, std::string& line) {
  if (!std::getline(in, line)) return false;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

std::vector<std::string> read_text_lines(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_in(path.string(), std::string("cannot open: ") + std::strerror(errno));
  std::vector<std::string> lines;
  std::string line;
  while (read_line(in, line)) {
    if (auto bad = find_invalid_utf8(line)) {
      throw_at(path.string(), lines.size() + 1, "invalid UTF-8 at byte " + std::to_string(*bad + 1) + " of the line");
    }
    lines.push_back(std::move(line));
  }
  if (in.bad()) throw_in(path.string(), "read error");
  return lines;
}

std::string read_file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_in(path.string(), std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) throw_in(path.string(), "read error");
  return std::move(bytes).str();
}

}  // namespace attn
