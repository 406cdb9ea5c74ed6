#include "train/train_log.h"

#include <fstream>
#include <string>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/text_file.h"

namespace attn {
namespace {

template <typename T>
void read_number(const nlohmann::json& j, const char* key, T& field) {
  if (const auto it = j.find(key); it != j.end() && it->is_number()) field = it->get<T>();
}

template <typename T>
void read_number(const nlohmann::json& j, const char* key, std::optional<T>& field) {
  if (const auto it = j.find(key); it != j.end() && it->is_number()) field = it->get<T>();
}

}  // namespace

void to_json(nlohmann::json& j, const TrainRecord& r) {
  j = {{"type", "train"},
       {"step", r.step},
       {"epoch", r.epoch},
       {"loss", r.loss},
       {"ppl", r.ppl},
       {"lr", r.lr},
       {"tokens_per_second", r.tokens_per_second},
       {"target_tokens", r.target_tokens},
       {"elapsed_seconds", r.elapsed_seconds}};
  if (r.lr_decay_end) j["lr_decay_end"] = *r.lr_decay_end;
  if (r.ranks) j["ranks"] = *r.ranks;
  if (r.allreduce_seconds) j["allreduce_seconds"] = *r.allreduce_seconds;
  if (r.communication_seconds) j["communication_seconds"] = *r.communication_seconds;
  if (r.waiting_seconds) j["waiting_seconds"] = *r.waiting_seconds;
}

void to_json(nlohmann::json& j, const ValidRecord& r) {
  j = {{"type", "valid"},
       {"step", r.step},
       {"loss", r.loss},
       {"cross_entropy", r.cross_entropy},
       {"ppl", r.ppl},
       {"tokens", r.tokens},
       {"seconds", r.seconds},
       {"best", r.best},
       {"elapsed_seconds", r.elapsed_seconds}};
  if (r.bleu) j["bleu"] = *r.bleu;
  if (r.chrf) j["chrf"] = *r.chrf;
  if (r.translated) j["translated"] = *r.translated;
  if (r.ema_decay) j["ema_decay"] = *r.ema_decay;
}

nlohmann::json record_json(const TrainLogRecord& record) {
  return std::visit([](const auto& r) { return nlohmann::json(r); }, record);
}

void from_json(const nlohmann::json& j, TrainRecord& r) {
  r = TrainRecord{};
  read_number(j, "step", r.step);
  read_number(j, "epoch", r.epoch);
  read_number(j, "loss", r.loss);
  read_number(j, "ppl", r.ppl);
  read_number(j, "lr", r.lr);
  read_number(j, "tokens_per_second", r.tokens_per_second);
  read_number(j, "target_tokens", r.target_tokens);
  read_number(j, "elapsed_seconds", r.elapsed_seconds);
  read_number(j, "lr_decay_end", r.lr_decay_end);
  read_number(j, "ranks", r.ranks);
  read_number(j, "allreduce_seconds", r.allreduce_seconds);
  read_number(j, "communication_seconds", r.communication_seconds);
  read_number(j, "waiting_seconds", r.waiting_seconds);
}

void from_json(const nlohmann::json& j, ValidRecord& r) {
  r = ValidRecord{};
  read_number(j, "step", r.step);
  read_number(j, "loss", r.loss);
  read_number(j, "cross_entropy", r.cross_entropy);
  read_number(j, "ppl", r.ppl);
  read_number(j, "tokens", r.tokens);
  read_number(j, "seconds", r.seconds);
  read_number(j, "bleu", r.bleu);
  read_number(j, "chrf", r.chrf);
  read_number(j, "translated", r.translated);
  if (const auto it = j.find("best"); it != j.end() && it->is_boolean()) r.best = it->get<bool>();
  read_number(j, "ema_decay", r.ema_decay);
  read_number(j, "elapsed_seconds", r.elapsed_seconds);
}

void truncate_training_log(const std::filesystem::path& path, std::int64_t step) {
  if (!std::filesystem::exists(path)) return;
  std::ifstream in(path);
  std::string line, kept;
  while (std::getline(in, line)) {
    try {
      if (nlohmann::json::parse(line).value("step", std::int64_t{0}) > step) continue;
    } catch (const nlohmann::json::exception&) {
      continue;  // a record torn by the kill
    }
    kept += line + "\n";
  }
  write_file_atomic(path, kept);
}

TrainingLog read_training_log(const std::filesystem::path& path) {
  TrainingLog log;
  const std::vector<std::string> lines = read_text_lines(path);
  // A run killed while writing a record leaves its last line without an end: that line alone may
  // be torn.
  bool ends_with_newline = true;
  if (std::ifstream in(path, std::ios::binary | std::ios::ate); in && in.tellg() > 0) {
    in.seekg(-1, std::ios::end);
    ends_with_newline = in.get() == '\n';
  }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    const auto j = nlohmann::json::parse(lines[i], nullptr, false);
    if (j.is_discarded() && i + 1 == lines.size() && !ends_with_newline) {
      log.torn_last_line = true;
      continue;
    }
    if (j.is_discarded() || !j.is_object())
      throw_at(path.string(), i + 1, "not a JSON object (train.jsonl holds one record per line)");
    const std::string type = j.contains("type") && j["type"].is_string() ? j["type"].get<std::string>() : "";
    if (type != "train" && type != "valid") throw_at(path.string(), i + 1, "\"type\" must be \"train\" or \"valid\"");
    const std::vector<const char*> keys =
        type == "train" ? std::vector<const char*>{"step", "loss", "tokens_per_second", "elapsed_seconds"}
                        : std::vector<const char*>{"step", "cross_entropy"};
    for (const char* key : keys)
      if (!j.contains(key) || !j[key].is_number())
        throw_at(path.string(), i + 1, std::string("\"") + key + "\" must be a number");
    for (const char* key : {"bleu", "epoch", "target_tokens"})
      if (j.contains(key) && !j[key].is_number())
        throw_at(path.string(), i + 1, std::string("\"") + key + "\" must be a number");
    if (type == "valid")
      log.valid.push_back(j.get<ValidRecord>());
    else
      log.train.push_back(j.get<TrainRecord>());
  }
  return log;
}

}  // namespace attn
