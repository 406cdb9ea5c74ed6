#include "train/train_options.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/float_decimal.h"
#include "core/json_file.h"
#include "decode/model_directory.h"
#include "kernels/backend.h"

namespace attn {

std::vector<OptionField> option_fields(TrainOptions& o) {
  ModelConfig& m = o.model;
  return {
      {"train_source", "training source text, one sentence per line", &o.train_source},
      {"train_target", "training target text, line-aligned with train_source", &o.train_target},
      {"valid_source", "dev source text (validation loss, BLEU, chrF)", &o.valid_source},
      {"valid_target", "dev target text", &o.valid_target},
      {"vocabulary", "SentencePiece model shared by source and target (attn vocab train)", &o.vocabulary},
      {"run_dir", "folder for checkpoints, logs and models", &o.run_dir},
      {"source_lang",
       "language code of the source text (e.g. en), recorded in the model folders: attn serve --model DIR "
       "serves them under it",
       &o.source_lang},
      {"target_lang", "language code of the target text (e.g. es), recorded with source_lang", &o.target_lang},
      {"max_length", "maximum tokens per side; longer pairs are dropped and counted", &o.max_length},
      {"batch_tokens", "tokens per batch on each side (source, target), padding included", &o.batch_tokens},
      {"accumulate",
       "batches per optimizer update on each rank (gradient accumulation); the global batch is batch_tokens x ranks x "
       "accumulate",
       &o.accumulate},
      {"lr_scale", "factor on the paper's learning rate d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)",
       &o.lr_scale},
      {"warmup_steps", "learning-rate warmup steps", &o.warmup_steps},
      {"lr_decay",
       "after warmup: inverse_sqrt (the paper's step^-0.5), linear (from the same peak down to 0 at max_steps, or "
       "with a time budget alone at the update the budget ends with, estimated from the run's speed again as it "
       "goes), or auto (linear where the run has max_steps above warmup_steps or a time budget, else inverse_sqrt)",
       &o.lr_decay},
      {"adam_beta1", "Adam beta1", &o.adam_beta1},
      {"adam_beta2", "Adam beta2", &o.adam_beta2},
      {"adam_eps", "Adam epsilon", &o.adam_eps},
      {"clip_norm", "clip gradients to this L2 norm (0: off)", &o.clip_norm},
      {"ema_decay",
       "keep an exponential moving average of the weights with this decay d (e.g. 0.999; 0: off): after update t, "
       "average = min(d, (1+t)/(10+t)) * average + (1 - that) * weights; validation, best/, snapshots and model/ "
       "use the average, checkpoints keep both",
       &o.ema_decay},
      {"dropout_from_epoch",
       "dropout and activation_dropout apply from this epoch (pass over the training data) on: 1 from the start, "
       "N > 1 none in the first N - 1 epochs (late dropout); an update whose batches reach epoch N has it",
       &o.dropout_from_epoch},
      {"bpe_dropout",
       "BPE-dropout: each epoch from dropout_from_epoch on, cut the training text into pieces again with each "
       "merge skipped with this probability (0: off; e.g. 0.1); dev text and translation keep the usual pieces",
       &o.bpe_dropout},
      {"max_steps", "stop after this many updates (0: no limit)", &o.max_steps},
      {"max_epochs", "stop after this many epochs (0: no limit)", &o.max_epochs},
      {"time_budget_minutes", "stop after this much training time (0: no limit)", &o.time_budget_minutes},
      {"early_stopping", "stop after this many validations without a better dev loss (0: never)", &o.early_stopping},
      {"valid_every", "validate every N updates", &o.valid_every},
      {"valid_translate", "dev sentences translated (greedy) for BLEU/chrF at each validation (0: none)",
       &o.valid_translate},
      {"save_every", "checkpoint every N updates (0: by time only)", &o.save_every},
      {"save_every_minutes", "checkpoint every N minutes (0: by steps only)", &o.save_every_minutes},
      {"keep_checkpoints", "how many of the latest checkpoints to keep", &o.keep_checkpoints},
      {"snapshot_every_minutes", "keep a model folder snapshots/minute-NNN every N whole minutes of training (0: none)",
       &o.snapshot_every_minutes},
      {"log_every", "progress line and log record every N updates", &o.log_every},
      {"seed", "random seed: initialisation, batch order, dropout", &o.seed},
      {"threads", "CPU threads (0: all cores; under mpirun, the cores of this rank)", &o.threads},
      {"allreduce",
       "under mpirun, how the ranks sum their gradients: overlapped (in buckets of allreduce_bucket_mb, each sent as "
       "soon as the backward pass has finished it, while the earlier layers are still computed) or after_backward "
       "(one sum of the whole gradient after the backward pass)",
       &o.allreduce},
      {"allreduce_precision",
       "under mpirun, the gradient on the wire: fp32, or bf16 (half the bytes, for slow links: each rank's gradient "
       "and each partial sum rounded to bfloat16, about 2^-8 relatively, as PyTorch DDP's bf16 compression; the "
       "ranks then no longer sum what one process accumulating their batches sums to the bit)",
       &o.allreduce_precision},
      {"allreduce_bucket_mb",
       "the most MB of gradient one sum of the overlapped sum holds (each layer's gradient goes as soon as the "
       "backward pass has finished it, the last layers' first; a layer larger than this in several sums)",
       &o.allreduce_bucket_mb},
      {"peer_timeout_seconds",
       "under mpirun, a rank that hears nothing from another rank for this long (its node down, the link to it cut, "
       "its process stopped; the ranks send each other a UDP heartbeat) ends the job, naming that rank and its "
       "addresses (0: not watched)",
       &o.peer_timeout_seconds},
      {"precision", "matrix products in fp32, or bf16 (mixed precision, float32 sums; needs AVX512-BF16)",
       &o.precision},
      {"encoder_layers", "N for the encoder", &m.encoder_layers, true},
      {"decoder_layers", "N for the decoder", &m.decoder_layers, true},
      {"d_model", "model width", &m.d_model, true},
      {"d_ff", "feed-forward inner width", &m.d_ff, true},
      {"heads", "attention heads h", &m.heads, true},
      {"d_k", "query/key width per head", &m.d_k, true},
      {"d_v", "value width per head", &m.d_v, true},
      {"dropout", "P_drop: dropout on sublayer outputs and embedding sums", &m.dropout, true},
      {"activation_dropout", "dropout on the feed-forward hidden layer's ReLU output (0: off, as the paper)",
       &m.activation_dropout, true},
      {"label_smoothing", "epsilon_ls", &m.label_smoothing, true},
      {"positions", "positional encoding: sinusoidal or learned", &m.positions, true},
      {"max_positions", "longest sequence the model accepts", &m.max_positions, true},
      {"attention_window", "restricted self-attention: r > 0 attends to |i - j| <= r (0: full)", &m.attention_window,
       true},
  };
}

namespace {

const char* position_name(PositionEncoding p) { return p == PositionEncoding::Learned ? "learned" : "sinusoidal"; }

}  // namespace

namespace {

// The recipe keys that presets set, at their defaults (TrainOptions{}), and each preset's own
// values for them.
struct Preset {
  const char* name;
  const char* model;  // the model preset
  const char* keys;   // JSON: recipe keys that differ from the defaults
};
constexpr const char* kRecipeKeys[] = {"batch_tokens", "accumulate", "lr_scale",          "warmup_steps",
                                       "lr_decay",     "ema_decay",  "dropout_from_epoch"};
// cpu-hour: the evidence for each value is in docs/recipe.md (pruning sweeps at equal tokens; dropout
// from the fifth epoch: sweeps 9 and 10, at the budgets of a slow and a fast machine).
constexpr Preset kPresets[] = {
    {"base", "base", "{}"},
    {"big", "big", "{}"},
    {"small", "small", "{}"},
    {"tiny", "tiny", "{}"},
    {"cpu-hour", "small", R"({"batch_tokens": 1024, "warmup_steps": 3200, "dropout": 0.1, "dropout_from_epoch": 5,
                       "lr_decay": "auto"})"},
};

std::string model_preset_of(const std::string& preset) {
  for (const Preset& p : kPresets)
    if (preset == p.name) return p.model;
  return preset;  // ModelConfig::preset names the unknown one
}

}  // namespace

std::vector<std::string> train_preset_names() {
  std::vector<std::string> names;
  for (const Preset& p : kPresets) names.emplace_back(p.name);
  return names;
}

nlohmann::json train_preset(const std::string& name) {
  for (const Preset& p : kPresets) {
    if (name != p.name) continue;
    TrainOptions defaults;
    const nlohmann::json all = options_to_json(defaults);
    nlohmann::json keys = nlohmann::json::object();
    for (const char* key : kRecipeKeys) keys[key] = all.at(key);
    keys.update(nlohmann::json::parse(p.keys));
    keys["preset"] = p.name;
    return keys;
  }
  std::string known;
  for (const Preset& p : kPresets) known += std::string(known.empty() ? "" : ", ") + p.name;
  throw Error("unknown preset '" + name + "' (known: " + known + ")");
}

nlohmann::json options_to_json(const TrainOptions& options) {
  TrainOptions copy = options;
  nlohmann::json j;
  j["preset"] = copy.preset;
  for (const auto& f : option_fields(copy)) {
    std::visit(
        [&](auto* p) {
          using T = std::remove_pointer_t<decltype(p)>;
          if constexpr (std::is_same_v<T, PositionEncoding>)
            j[f.name] = position_name(*p);
          else if constexpr (std::is_same_v<T, float>)
            j[f.name] = float_decimal(*p);
          else
            j[f.name] = *p;
        },
        f.target);
  }
  return j;
}

void apply_options_json(const nlohmann::json& j, TrainOptions& options, const std::string& source) {
  if (!j.is_object()) throw_in(source, "the configuration must be a JSON object");
  if (j.contains("preset")) {
    std::string known;
    for (const auto& name : train_preset_names()) known += (known.empty() ? "\"" : ", \"") + name + "\"";
    if (!j.at("preset").is_string())
      throw_in(source, "option 'preset' must be one of " + known + ", got " + j.at("preset").dump());
    nlohmann::json keys;
    try {
      keys = train_preset(j.at("preset").get<std::string>());
    } catch (const Error& e) {
      throw_in(source, e.what());
    }
    options.preset = keys.at("preset").get<std::string>();
    const int vocab = options.model.vocab_size;
    options.model = ModelConfig::preset(model_preset_of(options.preset));
    options.model.vocab_size = vocab;
    keys.erase("preset");
    apply_options_json(keys, options, "preset '" + options.preset + "'");
  }
  auto fields = option_fields(options);
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "preset") continue;
    auto f = std::find_if(fields.begin(), fields.end(), [&](const OptionField& x) { return x.name == it.key(); });
    if (f == fields.end()) throw_in(source, "unknown option '" + it.key() + "'");
    const nlohmann::json& v = it.value();
    auto wrong = [&](const std::string& expected) {
      throw_in(source, "option '" + it.key() + "' must be " + expected + ", got " + v.dump());
    };
    std::visit(
        [&](auto* p) {
          using T = std::remove_pointer_t<decltype(p)>;
          if constexpr (std::is_same_v<T, PositionEncoding>) {
            if (v == "sinusoidal")
              *p = PositionEncoding::Sinusoidal;
            else if (v == "learned")
              *p = PositionEncoding::Learned;
            else
              wrong("\"sinusoidal\" or \"learned\"");
          } else if constexpr (std::is_same_v<T, std::string>) {
            if (!v.is_string()) wrong("a string");
            *p = v.get<std::string>();
          } else if constexpr (std::is_floating_point_v<T>) {
            if (!v.is_number()) wrong("a number");
            if (!(std::fabs(v.get<double>()) <= std::numeric_limits<T>::max())) wrong("a number a float holds");
            *p = v.get<T>();
          } else {
            // Whole numbers: JSON integers, or numbers like 4e3 that are whole, within T's range.
            const long double lo = static_cast<long double>(std::numeric_limits<T>::min());
            const long double hi = static_cast<long double>(std::numeric_limits<T>::max());
            std::string range = "a whole number from ";
            range += std::to_string(std::numeric_limits<T>::min());
            range += " to ";
            range += std::to_string(std::numeric_limits<T>::max());
            if (v.is_number_unsigned()) {
              if (static_cast<long double>(v.get<std::uint64_t>()) > hi) wrong(range);
              *p = static_cast<T>(v.get<std::uint64_t>());
            } else if (v.is_number_integer()) {
              const auto x = v.get<std::int64_t>();
              if (static_cast<long double>(x) < lo || static_cast<long double>(x) > hi) wrong(range);
              *p = static_cast<T>(x);
            } else if (v.is_number_float()) {
              const long double x = v.get<double>();
              if (!(x >= lo && x <= hi) || x != std::floor(x)) wrong(range);
              *p = static_cast<T>(x);
            } else {
              wrong(range);
            }
          }
        },
        f->target);
  }
}

nlohmann::json read_options_file(const std::string& path) { return read_json_file(path, "the configuration file"); }

void validate(const TrainOptions& o) {
  auto need = [](bool ok, const std::string& what) {
    if (!ok) throw Error("train options: " + what);
  };
  need(!o.train_source.empty() && !o.train_target.empty(), "train_source and train_target are required");
  need(!o.vocabulary.empty(), "vocabulary is required (train one with `attn vocab train`)");
  need(o.valid_source.empty() == o.valid_target.empty(), "give both valid_source and valid_target, or neither");
  need(o.source_lang.empty() == o.target_lang.empty(), "give both source_lang and target_lang, or neither");
  for (const std::string* code : {&o.source_lang, &o.target_lang})
    need(code->empty() || is_language_code(*code),
         "\"" + *code + "\" is not a language code (letters, digits or _, starting with a letter: en, es, pt_BR)");
  need(o.max_length > 1, "max_length must be at least 2");
  need(o.batch_tokens >= o.max_length, "batch_tokens must be at least max_length so that every pair fits");
  need(o.accumulate >= 1, "accumulate must be at least 1");
  need(o.lr_scale > 0 && std::isfinite(o.lr_scale), "lr_scale must be a positive number");
  need(o.warmup_steps >= 1, "warmup_steps must be at least 1");
  need(o.lr_decay == "inverse_sqrt" || o.lr_decay == "linear" || o.lr_decay == "auto",
       "lr_decay must be \"inverse_sqrt\", \"linear\" or \"auto\", got \"" + o.lr_decay + "\"");
  need(o.lr_decay != "linear" || o.max_steps > o.warmup_steps || (o.max_steps == 0 && o.time_budget_minutes > 0),
       "lr_decay \"linear\" decays to 0 at max_steps, or at the end of time_budget_minutes: give max_steps above "
       "warmup_steps (" +
           std::to_string(o.warmup_steps) + "), or a time budget");
  need(o.adam_beta1 >= 0 && o.adam_beta1 < 1, "adam_beta1 must be in [0, 1)");
  need(o.adam_beta2 >= 0 && o.adam_beta2 < 1, "adam_beta2 must be in [0, 1)");
  need(o.adam_eps > 0 && std::isfinite(o.adam_eps), "adam_eps must be a positive number");
  need(o.clip_norm >= 0 && std::isfinite(o.clip_norm), "clip_norm must be >= 0 (0: off)");
  need(o.ema_decay >= 0 && o.ema_decay < 1, "ema_decay must be in [0, 1) (0: off)");
  need(o.dropout_from_epoch >= 1, "dropout_from_epoch must be at least 1 (1: from the start)");
  need(o.bpe_dropout >= 0 && o.bpe_dropout < 1, "bpe_dropout must be in [0, 1) (0: off)");
  need(o.max_steps >= 0, "max_steps must be >= 0 (0: no limit)");
  need(o.max_epochs >= 0, "max_epochs must be >= 0 (0: no limit)");
  need(o.time_budget_minutes >= 0 && std::isfinite(o.time_budget_minutes),
       "time_budget_minutes must be >= 0 (0: no limit)");
  need(o.early_stopping >= 0, "early_stopping must be >= 0 (0: never)");
  need(o.valid_every >= 1, "valid_every must be at least 1");
  need(o.valid_translate >= 0, "valid_translate must be >= 0 (0: none)");
  need(o.save_every >= 0, "save_every must be >= 0 (0: by time only)");
  need(o.save_every_minutes >= 0 && std::isfinite(o.save_every_minutes),
       "save_every_minutes must be >= 0 (0: by steps only)");
  need(o.keep_checkpoints >= 1, "keep_checkpoints must be at least 1");
  need(o.snapshot_every_minutes >= 0, "snapshot_every_minutes must be >= 0");
  need(o.log_every >= 1, "log_every must be at least 1");
  need(o.threads >= 0, "threads must be >= 0 (0: all cores)");
  need(o.allreduce == "overlapped" || o.allreduce == "after_backward",
       "allreduce must be \"overlapped\" or \"after_backward\", got \"" + o.allreduce + "\"");
  need(o.allreduce_precision == "fp32" || o.allreduce_precision == "bf16",
       "allreduce_precision must be \"fp32\" or \"bf16\", got \"" + o.allreduce_precision + "\"");
  need(o.allreduce_bucket_mb > 0 && o.allreduce_bucket_mb <= 65536,
       "allreduce_bucket_mb must be a size in MB above 0 and at most 65536 (for one sum after the backward pass, "
       "allreduce \"after_backward\"), got " +
           nlohmann::json(o.allreduce_bucket_mb).dump());
  need(o.peer_timeout_seconds == 0 || (o.peer_timeout_seconds >= 1 && o.peer_timeout_seconds <= 86400),
       "peer_timeout_seconds must be 0 (not watched) or from 1 to 86400, got " +
           nlohmann::json(o.peer_timeout_seconds).dump());
  parse_matmul_precision(o.precision);  // throws naming the accepted values
  need(o.max_length <= o.model.max_positions, "max_length must not exceed the model's max_positions");
  o.model.validate();
}

namespace {

// A flag's text as the JSON value of its field: numbers parsed, strings kept.
nlohmann::json flag_value(const OptionField& f, const std::string& text) {
  if (std::holds_alternative<std::string*>(f.target) || std::holds_alternative<PositionEncoding*>(f.target))
    return text;
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {  // parse_error, or out_of_range for a number like 1e999
    std::string dashed = f.name;
    std::replace(dashed.begin(), dashed.end(), '_', '-');
    throw Error("--" + dashed + ": '" + text + "' is not a number");
  }
}

}  // namespace

std::string resolve_lr_decay(TrainOptions& o) {
  if (o.lr_decay != "auto") return "";
  if (o.max_steps > o.warmup_steps) {
    o.lr_decay = "linear";
    return "lr_decay auto: linear, to 0 at max_steps (" + std::to_string(o.max_steps) + ")";
  }
  if (o.max_steps == 0 && o.time_budget_minutes > 0) {
    o.lr_decay = "linear";
    return "lr_decay auto: linear, to 0 where the time budget ends";
  }
  o.lr_decay = "inverse_sqrt";
  return o.max_steps > 0 ? "lr_decay auto: inverse_sqrt (max_steps " + std::to_string(o.max_steps) +
                               " is within the warmup of " + std::to_string(o.warmup_steps) + " steps)"
                         : "lr_decay auto: inverse_sqrt (no max_steps or time budget to decay to)";
}

TrainOptions resolve_train_options(const std::string& preset, const std::string& config_file,
                                   const std::map<std::string, std::string>& given) {
  TrainOptions options;
  if (!preset.empty()) apply_options_json({{"preset", preset}}, options, "--preset");
  if (!config_file.empty()) apply_options_json(read_options_file(config_file), options, config_file);
  nlohmann::json flags = nlohmann::json::object();
  TrainOptions scratch;
  for (const auto& f : option_fields(scratch)) {
    auto it = given.find(f.name);
    if (it != given.end()) flags[f.name] = flag_value(f, it->second);
  }
  apply_options_json(flags, options, "command line");
  return options;
}

}  // namespace attn
