#pragma once
// SHA-256 (OpenSSL) for content keys: a cache is valid only for the exact bytes it was made from.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX

namespace attn::data {

using Sha256Digest = std::array<std::uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  Sha256& update(std::string_view bytes);
  Sha256Digest finish();  // the hasher cannot be updated afterwards

 private:
  evp_md_ctx_st* context_;
};

Sha256Digest sha256(std::string_view bytes);
std::string to_hex(const Sha256Digest& digest);

}  // namespace attn::data
