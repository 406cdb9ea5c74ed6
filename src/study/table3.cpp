#include "study/table3.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/error.h"

namespace attn::study {
namespace {

// Base as the paper trains it for Table 3: its shared source-target BPE vocabulary has about 37000
// tokens (section 5.1).
ModelConfig paper_base() {
  ModelConfig c = ModelConfig::preset("base");
  c.vocab_size = 37000;
  return c;
}

Table3Row row(std::string id, std::string group, std::string change, std::string knob, ModelConfig model,
              PaperResult paper, int steps = 100000) {
  return {std::move(id), std::move(group), std::move(change), std::move(knob), model, steps, paper};
}

ModelConfig with(void (*edit)(ModelConfig&)) {
  ModelConfig c = paper_base();
  edit(c);
  return c;
}

}  // namespace

std::vector<Table3Row> table3_rows() {
  std::vector<Table3Row> rows;
  rows.push_back(row("base", "base", "", "", paper_base(), {4.92, 25.8, 65}));
  // (A) heads, at constant computation: h x d_k = d_model.
  rows.push_back(row("A1", "A", "h=1, d_k=d_v=512", "h", with([](ModelConfig& c) { c.heads = 1, c.d_k = c.d_v = 512; }),
                     {5.29, 24.9, 0}));
  rows.push_back(row("A2", "A", "h=4, d_k=d_v=128", "h", with([](ModelConfig& c) { c.heads = 4, c.d_k = c.d_v = 128; }),
                     {5.00, 25.5, 0}));
  rows.push_back(row("A3", "A", "h=16, d_k=d_v=32", "h", with([](ModelConfig& c) { c.heads = 16, c.d_k = c.d_v = 32; }),
                     {4.91, 25.8, 0}));
  rows.push_back(row("A4", "A", "h=32, d_k=d_v=16", "h", with([](ModelConfig& c) { c.heads = 32, c.d_k = c.d_v = 16; }),
                     {5.01, 25.4, 0}));
  // (B) a smaller attention key size.
  rows.push_back(row("B1", "B", "d_k=16", "d_k", with([](ModelConfig& c) { c.d_k = 16; }), {5.16, 25.1, 58}));
  rows.push_back(row("B2", "B", "d_k=32", "d_k", with([](ModelConfig& c) { c.d_k = 32; }), {5.01, 25.4, 60}));
  // (C) model size.
  rows.push_back(row("C1", "C", "N=2", "N", with([](ModelConfig& c) { c.encoder_layers = c.decoder_layers = 2; }),
                     {6.11, 23.7, 36}));
  rows.push_back(row("C2", "C", "N=4", "N", with([](ModelConfig& c) { c.encoder_layers = c.decoder_layers = 4; }),
                     {5.19, 25.3, 50}));
  rows.push_back(row("C3", "C", "N=8", "N", with([](ModelConfig& c) { c.encoder_layers = c.decoder_layers = 8; }),
                     {4.88, 25.5, 80}));
  rows.push_back(row("C4", "C", "d_model=256, d_k=d_v=32", "d_model",
                     with([](ModelConfig& c) { c.d_model = 256, c.d_k = c.d_v = 32; }), {5.75, 24.5, 28}));
  rows.push_back(row("C5", "C", "d_model=1024, d_k=d_v=128", "d_model",
                     with([](ModelConfig& c) { c.d_model = 1024, c.d_k = c.d_v = 128; }), {4.66, 26.0, 168}));
  rows.push_back(row("C6", "C", "d_ff=1024", "d_ff", with([](ModelConfig& c) { c.d_ff = 1024; }), {5.12, 25.4, 53}));
  rows.push_back(row("C7", "C", "d_ff=4096", "d_ff", with([](ModelConfig& c) { c.d_ff = 4096; }), {4.75, 26.2, 90}));
  // (D) regularisation.
  rows.push_back(
      row("D1", "D", "P_drop=0.0", "P_drop", with([](ModelConfig& c) { c.dropout = 0.0f; }), {5.77, 24.6, 0}));
  rows.push_back(
      row("D2", "D", "P_drop=0.2", "P_drop", with([](ModelConfig& c) { c.dropout = 0.2f; }), {4.95, 25.5, 0}));
  rows.push_back(
      row("D3", "D", "eps_ls=0.0", "eps_ls", with([](ModelConfig& c) { c.label_smoothing = 0.0f; }), {4.67, 25.3, 0}));
  rows.push_back(
      row("D4", "D", "eps_ls=0.2", "eps_ls", with([](ModelConfig& c) { c.label_smoothing = 0.2f; }), {5.47, 25.7, 0}));
  // (E) learned positional embeddings instead of sinusoids.
  rows.push_back(row("E1", "E", "positional embedding instead of sinusoids", "positions",
                     with([](ModelConfig& c) { c.positions = PositionEncoding::Learned; }), {4.92, 25.7, 0}));
  // The big model (P_drop 0.3, 300K steps); its label smoothing cell is empty: base's 0.1.
  rows.push_back(row("big", "big", "N=6, d_model=1024, d_ff=4096, h=16, P_drop=0.3, 300K steps", "",
                     with([](ModelConfig& c) { c.d_model = 1024, c.d_ff = 4096, c.heads = 16, c.dropout = 0.3f; }),
                     {4.33, 26.4, 213}, 300000));
  return rows;
}

const std::vector<Table3Preset>& table3_presets() {
  static const std::vector<Table3Preset> presets = [] {
    std::vector<Table3Preset> out(2);
    Table3Preset& learnt = out[0];
    learnt.name = "learnt";
    learnt.description = "base learns to translate and its dev perplexity settles (docs/table3.md: the scale, and why)";
    learnt.vocab_size = 4000;
    learnt.width_divisor = 2;
    learnt.layer_divisor = 2;
    // Every row, big last (3x base's updates, as the paper's 300K against 100K), after the second seeds
    // of the sweep's variants: big's hours come when every verdict can already be read.
    for (const auto& r : table3_rows()) learnt.rows.push_back(r.id);
    learnt.second_seed = {"base", "A4", "E1"};
    learnt.training.steps = 10000;
    learnt.training.batch_tokens = 1024;
    learnt.training.warmup_steps = 800;
    learnt.training.lr_scale = 0.5;
    learnt.training.lr_decay = "linear";
    learnt.training.bleu_verses = 400;
    learnt.training.bleu_pick = "spread";
    learnt.training.validations = 10;
    // The first study: 800 updates, under half an epoch; how fast each row starts to learn.
    Table3Preset& quick = out[1];
    quick.name = "quick";
    quick.description = "800 updates: how fast each row starts to learn, in about 50 minutes";
    quick.vocab_size = 8000;
    quick.second_seed = {"base", "E1"};
    return out;
  }();
  return presets;
}

const Table3Preset& table3_preset(const std::string& name) {
  std::string known;
  for (const auto& p : table3_presets()) {
    if (p.name == name) return p;
    known += (known.empty() ? "" : ", ") + p.name;
  }
  throw Error("Table 3 has no preset '" + name + "' (presets: " + known + ")");
}

std::string table3_preset_lines(const Table3Preset& p) {
  std::ostringstream out;
  const Table3Training& t = p.training;
  out << "vocab_size\t" << p.vocab_size << "\nwidth_divisor\t" << p.width_divisor << "\nlayer_divisor\t"
      << p.layer_divisor << "\nsteps\t" << t.steps << "\nbatch_tokens\t" << t.batch_tokens << "\nwarmup_steps\t"
      << t.warmup_steps << "\nlr_scale\t" << t.lr_scale << "\nlr_decay\t" << t.lr_decay << "\nbleu_verses\t"
      << t.bleu_verses << "\nbleu_pick\t" << t.bleu_pick << "\nvalidations\t" << t.validations << "\nrows\t";
  for (std::size_t i = 0; i < p.rows.size(); ++i) out << (i ? "," : "") << p.rows[i];
  out << "\nsecond_seed\t";
  for (std::size_t i = 0; i < p.second_seed.size(); ++i) out << (i ? "," : "") << p.second_seed[i];
  out << "\n";
  return out.str();
}

const Table3Row& table3_row(const std::string& id) {
  static const std::vector<Table3Row> rows = table3_rows();
  for (const auto& r : rows)
    if (r.id == id) return r;
  std::string known;
  for (const auto& r : rows) known += (known.empty() ? "" : ", ") + r.id;
  throw Error("Table 3 has no row '" + id + "' (rows: " + known + ")");
}

double knob_value(const std::string& knob, const ModelConfig& c) {
  if (knob == "h") return c.heads;
  if (knob == "d_k") return c.d_k;
  if (knob == "N") return c.encoder_layers;
  if (knob == "d_model") return c.d_model;
  if (knob == "d_ff") return c.d_ff;
  if (knob == "P_drop") return c.dropout;
  if (knob == "eps_ls") return c.label_smoothing;
  if (knob == "positions") return c.positions == PositionEncoding::Learned ? 1 : 0;
  throw Error("Table 3: unknown knob '" + knob + "'");
}

ModelConfig scaled(const ModelConfig& paper, const Table3Scale& s) {
  if (s.width_divisor < 1 || s.layer_divisor < 1) throw Error("Table 3: scale divisors must be at least 1");
  auto width = [&](int v, const char* name) {
    if (v % s.width_divisor != 0)
      throw Error(std::string("Table 3: ") + name + " " + std::to_string(v) + " is not divisible by " +
                  std::to_string(s.width_divisor));
    return v / s.width_divisor;
  };
  auto layers = [&](int n) { return std::max(1, static_cast<int>(std::lround(double(n) / s.layer_divisor))); };
  ModelConfig c = paper;
  c.d_model = width(paper.d_model, "d_model");
  c.d_ff = width(paper.d_ff, "d_ff");
  c.d_k = width(paper.d_k, "d_k");
  c.d_v = width(paper.d_v, "d_v");
  c.encoder_layers = layers(paper.encoder_layers);
  c.decoder_layers = layers(paper.decoder_layers);
  c.vocab_size = s.vocab_size;
  c.validate();
  return c;
}

std::vector<Table3Run> table3_plan(const std::vector<std::string>& ids, const std::vector<std::string>& second_seed_ids,
                                   const Table3Scale& scale, const Table3Training& training) {
  if (training.steps < 1) throw Error("Table 3: steps must be at least 1");
  if (training.validations < 1 || training.steps % training.validations != 0)
    throw Error("Table 3: validations must divide the steps (" + std::to_string(training.steps) +
                ") so that the last is at the last update, got " + std::to_string(training.validations));
  if (training.bleu_pick != "first" && training.bleu_pick != "spread")
    throw Error("Table 3: the BLEU verses are picked \"first\" or \"spread\", not \"" + training.bleu_pick + "\"");
  if (training.lr_decay != "inverse_sqrt" && training.lr_decay != "linear")
    throw Error("Table 3: the learning rate decays \"inverse_sqrt\" or \"linear\", not \"" + training.lr_decay + "\"");
  std::vector<const Table3Row*> rows;
  if (ids.empty()) {
    for (const auto& r : table3_rows())
      if (r.id != "big") rows.push_back(&table3_row(r.id));
  } else {
    for (const auto& id : ids) rows.push_back(&table3_row(id));
  }
  const int base_steps = table3_row("base").paper_steps;
  std::vector<Table3Run> plan;
  auto add = [&](const Table3Row* r, int seed) {
    Table3Run run;
    run.row = r;
    run.seed = seed;
    run.name = seed == 1 ? r->id : r->id + "-seed" + std::to_string(seed);
    for (const auto& p : plan)
      if (p.name == run.name) throw Error("Table 3: run " + run.name + " is asked for twice");
    run.model = scaled(r->model, scale);
    run.steps = static_cast<int>(std::lround(double(training.steps) * r->paper_steps / base_steps));
    plan.push_back(run);
  };
  for (const auto* r : rows) add(r, 1);
  for (const auto& id : second_seed_ids) {
    const Table3Row* r = &table3_row(id);
    // A second seed measures the spread of a row against its first: alone, it measures nothing.
    if (std::find(rows.begin(), rows.end(), r) == rows.end())
      throw Error("Table 3: a second seed of " + id + " was asked for, but " + id + " itself is not in the plan");
    add(r, 2);
  }
  return plan;
}

std::string sweep_run_name(const Table3Run& run) { return run.row->id + ".seed" + std::to_string(run.seed); }

nlohmann::ordered_json table3_sweep(const std::vector<Table3Run>& plan, const Table3Training& training,
                                    int vocabulary_size) {
  using Json = nlohmann::ordered_json;
  Json base;
  base["precision"] = "fp32";
  base["batch_tokens"] = training.batch_tokens;
  base["warmup_steps"] = training.warmup_steps;
  base["lr_scale"] = training.lr_scale;
  if (training.lr_decay != "inverse_sqrt") base["lr_decay"] = training.lr_decay;
  // `validations` evenly spaced, the last at the last update (the rows' updates are multiples of
  // base's; big, 3x as long, validates 3x as often).
  base["valid_every"] = std::max(1, training.steps / training.validations);
  base["valid_translate"] = 0;
  base["early_stopping"] = 0;
  base["save_every"] = std::max(1, training.steps / 5);
  base["save_every_minutes"] = 1.0;
  base["keep_checkpoints"] = 2;
  base["log_every"] = std::max(1, training.steps / 40);  // the elapsed time of every 40th of a run
  base["vocabulary_size"] = vocabulary_size;
  Json variants = Json::array();
  for (const auto& run : plan) {
    auto it = std::find_if(variants.begin(), variants.end(), [&](const Json& v) { return v["name"] == run.row->id; });
    if (it != variants.end()) {
      (*it)["seeds"].push_back(run.seed);
      continue;
    }
    Json v;
    v["name"] = run.row->id;
    // Every model key: the sweep's base preset plays no part. Not options of attn train: every row
    // keeps the default epsilon, the vocabulary gives the size.
    nlohmann::json model = run.model;
    model.erase("layernorm_eps");
    model.erase("vocab_size");
    for (auto m = model.begin(); m != model.end(); ++m) v[m.key()] = m.value();
    v["seeds"] = Json::array({run.seed});
    if (run.steps != training.steps) v["budget"] = Json{{"updates", run.steps}};
    variants.push_back(v);
  }
  Json f;
  f["title"] = "The paper's Table 3 at small scale: every run";
  f["base"] = base;
  f["variants"] = variants;
  f["budget"] = Json{{"updates", training.steps}};
  f["score"] = Json{{"average_last", 1},
                    {"dev_verses", training.bleu_verses},
                    {"dev_pick", training.bleu_pick},
                    {"beam", 4},
                    {"alpha", 0.6}};
  return f;
}

}  // namespace attn::study
