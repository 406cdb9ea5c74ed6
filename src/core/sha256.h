#pragma once
// SHA-256 (OpenSSL) over one or more byte ranges, as lowercase hex.
#include <string>
#include <string_view>
#include <vector>

namespace attn {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, std::size_t bytes);
  std::string hex();  // finishes the digest

 private:
  void* ctx_;
};

inline std::string sha256_hex(std::string_view bytes) {
  Sha256 h;
  h.update(bytes.data(), bytes.size());
  return h.hex();
}

}  // namespace attn
