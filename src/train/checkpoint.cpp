#include "train/checkpoint.h"

#include <algorithm>
#include <regex>

#include "core/error.h"
#include "core/sha256.h"
#include "model/safetensors.h"

namespace attn {
namespace {

constexpr const char* kMomentM = "optimizer.adam.m";
constexpr const char* kMomentV = "optimizer.adam.v";
constexpr const char* kAverage = "optimizer.ema";

// Verifies the data section against the checksum in the metadata; returns the file.
SafetensorsFile open_verified(const std::filesystem::path& path) {
  SafetensorsFile file(path);
  const auto& meta = file.metadata();
  auto it = meta.find("attn.sha256");
  if (it == meta.end()) throw_in(path.string(), "not an attn checkpoint (no checksum in its metadata)");
  if (sha256_hex(file.data()) != it->second)
    throw_in(path.string(), "corrupted checkpoint: the data does not match its SHA-256 checksum");
  return file;
}

CheckpointContents contents_of(const SafetensorsFile& file) {
  CheckpointContents c;
  try {
    const auto& meta = file.metadata();
    c.progress = nlohmann::json::parse(meta.at("attn.progress")).get<TrainingProgress>();
    c.options = nlohmann::json::parse(meta.at("attn.options"));
    c.model_config = nlohmann::json::parse(meta.at("attn.model_config")).get<ModelConfig>();
  } catch (const std::exception& e) {
    throw_in(file.path(), std::string("checkpoint metadata is incomplete: ") + e.what());
  }
  return c;
}

}  // namespace

void to_json(nlohmann::json& j, const TrainingProgress& p) {
  j = {{"step", p.step},
       {"epoch", p.epoch},
       {"next_batch", p.next_batch},
       {"target_tokens", p.target_tokens},
       {"elapsed_seconds", p.elapsed_seconds},
       {"best_valid_loss", p.best_valid_loss},
       {"best_step", p.best_step},
       {"validations_without_improvement", p.validations_without_improvement},
       {"ranks", p.ranks},
       {"decay_end", p.decay.end},
       {"decay_from", p.decay.from},
       {"decay_from_fraction", p.decay.from_fraction}};
}

void from_json(const nlohmann::json& j, TrainingProgress& p) {
  p.step = j.at("step");
  p.epoch = j.at("epoch");
  p.next_batch = j.at("next_batch");
  p.target_tokens = j.at("target_tokens");
  p.elapsed_seconds = j.at("elapsed_seconds");
  p.best_valid_loss = j.at("best_valid_loss");
  p.best_step = j.at("best_step");
  p.validations_without_improvement = j.at("validations_without_improvement");
  p.ranks = j.value("ranks", 1);                          // checkpoints from before distributed training
  p.decay.end = j.value("decay_end", std::int64_t{0});    // from before linear decay
  p.decay.from = j.value("decay_from", std::int64_t{0});  // from before the end was re-estimated
  p.decay.from_fraction = j.value("decay_from_fraction", 1.0);
}

void save_checkpoint(const std::filesystem::path& path, const Transformer& model, AdamOptimizer& optimizer,
                     const TrainingProgress& progress, const nlohmann::json& options) {
  const std::int64_t n = model.parameter_count();
  Backend& be = model.backend();
  const std::vector<float> params = model.parameters_to_host();
  std::vector<float> m(static_cast<std::size_t>(n)), v(static_cast<std::size_t>(n));
  be.copy_to_host(m.data(), optimizer.first_moment(), m.size() * sizeof(float));
  be.copy_to_host(v.data(), optimizer.second_moment(), v.size() * sizeof(float));
  std::vector<TensorToWrite> tensors;
  for (const auto& t : model.layout().tensors()) tensors.push_back({t.name, t.shape, params.data() + t.offset});
  tensors.push_back({kMomentM, {n}, m.data()});
  tensors.push_back({kMomentV, {n}, v.data()});
  std::vector<float> average;
  if (optimizer.has_average()) {
    average.resize(static_cast<std::size_t>(n));
    be.copy_to_host(average.data(), optimizer.average(), average.size() * sizeof(float));
    tensors.push_back({kAverage, {n}, average.data()});
  }
  // The checksum covers the data section exactly as it will be written: the tensors in order.
  Sha256 hash;
  for (const auto& t : tensors) {
    std::int64_t count = 1;
    for (auto s : t.shape) count *= s;
    hash.update(t.data, static_cast<std::size_t>(count) * sizeof(float));
  }
  nlohmann::json progress_json = progress;
  progress_json["adam_steps"] = optimizer.steps();
  const std::map<std::string, std::string> meta{{"format", "attn-checkpoint"},
                                                {"attn.progress", progress_json.dump()},
                                                {"attn.options", options.dump()},
                                                {"attn.model_config", nlohmann::json(model.config()).dump()},
                                                {"attn.sha256", to_hex(hash.finish())}};
  write_safetensors(path, tensors, meta);
}

CheckpointContents load_checkpoint(const std::filesystem::path& path, Transformer& model, AdamOptimizer* optimizer) {
  const SafetensorsFile file = open_verified(path);
  CheckpointContents c = contents_of(file);
  // sentence_tokens is a fact of the training data, recomputed at every start (a checkpoint written
  // before attn recorded it resumes too): not part of the comparison.
  ModelConfig saved = c.model_config;
  saved.sentence_tokens = model.config().sentence_tokens;
  if (nlohmann::json(saved) != nlohmann::json(model.config()))
    throw_in(path.string(),
             "checkpoint was trained with a different model configuration: " + nlohmann::json(c.model_config).dump());
  const std::int64_t n = model.parameter_count();
  std::vector<float> params(static_cast<std::size_t>(n)), m, v, average;
  for (const auto& t : model.layout().tensors()) file.read(t.name, t.shape, params.data() + t.offset);
  if (optimizer) {
    m.resize(static_cast<std::size_t>(n));
    v.resize(static_cast<std::size_t>(n));
    file.read(kMomentM, {n}, m.data());
    file.read(kMomentV, {n}, v.data());
    c.had_average = file.entries().count(kAverage) > 0;
    if (optimizer->has_average() && c.had_average) {
      average.resize(static_cast<std::size_t>(n));
      file.read(kAverage, {n}, average.data());
    }
  }
  // Everything was read and checked: only now change the model and optimizer.
  model.set_parameters(params);
  if (optimizer) {
    Backend& be = model.backend();
    be.copy_to_device(optimizer->first_moment(), m.data(), m.size() * sizeof(float));
    be.copy_to_device(optimizer->second_moment(), v.data(), v.size() * sizeof(float));
    const auto progress = nlohmann::json::parse(file.metadata().at("attn.progress"));
    optimizer->set_steps(progress.value("adam_steps", c.progress.step));
    // A checkpoint without an average (written before it was asked for): it starts from these weights.
    if (average.empty())
      optimizer->reset_average();  // nothing without an average
    else
      be.copy_to_device(optimizer->average(), average.data(), average.size() * sizeof(float));
  }
  return c;
}

CheckpointContents inspect_checkpoint(const std::filesystem::path& path) { return contents_of(open_verified(path)); }

std::filesystem::path checkpoint_path(const std::filesystem::path& dir, std::int64_t step) {
  char name[64];
  std::snprintf(name, sizeof name, "step-%08lld.safetensors", static_cast<long long>(step));
  return dir / name;
}

namespace {

// A checkpoint's name: checkpoint_path's, the update in 8 digits or more (and at most 18, which
// std::int64_t holds).
const std::regex& checkpoint_name() {
  static const std::regex pattern(R"(step-(\d{8,18})\.safetensors)");
  return pattern;
}

}  // namespace

std::vector<std::filesystem::path> list_checkpoints(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> found;
  if (!std::filesystem::is_directory(dir)) return found;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file() && std::regex_match(e.path().filename().string(), checkpoint_name()))
      found.push_back(e.path());
  // By the number, not the name: step-100000000 comes after step-99999999.
  std::sort(found.begin(), found.end(), [](const std::filesystem::path& a, const std::filesystem::path& b) {
    return checkpoint_step(a) < checkpoint_step(b);
  });
  return found;
}

std::int64_t checkpoint_step(const std::filesystem::path& path) {
  std::smatch m;
  const std::string name = path.filename().string();
  if (!std::regex_match(name, m, checkpoint_name()))
    throw_in(path.string(), "not a checkpoint's name (expected step-<update, 8 to 18 digits>.safetensors)");
  return std::stoll(m[1].str());
}

std::optional<TrainingProgress> last_checkpoint_progress(const std::filesystem::path& dir) {
  const auto all = list_checkpoints(dir);
  if (all.empty()) return std::nullopt;
  return inspect_checkpoint(all.back()).progress;
}

std::vector<float> average_weights(const std::vector<std::filesystem::path>& paths, const ModelConfig& config) {
  if (paths.empty()) throw Error("nothing to average");
  const ParameterLayout layout(config);
  std::vector<double> sum(static_cast<std::size_t>(layout.total()), 0.0);
  std::vector<float> one(sum.size());
  for (const auto& p : paths) {
    const SafetensorsFile file(p);
    if (file.metadata().count("attn.sha256") && sha256_hex(file.data()) != file.metadata().at("attn.sha256"))
      throw_in(p.string(), "corrupted checkpoint: the data does not match its SHA-256 checksum");
    for (const auto& t : layout.tensors()) file.read(t.name, t.shape, one.data() + t.offset);
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += one[i];
  }
  for (std::size_t i = 0; i < sum.size(); ++i) one[i] = static_cast<float>(sum[i] / static_cast<double>(paths.size()));
  return one;
}

}  // namespace attn
