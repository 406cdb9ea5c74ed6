#include "data/token_cache.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>

#include "core/atomic_file.h"

namespace attn::data {
namespace {

constexpr std::string_view kMagic{"attn-tokens-v1\n\0", 16};
constexpr std::size_t kDigestSize = sizeof(Sha256Digest);

template <typename T>
void put(std::string& out, const T& value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

template <typename T>
void put_array(std::string& out, const std::vector<T>& values) {
  out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

void put_lines(std::string& out, const TokenizedLines& lines) {
  put(out, static_cast<std::uint64_t>(lines.size()));
  put(out, static_cast<std::uint64_t>(lines.tokens.size()));
  for (std::size_t i = 0; i < lines.size(); ++i) put(out, static_cast<std::uint32_t>(lines.length(i)));
  put_array(out, lines.tokens);
}

// Reads fixed-size values from the cache bytes; every read is bounds-checked, and the first
// problem is kept as the reason the cache is not used.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  bool fail(std::string why) {
    if (problem_.empty()) problem_ = std::move(why);
    return false;
  }
  const std::string& problem() const { return problem_; }
  bool at_end() const { return position_ == bytes_.size(); }

  template <typename T>
  bool get(T& value) {
    if (!take(sizeof value)) return false;
    std::memcpy(&value, bytes_.data() + position_ - sizeof value, sizeof value);
    return true;
  }

  bool get_lines(TokenizedLines& lines, std::int32_t vocab_size) {
    std::uint64_t line_count = 0, token_count = 0;
    if (!get(line_count) || !get(token_count)) return false;
    // Counts are checked against the bytes left before anything is allocated for them.
    if (line_count > remaining() / sizeof(std::uint32_t) || token_count > remaining() / sizeof(std::int32_t)) {
      return fail("truncated");
    }
    lines.offsets.assign(1, 0);
    lines.offsets.reserve(line_count + 1);
    for (std::uint64_t i = 0; i < line_count; ++i) {
      std::uint32_t length = 0;
      get(length);
      lines.offsets.push_back(lines.offsets.back() + length);
    }
    if (lines.offsets.back() != token_count) return fail("line lengths do not add up to the token count");
    if (!take(token_count * sizeof(std::int32_t))) return false;
    lines.tokens.resize(token_count);
    if (token_count > 0) {  // memcpy wants valid pointers even for no bytes; no tokens, no data()
      std::memcpy(lines.tokens.data(), bytes_.data() + position_ - token_count * sizeof(std::int32_t),
                  token_count * sizeof(std::int32_t));
    }
    for (const auto id : lines.tokens) {
      if (id < 0 || id >= vocab_size) return fail("token id " + std::to_string(id) + " outside the vocabulary");
    }
    return true;
  }

 private:
  std::size_t remaining() const { return bytes_.size() - position_; }
  bool take(std::size_t n) {
    if (n > remaining()) return fail("truncated");
    position_ += n;
    return true;
  }

  std::string_view bytes_;
  std::size_t position_ = 0;
  std::string problem_;
};

}  // namespace

TokenCacheLookup read_token_cache(const std::filesystem::path& path, const Sha256Digest& key, std::int32_t vocab_size) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {std::nullopt, "missing"};
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string bytes = std::move(buffer).str();
  if (in.bad()) return {std::nullopt, "unreadable"};

  if (bytes.size() < kMagic.size() + 2 * kDigestSize || std::string_view(bytes).substr(0, kMagic.size()) != kMagic) {
    return {std::nullopt, "not a token cache"};
  }
  const std::string_view body(bytes.data(), bytes.size() - kDigestSize);
  const Sha256Digest checksum = sha256(body);
  if (std::memcmp(checksum.data(), bytes.data() + body.size(), kDigestSize) != 0) {
    return {std::nullopt, "damaged (checksum mismatch)"};
  }
  Reader reader(body.substr(kMagic.size()));
  Sha256Digest stored_key{};
  reader.get(stored_key);
  if (stored_key != key) return {std::nullopt, "made for other inputs"};

  TokenizedPairs pairs;
  if (reader.get_lines(pairs.source, vocab_size) && reader.get_lines(pairs.target, vocab_size)) {
    if (!reader.at_end()) reader.fail("trailing bytes");
  }
  if (!reader.problem().empty()) return {std::nullopt, "damaged (" + reader.problem() + ")"};
  return {std::move(pairs), {}};
}

void write_token_cache(const std::filesystem::path& path, const Sha256Digest& key, const TokenizedPairs& pairs) {
  std::string bytes(kMagic);
  bytes.append(reinterpret_cast<const char*>(key.data()), key.size());
  put_lines(bytes, pairs.source);
  put_lines(bytes, pairs.target);
  const Sha256Digest checksum = sha256(bytes);
  bytes.append(reinterpret_cast<const char*>(checksum.data()), checksum.size());
  write_file_atomic(path, bytes);
}

}  // namespace attn::data
