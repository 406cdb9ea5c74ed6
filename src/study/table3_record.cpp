#include "study/table3_record.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/json_file.h"
#include "core/number_format.h"
#include "core/sha256.h"
#include "core/text_file.h"
#include "inspect/png_render.h"
#include "study/sweep.h"
#include "study/sweep_report.h"

namespace attn::study {

namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

constexpr int kRecordFormat = 1;

std::string trimmed(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\n"), b = s.find_last_not_of(" \t\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::string cpuinfo_value(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon != std::string::npos && trimmed(line.substr(0, colon)) == key) return trimmed(line.substr(colon + 1));
  }
  return "";
}

Json machine_json(const MachineInfo& m) {
  return {{"cpu", m.cpu},     {"cpu_family", m.cpu_family},   {"cpu_model", m.cpu_model},
          {"cores", m.cores}, {"avx512_bf16", m.avx512_bf16}, {"sitting", m.sitting}};
}

// The planned run named `name` ("<row>.seed<k>").
const Table3Run& planned_run(const std::vector<Table3Run>& plan, const std::string& name) {
  for (const auto& r : plan)
    if (sweep_run_name(r) == name) return r;
  std::string known;
  for (const auto& r : plan) known += (known.empty() ? "" : ", ") + sweep_run_name(r);
  throw Error("Table 3: no run '" + name + "' in this study's plan (runs: " + known + ")");
}

std::vector<Table3Run> plan_of(const Table3Settings& s) {
  return table3_plan(s.rows, s.second_seed, s.scale, s.training);
}

}  // namespace

MachineInfo this_machine() {
  MachineInfo m;
  std::string cpuinfo;
  try {
    cpuinfo = read_file_bytes("/proc/cpuinfo");
  } catch (const Error&) {
  }
  m.cpu = cpuinfo_value(cpuinfo, "model name");
  if (m.cpu.empty()) m.cpu = "unknown CPU";
  const auto number = [&](const char* key) {
    const std::string v = cpuinfo_value(cpuinfo, key);
    return v.empty() ? 0 : std::atoi(v.c_str());
  };
  m.cpu_family = number("cpu family");
  m.cpu_model = number("model");
  const std::string flags = " " + cpuinfo_value(cpuinfo, "flags") + " ";
  m.avx512_bf16 = flags.find(" avx512_bf16 ") != std::string::npos;
  m.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  try {
    m.sitting = trimmed(read_file_bytes("/proc/sys/kernel/random/boot_id"));
  } catch (const Error&) {
    m.sitting = "unknown";
  }
  return m;
}

std::string machine_text(const MachineInfo& m) {
  return m.cpu + " (family " + std::to_string(m.cpu_family) + ", model " + std::to_string(m.cpu_model) + "), " +
         std::to_string(m.cores) + " cores";
}

double log_seconds_per_update(const fs::path& train_jsonl) {
  if (!fs::exists(train_jsonl)) throw_in(train_jsonl.string(), "no such file (a pace measurement's training log)");
  const TrainingCurves c = read_training_curves(train_jsonl);
  if (c.elapsed.size() < 2)
    throw_in(train_jsonl.string(),
             "a pace needs two training records or more, found " + std::to_string(c.elapsed.size()));
  const CurvePoint& a = c.elapsed.front();
  const CurvePoint& b = c.elapsed.back();
  if (b.value <= a.value) throw_in(train_jsonl.string(), "the elapsed time does not grow between its records");
  return (b.value - a.value) / static_cast<double>(b.step - a.step);
}

PaceMeasurement read_pace_measurement(const fs::path& dir) {
  PaceMeasurement p;
  for (int k = 1;; ++k) {
    const fs::path base = dir / ("base." + std::to_string(k)) / "train.jsonl";
    const fs::path row = dir / ("row." + std::to_string(k)) / "train.jsonl";
    if (!fs::exists(base) && !fs::exists(row)) break;
    const double b = log_seconds_per_update(base), r = log_seconds_per_update(row);
    p.base_seconds_per_update = k == 1 ? b : std::min(p.base_seconds_per_update, b);
    p.row_seconds_per_update = k == 1 ? r : std::min(p.row_seconds_per_update, r);
    p.rounds = k;
  }
  if (p.rounds == 0) throw_in(dir.string(), "no pace measurement (base.1/train.jsonl and row.1/train.jsonl)");
  p.relative = p.row_seconds_per_update / p.base_seconds_per_update;
  return p;
}

Table3Record make_table3_record(const fs::path& study, const Table3Settings& settings, const std::string& name,
                                const std::optional<PaceMeasurement>& pace, const MachineInfo& machine,
                                const std::string& finished) {
  const auto plan = plan_of(settings);
  const Table3Run& run = planned_run(plan, name);
  const fs::path folder = study / "runs" / name;
  const SweepPlan sweep = read_planned_sweep(study);
  const SweepRunResult r = read_sweep_run(folder, sweep);
  if (r.status == SweepRunResult::Status::diverged)
    throw Error(folder.string() + ": the training diverged (" + r.diverged_message + "): no record");
  if (r.status != SweepRunResult::Status::finished)
    throw Error(folder.string() + ": the run has not finished (no 'finished' file): no record");
  if (r.updates != run.steps)
    throw Error(folder.string() + ": the run trained " + std::to_string(r.updates) + " updates, the plan " +
                std::to_string(run.steps));
  Table3Record out;
  out.name = name;
  out.row = run.row->id;
  out.seed = run.seed;
  out.updates = r.updates;
  out.plan = table3_settings_json(settings);
  out.config = read_json_file((folder / "train" / "config.json").string(), "the run's configuration");
  out.machine = machine;
  out.precision = out.config.value("precision", "fp32");
  out.training_seconds = r.elapsed.empty() ? 0 : r.elapsed.back().value;
  out.seconds_per_update = steady_seconds_per_update(r.elapsed);
  out.tokens_per_second = r.tokens_per_second;
  if (run.row->id != "base") out.pace = pace;
  out.dev_cross_entropy = r.dev_cross_entropy;
  out.dev_ppl = r.dev_ppl;
  const SweepDecoding& decoding = sweep.scoring.decodings.front();
  const auto& scores = r.decodings.at(decoding.label());
  out.bleu = scores.bleu;
  out.chrf = scores.chrf;
  out.scores = read_json_file((folder / ("dev." + decoding.label() + ".json")).string(), "the run's dev scores");
  const std::string translations = read_file_bytes((folder / ("dev." + decoding.label() + ".txt")).string());
  out.translated_verses = static_cast<int>(std::count(translations.begin(), translations.end(), '\n'));
  out.translations_sha256 = sha256_hex(translations);
  out.finished = finished;
  out.elapsed = r.elapsed;
  out.dev_curve = r.dev_curve;
  return out;
}

void write_table3_record(const fs::path& records, const Table3Record& r, const fs::path& train_jsonl) {
  Json j;
  j["record"] = kRecordFormat;
  j["name"] = r.name;
  j["row"] = r.row;
  j["seed"] = r.seed;
  j["updates"] = r.updates;
  j["plan"] = r.plan;
  j["config"] = r.config;
  j["machine"] = machine_json(r.machine);
  j["precision"] = r.precision;
  j["training"] = {{"seconds", r.training_seconds},
                   {"seconds_per_update", r.seconds_per_update},
                   {"tokens_per_second", r.tokens_per_second}};
  if (r.pace)
    j["pace"] = {{"relative_to_base", r.pace->relative},
                 {"seconds_per_update", r.pace->row_seconds_per_update},
                 {"base_seconds_per_update", r.pace->base_seconds_per_update},
                 {"rounds", r.pace->rounds}};
  else
    j["pace"] = nullptr;
  j["dev"] = {{"cross_entropy", r.dev_cross_entropy}, {"perplexity", r.dev_ppl}};
  j["scores"] = r.scores;
  j["translations"] = {{"verses", r.translated_verses}, {"sha256", r.translations_sha256}};
  j["finished"] = r.finished;
  // Whole or not at all: a temporary folder, renamed into place.
  const fs::path runs = records / "runs";
  fs::create_directories(runs);
  const fs::path temporary = runs / ("." + r.name + ".tmp");
  fs::remove_all(temporary);
  fs::create_directories(temporary);
  write_file_atomic(temporary / "train.jsonl", read_file_bytes(train_jsonl.string()));
  write_file_atomic(temporary / "record.json", j.dump(1) + "\n");
  const fs::path destination = runs / r.name;
  fs::remove_all(destination);  // a damaged record of the same run
  fs::rename(temporary, destination);
  sync_directory(runs);
}

Table3Record read_table3_record(const fs::path& folder, const Json& plan) {
  const fs::path file = folder / "record.json";
  const std::string source = file.string();
  if (!fs::exists(file)) throw_in(source, "no such file: the record is incomplete");
  const Json j = read_json_file(source, "a Table 3 record");
  Table3Record r;
  try {
    if (j.at("record").get<int>() != kRecordFormat)
      throw_in(source, "record format " + j.at("record").dump() + ", this attn reads " + std::to_string(kRecordFormat));
    r.name = j.at("name").get<std::string>();
    if (r.name != folder.filename().string())
      throw_in(source, "the record of " + r.name + " is in the folder of " + folder.filename().string());
    r.row = j.at("row").get<std::string>();
    r.seed = j.at("seed").get<int>();
    r.updates = j.at("updates").get<std::int64_t>();
    r.plan = j.at("plan");
    if (r.plan != plan)
      throw_in(source, "a record of another plan (" + r.plan.dump() + "; this study's: " + plan.dump() + ")");
    r.config = j.at("config");
    const Json& m = j.at("machine");
    r.machine = {m.at("cpu").get<std::string>(), m.at("cpu_family").get<int>(),   m.at("cpu_model").get<int>(),
                 m.at("cores").get<int>(),       m.at("avx512_bf16").get<bool>(), m.at("sitting").get<std::string>()};
    r.precision = j.at("precision").get<std::string>();
    const Json& t = j.at("training");
    r.training_seconds = t.at("seconds").get<double>();
    r.seconds_per_update = t.at("seconds_per_update").get<double>();
    r.tokens_per_second = t.at("tokens_per_second").get<double>();
    if (!j.at("pace").is_null()) {
      const Json& p = j.at("pace");
      PaceMeasurement pace;
      pace.relative = json_number(p.at("relative_to_base"), source, "pace.relative_to_base", 1e-6, 1e6);
      pace.row_seconds_per_update = p.at("seconds_per_update").get<double>();
      pace.base_seconds_per_update = p.at("base_seconds_per_update").get<double>();
      pace.rounds = p.at("rounds").get<int>();
      r.pace = pace;
    }
    r.dev_cross_entropy = json_number(j.at("dev").at("cross_entropy"), source, "dev.cross_entropy", 0, 1e3);
    r.dev_ppl = std::exp(r.dev_cross_entropy);
    r.scores = j.at("scores");
    bool bleu = false, chrf = false;
    for (const Json& s : r.scores) {
      if (s.at("name") == "BLEU") r.bleu = s.at("score").get<double>(), bleu = true;
      if (s.at("name") == "chrF2") r.chrf = s.at("score").get<double>(), chrf = true;
    }
    if (!bleu || !chrf) throw_in(source, "'scores' must hold BLEU and chrF2 (attn bleu --json)");
    r.translated_verses = j.at("translations").at("verses").get<int>();
    r.translations_sha256 = j.at("translations").at("sha256").get<std::string>();
    r.finished = j.at("finished").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw_in(source, std::string("not a whole Table 3 record (") + e.what() + ")");
  }
  const fs::path log = folder / "train.jsonl";
  if (!fs::exists(log)) throw_in(log.string(), "no such file: the record is incomplete");
  const TrainingCurves c = read_training_curves(log);
  if (c.updates != r.updates)
    throw_in(log.string(), "the log reaches update " + std::to_string(c.updates) + ", the record says " +
                               std::to_string(r.updates) + ": the record is incomplete");
  r.elapsed = c.elapsed;
  r.dev_curve = c.dev_curve;
  return r;
}

void check_records_plan(const fs::path& records, const Table3Settings& settings) {
  const fs::path file = records / "plan.json";
  const Json now = table3_settings_json(settings);
  if (fs::exists(file)) {
    const Json before = read_json_file(file.string(), "the Table 3 records' plan");
    if (before != now)
      throw Error(file.string() + ": these records were made by another plan (" + before.dump() + "; now " +
                  now.dump() + "): use another records folder, or the same settings");
    return;
  }
  fs::create_directories(records);
  write_file_atomic(file, now.dump(1) + "\n");
}

Table3RecordScan scan_table3_records(const fs::path& records, const Table3Settings& settings) {
  Table3RecordScan scan;
  const Json plan = table3_settings_json(settings);
  std::vector<std::string> names;
  for (const auto& run : plan_of(settings)) names.push_back(sweep_run_name(run));
  const fs::path runs = records / "runs";
  if (!fs::exists(runs)) return scan;
  std::vector<fs::path> folders;
  for (const auto& e : fs::directory_iterator(runs))
    if (e.is_directory() && e.path().filename().string().front() != '.') folders.push_back(e.path());
  std::sort(folders.begin(), folders.end());
  for (const auto& folder : folders) {
    const std::string name = folder.filename().string();
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      scan.problems.push_back(folder.string() + ": not a run of this study's plan");
      continue;
    }
    try {
      scan.records[name] = read_table3_record(folder, plan);
    } catch (const Error& e) {
      scan.problems.push_back(e.what());
    }
  }
  return scan;
}

RunResult run_result(const Table3Record& r) {
  RunResult out;
  out.dev_cross_entropy = r.dev_cross_entropy;
  out.dev_ppl = r.dev_ppl;
  out.dev_bleu = r.bleu;
  out.tokens_per_second = r.tokens_per_second;
  out.steps = static_cast<int>(r.updates);
  out.training_seconds = r.training_seconds;
  // In base's updates, measured beside base on the run's own machine: base is 1; 0 (unknown) without a
  // measurement, and the run is then not read at equal time.
  out.seconds_per_update = r.row == "base" ? 1.0 : r.pace ? r.pace->relative : 0.0;
  out.dev_curve = r.dev_curve;
  out.machine = machine_text(r.machine);
  return out;
}

Table3RecordReport write_table3_records_report(const fs::path& records, const std::string& setup) {
  const Table3Settings s = read_table3_settings(records / "plan.json");
  const Table3RecordScan scan = scan_table3_records(records, s);
  Table3Results results;
  results.plan = plan_of(s);
  for (const auto& [name, record] : scan.records) {
    const Table3Run& run = planned_run(results.plan, name);
    results.results[run.name] = run_result(record);
  }
  std::string text = setup;
  if (!scan.problems.empty()) {
    text += "\n**Records not counted** (trained again by the next `scripts/table3`):\n\n";
    for (const auto& p : scan.problems) text += "- " + p + "\n";
  }
  const auto report = table3_report(results, s.scale, s.training, text);
  for (const auto& [name, svg] : report.charts) {
    write_file_atomic(records / name, svg);
    const std::string png = fs::path(name).replace_extension(".png").string();
    write_file_atomic(records / png, inspect::render_png(svg, 1.5, (records / name).string()));
  }
  write_file_atomic(records / "report.md", report.markdown);
  return {results.results.size(), results.plan.size(), report.charts.size(), scan.problems};
}

double estimated_relative_cost(const ModelConfig& run, const ModelConfig& base) {
  // Multiply-adds per target token at a mean length of ~35 pieces: the encoder's and decoder's
  // projections and feed-forward layers, attention's two products, the output layer.
  const auto cost = [](const ModelConfig& c) {
    const double length = 35;
    const double attention_projections =
        static_cast<double>(c.d_model) * c.qkv_width() + double(c.heads) * c.d_v * c.d_model;
    const double attention_products = length * c.heads * (c.d_k + c.d_v);
    const double ffn = 2.0 * c.d_model * c.d_ff;
    const double encoder = c.encoder_layers * (attention_projections + attention_products + ffn);
    const double decoder = c.decoder_layers * (2 * (attention_projections + attention_products) + ffn);
    return encoder + decoder + static_cast<double>(c.vocab_size) * c.d_model;
  };
  return cost(run) / cost(base);
}

namespace {

// The plan's runs in the order the study trains them, its sweep's: each row's seeds together (plan.json
// lists the second seeds after every row).
std::vector<Table3Run> training_order(const Table3Settings& s) {
  const auto plan = plan_of(s);
  const SweepPlan sweep = parse_sweep(table3_sweep(plan, s.training, s.scale.vocab_size), "the Table 3 study");
  std::vector<Table3Run> order;
  for (const auto& run : sweep.runs) order.push_back(planned_run(plan, run.name));
  return order;
}

}  // namespace

std::string table3_status(const fs::path& study, const fs::path& records) {
  const Table3Settings s = read_table3_settings(records / "plan.json");
  const Table3RecordScan scan = scan_table3_records(records, s);
  const auto plan = training_order(s);
  const MachineInfo here = this_machine();
  std::ostringstream out;
  out << "records: " << records.string() << ": " << scan.records.size() << " of " << plan.size() << " runs finished\n";
  for (const auto& p : scan.problems) out << "  not counted: " << p << "\n";
  // This machine's pace of base: a record of base from this sitting, or the run under way scaled by
  // its estimated cost.
  const ModelConfig base = scaled(table3_row("base").model, s.scale);
  double base_pace = 0;
  std::string pace_from;
  for (const auto& [name, r] : scan.records)
    if (r.row == "base" && r.machine.sitting == here.sitting && r.seconds_per_update > 0)
      base_pace = r.seconds_per_update, pace_from = "base's record of this sitting";
  std::string current;
  for (const auto& run : plan) {
    const std::string name = sweep_run_name(run);
    if (scan.records.count(name)) continue;
    const fs::path log = study / "runs" / name / "train" / "train.jsonl";
    if (current.empty()) {
      current = name;
      if (fs::exists(log)) {
        const TrainingCurves c = read_training_curves(log);
        out << "current run: " << name << ", update " << c.updates << " of " << run.steps << "\n";
        const double pace = steady_seconds_per_update(c.elapsed);
        if (base_pace == 0 && pace > 0 && c.elapsed.size() >= 3)
          base_pace = pace / estimated_relative_cost(run.model, base), pace_from = name + "'s training log";
      } else {
        out << "next run: " << name << " (not started)\n";
      }
    }
  }
  if (current.empty()) {
    out << "every run has its record: the study is complete\n";
    return out.str();
  }
  double seconds = 0;
  for (const auto& run : plan) {
    const std::string name = sweep_run_name(run);
    if (scan.records.count(name)) continue;
    double done = 0;
    const fs::path log = study / "runs" / name / "train" / "train.jsonl";
    if (fs::exists(log)) done = static_cast<double>(read_training_curves(log).updates);
    seconds += (run.steps - done) * estimated_relative_cost(run.model, base);
  }
  if (base_pace > 0)
    out << "left: about " << format_fixed(seconds * base_pace / 3600, 1) << " hours of this idle machine ("
        << machine_text(here) << "; base at " << format_fixed(base_pace, 3) << " s an update from " << pace_from
        << "; the other rows by their estimated cost; scoring not counted)\n";
  else
    out << "left: " << format_fixed(seconds, 0)
        << " base-updates of training (no pace of base measured in this sitting yet to turn them into hours)\n";
  return out.str();
}

}  // namespace attn::study
