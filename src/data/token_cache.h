#pragma once
// A binary cache of a tokenised parallel corpus, so that tokenisation runs once per vocabulary
// and text. The file carries the key it was made for (a hash of the vocabulary model and of the
// text) and a checksum of its contents; a file for another key or a damaged file is not used.
//
// Format (little-endian; written and read on the same kind of machine):
//   "attn-tokens-v1\n\0"     16 bytes
//   key                      32 bytes
//   for source, then target: u64 line count n, u64 token count m, u32 length[n], i32 token[m]
//   SHA-256 of everything above, 32 bytes
#include <filesystem>
#include <optional>
#include <string>

#include "core/sha256.h"
#include "data/tokenized_lines.h"

namespace attn::data {

struct TokenizedPairs {
  TokenizedLines source;
  TokenizedLines target;
};

struct TokenCacheLookup {
  std::optional<TokenizedPairs> pairs;  // set when the cache holds the tokens for this key
  std::string why_not;                  // otherwise: "missing", "made for other inputs", or the damage found
};

// Reads the cache at `path` if it is intact, made for `key`, and every id is in [0, vocab_size).
TokenCacheLookup read_token_cache(const std::filesystem::path& path, const Sha256Digest& key, std::int32_t vocab_size);

// Writes the cache atomically.
void write_token_cache(const std::filesystem::path& path, const Sha256Digest& key, const TokenizedPairs& pairs);

}  // namespace attn::data
