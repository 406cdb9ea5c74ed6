#pragma once
// A SentencePiece vocabulary as attn uses it (a model folder's vocab.model, or `attn vocab`'s
// output): text to ids or pieces and back. Ids 0-3 are <pad>, <unk>, <s> and </s>
// (docs/model-format.md); encode never returns them. Const and thread-safe once loaded.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attn/error.h"

namespace attn {

class Vocabulary {
 public:
  // Throws Error (not_found) if the file is missing, or naming the file if it is not a SentencePiece
  // model with attn's special ids.
  explicit Vocabulary(const std::string& path);
  ~Vocabulary();
  Vocabulary(Vocabulary&&) noexcept;
  Vocabulary& operator=(Vocabulary&&) noexcept;

  int size() const;
  std::vector<std::int32_t> encode(const std::string& text) const;  // without </s>
  std::vector<std::string> pieces(const std::string& text) const;
  std::string decode(const std::vector<std::int32_t>& ids) const;  // <pad>, <s>, </s> skipped
  std::string decode_pieces(const std::vector<std::string>& pieces) const;
  const std::string& piece(std::int32_t id) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attn
