#include "serve/file_store.h"

#include <openssl/rand.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>

#include "core/atomic_file.h"
#include "core/error.h"

namespace attn::serve {

namespace fs = std::filesystem;

namespace {

std::string random_hex(std::size_t bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes)) != 1)
    throw Error("cannot draw random bytes for a file name");
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) out += digits[c >> 4], out += digits[c & 15];
  return out;
}

// A name this store made: 32 hex digits, a dot, then letters, digits, '.', '_' or '-'.
bool made_here(const std::string& name) {
  if (name.size() < 34 || name[32] != '.' || name.find("..") != std::string::npos) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    const bool safe = hex || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '.' || c == '_' || c == '-';
    if (i < 32 ? !hex : !safe) return false;
  }
  return true;
}

}  // namespace

FileStore::FileStore(const fs::path& dir, double keep_seconds) : dir_(dir), keep_seconds_(keep_seconds) {
  if (dir_.empty()) {
    std::string pattern = (fs::temp_directory_path() / "attn-serve-files-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw Error("cannot make a folder for translated files in " + pattern);
    dir_ = pattern;
    owned_ = true;
  } else {
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (!fs::is_directory(dir_)) throw Error(dir_.string() + ": cannot make the folder for translated files");
  }
}

FileStore::~FileStore() {
  std::error_code ec;
  if (owned_) {
    fs::remove_all(dir_, ec);
    return;
  }
  for (const auto& e : fs::directory_iterator(dir_, ec))
    if (made_here(e.path().filename().string())) fs::remove(e.path(), ec);
}

std::string FileStore::safe_name(const std::string& original) {
  if (original.empty()) throw Error("the file has no name");
  if (original.find('/') != std::string::npos || original.find('\\') != std::string::npos ||
      original.find("..") != std::string::npos || original.find('\0') != std::string::npos)
    throw Error("the file name '" + original + "' has a path in it: give the file's name alone");
  std::string out;
  for (unsigned char c : original) {
    const bool safe =
        (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '.' || c == '_' || c == '-';
    out += safe ? static_cast<char>(c) : '_';
  }
  while (!out.empty() && out.front() == '.') out.erase(out.begin());
  if (out.empty() || out.size() > 200) out = "file" + (out.empty() ? std::string() : out.substr(out.size() - 20));
  return out;
}

std::string FileStore::put(const std::string& bytes, const std::string& original_name) {
  const std::string name = random_hex(16) + "." + safe_name(original_name);
  const std::lock_guard<std::mutex> lock(mutex_);
  remove_expired();
  write_file_atomic(dir_ / name, bytes);
  return name;
}

std::optional<std::string> FileStore::get(const std::string& name) {
  if (!made_here(name)) return std::nullopt;
  const std::lock_guard<std::mutex> lock(mutex_);
  remove_expired();
  std::ifstream in(dir_ / name, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void FileStore::remove_expired() {
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    if (!made_here(e.path().filename().string())) continue;
    const auto age = std::chrono::duration<double>(now - e.last_write_time(ec)).count();
    if (!ec && age > keep_seconds_) fs::remove(e.path(), ec);
  }
}

}  // namespace attn::serve
