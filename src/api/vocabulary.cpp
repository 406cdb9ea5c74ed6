// The public Vocabulary (include/attn/vocabulary.h) over data::Vocabulary.
#include "attn/vocabulary.h"

#include <filesystem>

#include "api/argument_errors.h"
#include "core/utf8.h"
#include "data/vocabulary.h"

namespace attn {
namespace {

using api::as_argument_error;

void check_utf8(const std::string& text) {
  if (auto bad = find_invalid_utf8(text)) api::invalid("invalid UTF-8 at byte " + std::to_string(*bad + 1));
}

}  // namespace

struct Vocabulary::Impl {
  data::Vocabulary vocabulary;
};

Vocabulary::Vocabulary(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) throw Error(path + ": no such file", ErrorKind::not_found);
  impl_ = std::make_unique<Impl>(Impl{data::Vocabulary::load(path)});
}

Vocabulary::~Vocabulary() = default;
Vocabulary::Vocabulary(Vocabulary&&) noexcept = default;
Vocabulary& Vocabulary::operator=(Vocabulary&&) noexcept = default;

int Vocabulary::size() const { return impl_->vocabulary.size(); }

std::vector<std::int32_t> Vocabulary::encode(const std::string& text) const {
  check_utf8(text);
  return impl_->vocabulary.encode(text);
}

std::vector<std::string> Vocabulary::pieces(const std::string& text) const {
  check_utf8(text);
  return impl_->vocabulary.encode_pieces(text);
}

std::string Vocabulary::decode(const std::vector<std::int32_t>& ids) const {
  return as_argument_error([&] { return impl_->vocabulary.decode(ids); });
}

std::string Vocabulary::decode_pieces(const std::vector<std::string>& pieces) const {
  return as_argument_error([&] { return impl_->vocabulary.decode_pieces(pieces); });
}

const std::string& Vocabulary::piece(std::int32_t id) const {
  return as_argument_error([&]() -> const std::string& { return impl_->vocabulary.piece(id); });
}

}  // namespace attn
