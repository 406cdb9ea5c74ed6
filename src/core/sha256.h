#pragma once
// SHA-256 (OpenSSL) for content keys: a cache is valid only for the exact bytes it was made from.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX

namespace attn {

using Sha256Digest = std::array<std::uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  Sha256& update(std::string_view bytes);
  Sha256& update(const void* data, std::size_t bytes) {
    return update(std::string_view(static_cast<const char*>(data), bytes));
  }
  Sha256Digest finish();  // the hasher cannot be updated afterwards

 private:
  evp_md_ctx_st* context_;
};

Sha256Digest sha256(std::string_view bytes);
std::string to_hex(const Sha256Digest& digest);
inline std::string sha256_hex(std::string_view bytes) { return to_hex(sha256(bytes)); }

}  // namespace attn
