#include "data/vocabulary.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/text_file.h"

namespace attn::data {
namespace {

struct SpecialPiece {
  std::int32_t id;
  std::string_view piece;
};
constexpr SpecialPiece kSpecialPieces[] = {
    {kPadId, kPadPiece}, {kUnkId, kUnkPiece}, {kBosId, kBosPiece}, {kEosId, kEosPiece}};

}  // namespace

Vocabulary Vocabulary::load(const std::filesystem::path& model_file) {
  return Vocabulary(read_file_bytes(model_file), model_file.string());
}

Vocabulary Vocabulary::from_bytes(std::string model_bytes, const std::string& name) {
  return Vocabulary(std::move(model_bytes), name);
}

Vocabulary::Vocabulary(std::string model_bytes, std::string name)
    : model_bytes_(std::move(model_bytes)),
      name_(std::move(name)),
      processor_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {
  if (model_bytes_.empty()) throw_in(name_, "not a SentencePiece model: the file is empty");
  const auto status = processor_->LoadFromSerializedProto(model_bytes_);
  if (!status.ok()) throw_in(name_, "not a valid SentencePiece model: " + status.ToString());
  const bool ids_as_expected = processor_->pad_id() == kPadId && processor_->unk_id() == kUnkId &&
                               processor_->bos_id() == kBosId && processor_->eos_id() == kEosId;
  if (!ids_as_expected || processor_->GetPieceSize() <= kEosId) {
    throw_in(name_, "the model's special ids are pad=" + std::to_string(processor_->pad_id()) + " unk=" +
                        std::to_string(processor_->unk_id()) + " bos=" + std::to_string(processor_->bos_id()) +
                        " eos=" + std::to_string(processor_->eos_id()) +
                        "; attn needs pad=0 unk=1 bos=2 eos=3 (train it with `attn vocab train`)");
  }
  for (const auto& special : kSpecialPieces) {
    if (processor_->IdToPiece(special.id) != special.piece) {
      throw_in(name_, "piece " + std::to_string(special.id) + " is \"" + processor_->IdToPiece(special.id) +
                          "\", expected \"" + std::string(special.piece) + "\"");
    }
  }
}

Vocabulary::Vocabulary(Vocabulary&&) noexcept = default;
Vocabulary& Vocabulary::operator=(Vocabulary&&) noexcept = default;
Vocabulary::~Vocabulary() = default;

std::vector<std::int32_t> Vocabulary::encode(std::string_view text) const {
  std::vector<int> ids;
  const auto status = processor_->Encode(text, &ids);
  if (!status.ok()) throw Error(name_ + ": cannot encode text: " + status.ToString());
  return {ids.begin(), ids.end()};
}

std::vector<std::string> Vocabulary::encode_pieces(std::string_view text) const {
  std::vector<std::string> pieces;
  const auto status = processor_->Encode(text, &pieces);
  if (!status.ok()) throw Error(name_ + ": cannot encode text: " + status.ToString());
  return pieces;
}

std::vector<std::vector<std::int32_t>> Vocabulary::encode_lines(std::span<const std::string> lines) const {
  std::vector<std::vector<std::int32_t>> result(lines.size());
  // Exceptions must not leave an OpenMP region: note the failure and report it afterwards.
  std::atomic<bool> failed{false};
  const auto n = static_cast<std::int64_t>(lines.size());
#pragma omp parallel for schedule(dynamic, 256)
  for (std::int64_t i = 0; i < n; ++i) {
    std::vector<int> ids;
    if (processor_->Encode(lines[i], &ids).ok()) {
      result[i].assign(ids.begin(), ids.end());
    } else {
      failed = true;
    }
  }
  if (failed) {
    for (const auto& line : lines) encode(line);  // throws the first failure's message
  }
  return result;
}

std::string Vocabulary::decode(std::span<const std::int32_t> ids) const {
  std::vector<int> kept;
  kept.reserve(ids.size());
  for (const std::int32_t id : ids) {
    check_id(id);
    if (id != kPadId && id != kBosId && id != kEosId) kept.push_back(id);
  }
  std::string text;
  const auto status = processor_->Decode(kept, &text);
  if (!status.ok()) throw Error(name_ + ": cannot decode ids: " + status.ToString());
  return text;
}

std::string Vocabulary::decode_line(std::span<const std::int32_t> ids) const {
  std::string text = decode(ids);
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  return text;
}

std::string Vocabulary::decode_pieces(std::span<const std::string> pieces) const {
  std::vector<std::int32_t> ids;
  ids.reserve(pieces.size());
  for (const auto& piece : pieces) {
    const std::int32_t id = piece_id(piece);
    if (id == kUnkId && piece != kUnkPiece) throw Error(name_ + ": \"" + piece + "\" is not a piece of the vocabulary");
    ids.push_back(id);
  }
  return decode(ids);
}

std::int32_t Vocabulary::size() const { return processor_->GetPieceSize(); }

const std::string& Vocabulary::piece(std::int32_t id) const {
  check_id(id);
  return processor_->IdToPiece(id);
}

std::int32_t Vocabulary::piece_id(std::string_view piece) const { return processor_->PieceToId(piece); }

bool Vocabulary::is_byte(std::int32_t id) const {
  check_id(id);
  return processor_->IsByte(id);
}

bool Vocabulary::is_unused(std::int32_t id) const {
  check_id(id);
  return processor_->IsUnused(id);
}

float Vocabulary::score(std::int32_t id) const {
  check_id(id);
  return processor_->GetScore(id);
}

void Vocabulary::check_id(std::int32_t id) const {
  if (id < 0 || id >= size()) {
    throw Error(name_ + ": token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                std::to_string(size()) + ")");
  }
}

}  // namespace attn::data
