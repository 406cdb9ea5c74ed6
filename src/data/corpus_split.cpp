#include "data/corpus_split.h"

#include <openssl/evp.h>

#include "core/error.h"

namespace attn::data {

std::uint32_t split_hash(std::string_view osis_id) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_size = 0;
  if (EVP_Digest(osis_id.data(), osis_id.size(), digest, &digest_size, EVP_sha1(), nullptr) != 1 || digest_size < 4) {
    throw Error("OpenSSL could not compute a SHA-1 digest");
  }
  return (std::uint32_t{digest[0]} << 24) | (std::uint32_t{digest[1]} << 16) | (std::uint32_t{digest[2]} << 8) |
         std::uint32_t{digest[3]};
}

CorpusSplit split_of_verse(std::string_view osis_id) {
  switch (split_hash(osis_id) % 30) {
    case 0:
      return CorpusSplit::test;
    case 1:
      return CorpusSplit::dev;
    default:
      return CorpusSplit::train;
  }
}

std::string_view split_name(CorpusSplit split) {
  switch (split) {
    case CorpusSplit::train:
      return "train";
    case CorpusSplit::dev:
      return "dev";
    case CorpusSplit::test:
      return "test";
  }
  return "train";
}

}  // namespace attn::data
