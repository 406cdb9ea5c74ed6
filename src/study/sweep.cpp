#include "study/sweep.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/json_file.h"
#include "decode/search_options.h"
#include "train/train_options.h"

namespace attn::study {
namespace {

using Json = nlohmann::ordered_json;

// The sweep decides these for every run: the data and the folder (scripts/sweep), the budget and
// the seed (the sweep file's own keys).
const std::set<std::string>& sweep_owned_keys() {
  static const std::set<std::string> keys = {"train_source", "train_target",        "valid_source",
                                             "valid_target", "vocabulary",          "run_dir",
                                             "max_steps",    "time_budget_minutes", "seed"};
  return keys;
}

// A value as it reads in a run's name: numbers as JSON writes them, strings as they are.
std::string value_text(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

bool name_safe(const std::string& s) {
  return !s.empty() && s.size() <= 64 && s.front() != '.' && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

// Checks a settings object of the file (base, one variant, one grid key): known keys, none of the
// sweep's own. The values are checked when each run's options are (see check_run).
void check_keys(const Json& settings, const std::string& source, const std::string& where, bool variant) {
  if (!settings.is_object()) throw_in(source, "'" + where + "' must be a JSON object");
  TrainOptions probe;
  const auto fields = option_fields(probe);
  for (auto it = settings.begin(); it != settings.end(); ++it) {
    const std::string& key = it.key();
    if (variant && (key == "name" || key == "seeds" || key == "budget")) continue;
    if (key == "preset" || key == "vocabulary_size") continue;
    if (sweep_owned_keys().count(key))
      throw_in(source, "'" + where + "." + key + "': the sweep sets this itself (data paths by scripts/sweep, " +
                           "the budget by \"budget\", the seed by \"seeds\")");
    if (std::none_of(fields.begin(), fields.end(), [&](const OptionField& f) { return f.name == key; }))
      throw_in(source, "'" + where + "': unknown option '" + key + "' (the options of attn train --dump-config, " +
                           "\"preset\" or \"vocabulary_size\")");
  }
}

int whole(const Json& v, const std::string& source, const std::string& key, long long lo, long long hi) {
  return static_cast<int>(json_whole_number(v, source, key, lo, hi));
}

// A number or a list of numbers, each checked by `check` (which throws naming the key).
std::vector<Json> one_or_list(const Json& v, const std::string& source, const std::string& key) {
  if (v.is_array()) {
    if (v.empty()) throw_in(source, "'" + key + "' is an empty list: it asks for zero runs");
    return std::vector<Json>(v.begin(), v.end());
  }
  return {v};
}

SweepScoring parse_scoring(const Json& j, const std::string& source) {
  SweepScoring s;
  if (j.is_null()) return s;
  if (!j.is_object()) throw_in(source, "'score' must be a JSON object");
  std::vector<int> beams{4};
  std::vector<double> alphas{0.6};
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string key = "score." + it.key();
    if (it.key() == "average_last") {
      s.average_last = whole(*it, source, key, 1, 1000);
    } else if (it.key() == "dev_verses") {
      s.dev_verses = whole(*it, source, key, 0, 100000000);
    } else if (it.key() == "dev_pick") {
      if (!it->is_string() || (*it != "first" && *it != "spread"))
        throw_in(source, "'" + key + "' must be \"first\" or \"spread\", got " + it->dump());
      s.dev_pick = it->get<std::string>();
    } else if (it.key() == "beam") {
      // Read here as numbers; their limits are those of every face (checked below).
      beams.clear();
      for (const Json& b : one_or_list(*it, source, key))
        beams.push_back(whole(b, source, key, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
    } else if (it.key() == "alpha") {
      alphas.clear();
      for (const Json& a : one_or_list(*it, source, key)) {
        if (!a.is_number()) throw_in(source, "'" + key + "' must be a number, or a list of them, got " + a.dump());
        alphas.push_back(a.get<double>());
      }
    } else {
      throw_in(source, "unknown key '" + key + "' (score has average_last, dev_verses, dev_pick, beam, alpha)");
    }
  }
  s.decodings.clear();
  for (int b : beams)
    for (double a : alphas) {
      SearchOptions search;
      search.beam_size = b;
      search.length_penalty = static_cast<float>(a);
      if (const auto problem = check(search)) throw_in(source, "'score." + problem->field + "': " + problem->message);
      SweepDecoding d{b, a};
      for (const auto& e : s.decodings)
        if (e.label() == d.label()) throw_in(source, "'score' asks for " + d.label() + " twice");
      s.decodings.push_back(d);
    }
  return s;
}

SweepBudget parse_budget(const Json& j, const std::string& source, const std::string& key = "budget") {
  if (!j.is_object() || j.size() != 1 || !(j.contains("updates") || j.contains("minutes")))
    throw_in(source, "'" + key + "' must be {\"updates\": N} or {\"minutes\": M}");
  SweepBudget b;
  if (j.contains("updates")) {
    b.updates = whole(j.at("updates"), source, key + ".updates", 1, 100000000);
  } else {
    const Json& m = j.at("minutes");
    if (!m.is_number() || !std::isfinite(m.get<double>()) || m.get<double>() <= 0 || m.get<double>() > 100000)
      throw_in(source, "'" + key + ".minutes' must be a number above 0, got " + m.dump());
    b.minutes = m.get<double>();
  }
  return b;
}

std::vector<std::uint64_t> parse_seeds(const Json& j, const std::string& source, const std::string& key = "seeds") {
  if (j.is_null()) return {1};
  std::vector<std::uint64_t> seeds;
  if (j.is_array()) {
    if (j.empty()) throw_in(source, "'" + key + "' is an empty list: it asks for zero runs");
    for (const Json& s : j) {
      const auto seed = static_cast<std::uint64_t>(whole(s, source, key, 1, 2147483647));
      if (std::find(seeds.begin(), seeds.end(), seed) != seeds.end())
        throw_in(source, "'" + key + "' names seed " + std::to_string(seed) + " twice");
      seeds.push_back(seed);
    }
  } else {
    const int n = whole(j, source, key, 1, 100);
    for (int s = 1; s <= n; ++s) seeds.push_back(static_cast<std::uint64_t>(s));
  }
  return seeds;
}

// The options of one run: what the sweep decides unless the file says otherwise, the base, the
// variant, the grid point, then the budget and the seed.
Json run_options(const Json& base, const Json& variant, const Json& point, const SweepBudget& budget,
                 const SweepScoring& scoring, std::uint64_t seed) {
  Json o;
  o["early_stopping"] = 0;
  o["valid_translate"] = 0;
  if (budget.updates > 0) {
    const std::int64_t u = budget.updates;
    o["valid_every"] = std::max<std::int64_t>(1, u / 4);
    o["log_every"] = std::max<std::int64_t>(1, std::min<std::int64_t>(50, u / 20));
    // The averaged checkpoints span the last fifth of the run (the paper: the last 5 of 100K updates
    // written every 10 minutes, about the last twentieth).
    o["save_every"] = std::max<std::int64_t>(1, u / (5 * std::max(scoring.average_last, 1)));
    o["save_every_minutes"] = 0;
  } else {
    o["valid_every"] = 500;
    o["save_every"] = 0;
    o["save_every_minutes"] = std::max(0.25, budget.minutes / (5.0 * std::max(scoring.average_last, 1)));
  }
  o["keep_checkpoints"] = std::max(scoring.average_last, 2);
  for (const Json* layer : {&base, &variant, &point})
    for (auto it = layer->begin(); it != layer->end(); ++it)
      if (it.key() != "name" && it.key() != "vocabulary_size" && it.key() != "seeds" && it.key() != "budget")
        o[it.key()] = *it;
  if (budget.updates > 0)
    o["max_steps"] = budget.updates;
  else
    o["time_budget_minutes"] = budget.minutes;
  o["seed"] = seed;
  return o;
}

// Checks a run's options as attn train would (unknown keys, types, ranges, a model that fits), and
// gives its parameter count. Errors name the sweep file and the run.
double check_run(const Json& options, int vocabulary_size, int average_last, const std::string& source) {
  TrainOptions t;
  t.model.vocab_size = vocabulary_size;
  apply_options_json(nlohmann::json::parse(options.dump()), t, source);
  t.train_source = t.train_target = t.vocabulary = "given by scripts/sweep";
  t.valid_source = t.valid_target = t.vocabulary;
  try {
    validate(t);
  } catch (const Error& e) {
    throw_in(source, e.what());
  }
  if (t.keep_checkpoints < average_last)
    throw_in(source, "keep_checkpoints " + std::to_string(t.keep_checkpoints) + " is below score.average_last " +
                         std::to_string(average_last) + ": the checkpoints to average would be gone");
  if (t.ema_decay > 0 && average_last > 1) {
    char text[320];
    std::snprintf(text, sizeof text,
                  "ema_decay %g with score.average_last %d: the checkpoints hold the weights, not their moving "
                  "average, so averaging them would score a model without it; score the average as trained "
                  "(average_last 1)",
                  t.ema_decay, average_last);
    throw_in(source, text);
  }
  return t.model.parameter_count();
}

}  // namespace

std::string SweepDecoding::alpha_text() const {
  char text[32];
  return std::string(text, std::to_chars(text, text + sizeof text, alpha).ptr);
}

std::string SweepDecoding::label() const { return "beam" + std::to_string(beam) + "-alpha" + alpha_text(); }

SweepPlan parse_sweep(const Json& file, const std::string& source) {
  if (!file.is_object()) throw_in(source, "a sweep file must be a JSON object");
  static const std::set<std::string> top = {"title", "base", "grid", "variants", "budget", "seeds", "score"};
  for (auto it = file.begin(); it != file.end(); ++it)
    if (!top.count(it.key()))
      throw_in(source,
               "unknown key '" + it.key() + "' (a sweep has title, base, grid, variants, budget, seeds, score)");
  SweepPlan plan;
  plan.file = file;
  if (file.contains("title")) {
    if (!file.at("title").is_string()) throw_in(source, "'title' must be a string");
    plan.title = file.at("title").get<std::string>();
  }
  if (!file.contains("budget")) throw_in(source, "'budget' is missing: {\"updates\": N} or {\"minutes\": M}");
  plan.budget = parse_budget(file.at("budget"), source);
  plan.scoring = parse_scoring(file.contains("score") ? file.at("score") : Json(), source);
  plan.seeds = parse_seeds(file.contains("seeds") ? file.at("seeds") : Json(), source);

  const Json base = file.contains("base") ? file.at("base") : Json::object();
  check_keys(base, source, "base", false);

  // Variants: named settings objects.
  std::vector<Json> variants;
  if (file.contains("variants")) {
    const Json& v = file.at("variants");
    if (!v.is_array()) throw_in(source, "'variants' must be a list of objects, each with a \"name\"");
    if (v.empty()) throw_in(source, "'variants' is an empty list: it asks for zero runs");
    std::set<std::string> names;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string where = "variants[" + std::to_string(i) + "]";
      check_keys(v[i], source, where, true);
      if (!v[i].contains("name") || !v[i].at("name").is_string() || !name_safe(v[i].at("name").get<std::string>()))
        throw_in(source, "'" + where + ".name' must be a string of letters, digits, '-', '_' and '.' (a folder name)");
      if (!names.insert(v[i].at("name").get<std::string>()).second)
        throw_in(source, "'" + where + ".name': two variants are called " + v[i].at("name").dump());
      variants.push_back(v[i]);
    }
    plan.knobs.push_back("variant");
  }

  // The grid: every combination of its lists, the first key varying slowest.
  std::vector<Json> points{Json::object()};
  if (file.contains("grid")) {
    const Json& g = file.at("grid");
    if (!g.is_object()) throw_in(source, "'grid' must be a JSON object of lists");
    if (g.empty()) throw_in(source, "'grid' is empty: name a key and its values, or leave 'grid' out");
    for (auto it = g.begin(); it != g.end(); ++it) {
      const std::string key = it.key(), where = "grid." + key;
      check_keys(Json{{key, nullptr}}, source, "grid", false);
      if (!it->is_array()) throw_in(source, "'" + where + "' must be a list of values");
      if (it->empty()) throw_in(source, "'" + where + "' is an empty list: it asks for zero runs");
      for (const auto& variant : variants)
        if (variant.contains(key))
          throw_in(source, "'" + where + "' is also set by variant " + variant.at("name").dump() +
                               ": a key is varied by the grid or by the variants, not both");
      std::set<std::string> seen;
      for (const Json& value : *it)
        if (!seen.insert(value.dump()).second) throw_in(source, "'" + where + "' lists " + value.dump() + " twice");
      std::vector<Json> next;
      for (const Json& p : points)
        for (const Json& value : *it) {
          Json q = p;
          q[key] = value;
          next.push_back(q);
        }
      points = std::move(next);
      plan.knobs.push_back(key);
    }
  }
  if (variants.empty()) variants.push_back(Json{{"name", "base"}});

  const int base_vocabulary = base.contains("vocabulary_size")
                                  ? whole(base.at("vocabulary_size"), source, "base.vocabulary_size", 100, 1000000)
                                  : 8000;
  for (const Json& variant : variants) {
    for (const Json& point : points) {
      std::string label;
      Json values;
      if (plan.knobs.empty() || plan.knobs.front() == "variant") {
        if (!plan.knobs.empty()) values["variant"] = variant.at("name");
        label = variant.at("name").get<std::string>();
      }
      for (auto it = point.begin(); it != point.end(); ++it) {
        values[it.key()] = *it;
        label += (label.empty() ? "" : ",") + it.key() + "=" + value_text(*it);
      }
      // A variant may have its own seeds or budget (Table 3's big row trains 3x as long, and only some
      // rows run a second seed); the report names them.
      const std::string where = "variant " + variant.at("name").dump();
      const std::vector<std::uint64_t> seeds =
          variant.contains("seeds") ? parse_seeds(variant.at("seeds"), source, where + ": seeds") : plan.seeds;
      const SweepBudget budget =
          variant.contains("budget") ? parse_budget(variant.at("budget"), source, where + ": budget") : plan.budget;
      int vocabulary = base_vocabulary;
      for (const Json* layer : {&variant, &point})
        if (layer->contains("vocabulary_size"))
          vocabulary = whole(layer->at("vocabulary_size"), source, label + ": vocabulary_size", 100, 1000000);
      for (std::uint64_t seed : seeds) {
        SweepRun run;
        run.point = label;
        run.seed = seed;
        run.name = label + ".seed" + std::to_string(seed);
        run.values = values;
        run.vocabulary_size = vocabulary;
        run.budget = budget;
        run.options = run_options(base, variant, point, budget, plan.scoring, seed);
        run.parameters = check_run(run.options, vocabulary, plan.scoring.average_last, source + ": run " + run.name);
        if (run.name.size() > 200 || run.name.find('/') != std::string::npos)
          throw_in(source, "run " + run.name + ": the values make an unusable folder name");
        plan.runs.push_back(std::move(run));
      }
    }
  }
  return plan;
}

SweepPlan read_sweep_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw_in(path, "cannot open the sweep file");
  Json file;
  try {
    file = Json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw_in(path, std::string("not valid JSON: ") + e.what());
  }
  return parse_sweep(file, path);
}

void check_vocabulary_size(const SweepPlan& plan, int size, const std::string& file) {
  for (const auto& r : plan.runs)
    if (r.vocabulary_size != size)
      throw_in(file, "has " + std::to_string(size) + " pieces, but run " + r.name + " of the sweep asks for " +
                         std::to_string(r.vocabulary_size) + " (vocabulary_size)");
}

void write_sweep_plan(const SweepPlan& plan, const std::filesystem::path& run) {
  const std::filesystem::path recorded = run / "sweep.json";
  if (std::filesystem::exists(recorded)) {
    const SweepPlan before = read_planned_sweep(run);
    if (before.file != plan.file)
      throw_in(recorded.string(), "this sweep folder was planned from another sweep file (" + before.file.dump() +
                                      "; now " + plan.file.dump() + "): use another folder, or the same file");
  } else {
    std::filesystem::create_directories(run);
    write_file_atomic(recorded, plan.file.dump(1) + "\n");
  }
  for (const auto& r : plan.runs) {
    const std::filesystem::path folder = run / "runs" / r.name;
    std::filesystem::create_directories(folder);
    write_file_atomic(folder / "options.json", r.options.dump(1) + "\n");
  }
}

SweepPlan read_planned_sweep(const std::filesystem::path& run) {
  return read_sweep_file((run / "sweep.json").string());
}

}  // namespace attn::study
