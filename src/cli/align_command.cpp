// `attn align`: word alignments from cross-attention (or from a baseline) in the Pharaoh "i-j"
// format, and their precision, recall and AER against a gold standard. docs/alignment.md.
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/attention_options.h"
#include "cli/commands.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/text_file.h"
#include "inspect/alignment_score.h"
#include "inspect/attention_record.h"
#include "inspect/ibm_model1.h"
#include "inspect/word_alignment.h"

namespace attn::cli {
namespace {

using inspect::Alignment;
using inspect::AlignmentScore;
using inspect::AttentionRecord;

struct AlignArgs {
  std::string model, attention, baseline, source, target, train_source, train_target;
  std::string gold, gold_tagged, output;
  std::vector<std::string> alignments;
  int layer = -1;
  std::string head = "mean";
  double threshold = 0;
  int iterations = 5;
  int batch_sentences = 32;
  bool sweep = false, json = false;
};

void write_output(const AlignArgs& args, const std::string& text) {
  if (args.output.empty()) {
    std::cout << text;
  } else {
    write_file_atomic(args.output, text);
  }
}

std::string pharaoh_lines(const std::vector<Alignment>& alignments) {
  std::string text;
  for (const Alignment& alignment : alignments) text += inspect::format_pharaoh(alignment) + "\n";
  return text;
}

void check_same_lines(const std::string& a, std::size_t a_lines, const std::string& b, std::size_t b_lines,
                      const char* what = "sentence") {
  if (a_lines != b_lines) {
    throw Error(a + " has " + std::to_string(a_lines) + " lines but " + b + " has " + std::to_string(b_lines) +
                "; they must have one line per " + what);
  }
}

int parse_head(const std::string& head) {
  if (head == "mean") return inspect::kMeanOfHeads;
  if (!head.empty() && head.size() < 10 && head.find_first_not_of("0123456789") == std::string::npos) {
    return std::stoi(head);
  }
  throw Error("--head: expected a head number (0, 1, ...) or 'mean', not '" + head + "'");
}

// ---- Scoring against the gold standard ------------------------------------------------------

struct Gold {
  std::vector<inspect::GoldAlignment> links;
  std::vector<inspect::TaggedWords> tagged;  // empty: every word is judged
};

Gold read_gold(const AlignArgs& args) {
  Gold gold;
  gold.links = inspect::read_pharaoh_file(args.gold);
  if (!args.gold_tagged.empty()) {
    gold.tagged = inspect::read_tagged_file(args.gold_tagged);
    check_same_lines(args.gold, gold.links.size(), args.gold_tagged, gold.tagged.size());
  }
  return gold;
}

AlignmentScore score(const Gold& gold, const std::vector<Alignment>& predicted, const std::string& gold_path,
                     const std::string& predicted_name) {
  check_same_lines(gold_path, gold.links.size(), predicted_name, predicted.size());
  return inspect::score_alignments(predicted, gold.links, gold.tagged);
}

std::string percent(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", 100 * x);
  return buffer;
}

nlohmann::ordered_json score_json(const AlignmentScore& s) {
  return {{"precision", 100 * s.precision()},
          {"recall", 100 * s.recall()},
          {"aer", 100 * s.aer()},
          {"predicted", s.predicted},
          {"sure", s.sure},
          {"predicted_in_sure", s.predicted_in_sure},
          {"predicted_in_possible", s.predicted_in_possible}};
}

std::string score_columns(const AlignmentScore& s) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%9s  %6s  %6s", percent(s.precision()).c_str(), percent(s.recall()).c_str(),
                percent(s.aer()).c_str());
  return buffer;
}

// One row per named alignment: "precision  recall     AER  alignment".
void report_scores(const AlignArgs& args, const std::vector<std::pair<std::string, AlignmentScore>>& rows) {
  if (args.json) {
    nlohmann::ordered_json json = nlohmann::ordered_json::array();
    for (const auto& [name, s] : rows) {
      nlohmann::ordered_json row = {{"alignment", name}};
      row.update(score_json(s));
      json.push_back(std::move(row));
    }
    write_output(args, json.dump(1) + "\n");
    return;
  }
  std::string text = "precision  recall     AER  alignment\n";
  for (const auto& [name, s] : rows) text += score_columns(s) + "  " + name + "\n";
  write_output(args, text);
}

// ---- Alignments from attention records ------------------------------------------------------

// Alignments of every record; errors name `origin` and the record's line there.
std::vector<Alignment> align_all(const std::vector<AttentionRecord>& records, const std::string& origin,
                                 const inspect::AlignmentOptions& options) {
  std::vector<Alignment> alignments;
  alignments.reserve(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    try {
      alignments.push_back(inspect::align_record(records[i], options));
    } catch (const Error& e) {
      throw_at(origin, i + 1, e.what());
    }
  }
  return alignments;
}

// P/R/AER for every layer × (each head and the mean); the lowest AER of each layer is marked.
void sweep(const AlignArgs& args, const std::vector<AttentionRecord>& records, const std::string& origin,
           const Gold& gold) {
  if (records.empty()) throw_in(origin, "no records to sweep");
  struct Row {
    int layer, head;
    AlignmentScore score;
    bool best = false;
  };
  std::vector<Row> rows;
  const int layers = inspect::cross_layer_count(records.front());
  if (layers == 0) throw_at(origin, 1, "the record has no cross-attention");
  for (int layer = 0; layer < layers; ++layer) {
    const std::size_t first = rows.size();
    const int heads = inspect::cross_head_count(records.front(), layer);
    for (int head = 0; head <= heads; ++head) {
      inspect::AlignmentOptions options;
      options.layer = layer;
      options.head = head == heads ? inspect::kMeanOfHeads : head;
      options.threshold = args.threshold;
      rows.push_back({layer, options.head, score(gold, align_all(records, origin, options), args.gold, origin)});
    }
    std::size_t best = first;
    for (std::size_t r = first; r < rows.size(); ++r) {
      if (rows[r].score.aer() < rows[best].score.aer()) best = r;  // ties: the first (lowest head)
    }
    rows[best].best = true;
  }
  const auto head_name = [](int head) {
    return head == inspect::kMeanOfHeads ? std::string("mean") : std::to_string(head);
  };
  if (args.json) {
    nlohmann::ordered_json json = nlohmann::ordered_json::array();
    for (const Row& row : rows) {
      nlohmann::ordered_json entry = {{"layer", row.layer}};
      entry["head"] =
          row.head == inspect::kMeanOfHeads ? nlohmann::ordered_json("mean") : nlohmann::ordered_json(row.head);
      entry.update(score_json(row.score));
      entry["best_in_layer"] = row.best;
      json.push_back(std::move(entry));
    }
    write_output(args, json.dump(1) + "\n");
    return;
  }
  std::string text = "layer  head  precision  recall     AER\n";
  for (const Row& row : rows) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%5d  %4s  ", row.layer, head_name(row.head).c_str());
    text += buffer + score_columns(row.score) + (row.best ? "  *" : "") + "\n";
  }
  text += "* the lowest AER of the layer\n";
  write_output(args, text);
}

// Aligns (or, with --gold, scores; with --sweep, scores every layer and head) the records of either
// source of attention: a file (--attention) or forced decoding by a model (--model DIR --source F
// --target F), whose records are built in memory.
// `origin` names the records in errors (record i is "origin:i+1").
void run_on_records(const AlignArgs& args, const std::vector<AttentionRecord>& records, const std::string& origin) {
  if (args.sweep) {
    sweep(args, records, origin, read_gold(args));
    return;
  }
  inspect::AlignmentOptions options;
  options.layer = args.layer;
  options.head = parse_head(args.head);
  options.threshold = args.threshold;
  const std::vector<Alignment> alignments = align_all(records, origin, options);
  if (args.gold.empty()) {
    write_output(args, pharaoh_lines(alignments));
  } else {
    report_scores(args, {{origin, score(read_gold(args), alignments, args.gold, origin)}});
  }
}

// ---- Baselines ------------------------------------------------------------------------------

std::vector<std::vector<std::string>> read_words(const std::string& path) {
  std::vector<std::vector<std::string>> sentences;
  for (const std::string& line : read_text_lines(path)) sentences.push_back(inspect::split_words(line));
  return sentences;
}

std::vector<Alignment> baseline_alignments(const AlignArgs& args) {
  if (args.source.empty() || args.target.empty()) throw Error("--baseline needs --source and --target");
  const auto source = read_words(args.source), target = read_words(args.target);
  check_same_lines(args.source, source.size(), args.target, target.size());
  std::vector<Alignment> alignments;
  if (args.baseline == "diagonal") {
    for (std::size_t k = 0; k < source.size(); ++k) {
      alignments.push_back(
          inspect::diagonal_alignment(static_cast<int>(source[k].size()), static_cast<int>(target[k].size())));
    }
    return alignments;
  }
  // Model 1 learns from the training text plus the sentences to align (no labels are used, so
  // this is the usual practice for unsupervised aligners such as GIZA++ and fast_align).
  if (args.train_source.empty() != args.train_target.empty()) {
    throw Error("--train-source and --train-target go together");
  }
  auto train_source = args.train_source.empty() ? decltype(source){} : read_words(args.train_source);
  auto train_target = args.train_target.empty() ? decltype(target){} : read_words(args.train_target);
  check_same_lines(args.train_source, train_source.size(), args.train_target, train_target.size());
  train_source.insert(train_source.end(), source.begin(), source.end());
  train_target.insert(train_target.end(), target.begin(), target.end());
  inspect::IbmModel1Options options;
  options.iterations = args.iterations;
  const inspect::IbmModel1 model = inspect::IbmModel1::train(train_source, train_target, options);
  for (std::size_t k = 0; k < source.size(); ++k) alignments.push_back(model.viterbi(source[k], target[k]));
  return alignments;
}

void check_arguments(const AlignArgs& args) {
  const int inputs = !args.model.empty() + !args.attention.empty() + !args.baseline.empty() + !args.alignments.empty();
  if (inputs != 1) {
    throw Error(
        "give exactly one of --model DIR, --attention FILE, --baseline diagonal|ibm1, or --gold GOLD "
        "--alignment FILE...");
  }
  if (!args.model.empty() && (args.source.empty() || args.target.empty()))
    throw Error("--model needs --source and --target (the sentence pairs to align)");
  if (!args.alignments.empty() && args.gold.empty()) throw Error("--alignment needs --gold");
  if (args.sweep && ((args.attention.empty() && args.model.empty()) || args.gold.empty()))
    throw Error("--sweep needs --attention or --model, and --gold");
  if (!args.gold_tagged.empty() && args.gold.empty()) throw Error("--gold-tagged needs --gold");
  if (args.json && args.gold.empty()) throw Error("--json applies to scores: give --gold");
  if (args.attention.empty() && args.model.empty() && (args.layer >= 0 || args.head != "mean" || args.threshold != 0)) {
    throw Error("--layer, --head and --threshold apply to --attention and --model");
  }
  if (args.baseline.empty() && args.model.empty() && !(args.source + args.target).empty()) {
    throw Error("--source and --target apply to --model and --baseline");
  }
  if (args.baseline.empty() && !(args.train_source + args.train_target).empty()) {
    throw Error("--train-source and --train-target apply to --baseline ibm1");
  }
  if (args.baseline == "diagonal" && !(args.train_source + args.train_target).empty()) {
    throw Error("the diagonal baseline learns nothing: --train-source and --train-target apply to --baseline ibm1");
  }
}

void run_align_command(const AlignArgs& args) {
  check_arguments(args);
  if (!args.model.empty()) {
    // Forced decoding of the given pairs, keeping every layer and head of cross-attention.
    const LoadedModel loaded = load_model_directory(args.model);
    const AttentionSelection cross;
    const ForcedPairs pairs = force_decode_files(loaded, args.source, args.target, args.batch_sentences, &cross);
    std::vector<AttentionRecord> records;
    for (std::size_t i = 0; i < pairs.results.size(); ++i) records.push_back(pairs.record(loaded, i));
    run_on_records(args, records, args.source);
    return;
  }
  if (!args.attention.empty()) {
    run_on_records(args, inspect::read_attention_records(args.attention), args.attention);
    return;
  }
  if (!args.baseline.empty()) {
    const std::vector<Alignment> alignments = baseline_alignments(args);
    if (args.gold.empty()) {
      write_output(args, pharaoh_lines(alignments));
    } else {
      const std::string name = args.baseline + " baseline";
      report_scores(args, {{name, score(read_gold(args), alignments, args.gold, args.source)}});
    }
    return;
  }
  const Gold gold = read_gold(args);
  std::vector<std::pair<std::string, AlignmentScore>> rows;
  for (const std::string& path : args.alignments) {
    std::vector<Alignment> predicted;
    for (inspect::GoldAlignment& links : inspect::read_pharaoh_file(path)) {
      predicted.push_back(std::move(links.possible));
    }
    rows.emplace_back(path, score(gold, predicted, args.gold, path));
  }
  report_scores(args, rows);
}

}  // namespace

void add_align_command(CLI::App& app) {
  auto args = std::make_shared<AlignArgs>();
  CLI::App* command =
      app.add_subcommand("align",
                         "Word alignments from cross-attention or a baseline (Pharaoh i-j lines), and their precision, "
                         "recall and AER against a gold standard (docs/alignment.md).");
  command->add_option("-m,--model", args->model,
                      "A model folder: align the --source/--target pairs by its cross-attention (forced decoding)");
  command->add_option("--batch-sentences", args->batch_sentences, "--model: sentences per batch")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_option("--attention", args->attention, "Attention records (attn translate/score --attention)");
  command->add_option("--layer", args->layer, "Cross-attention layer (default: the last)")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--head", args->head, "A head number, or 'mean' for the mean of the layer's heads")
      ->capture_default_str();
  command
      ->add_option("--threshold", args->threshold,
                   "0: link each target word to its argmax source word; > 0: to every source word whose "
                   "attention is at least this")
      ->check(finite_in(0, 1))
      ->capture_default_str();
  command->add_option("--baseline", args->baseline, "A baseline instead of attention: diagonal or ibm1")
      ->check(CLI::IsMember({"diagonal", "ibm1"}));
  command->add_option("--source", args->source, "--model and baselines: the source sentences (words split at spaces)");
  command->add_option("--target", args->target, "--model and baselines: the target sentences, one per source line");
  command->add_option("--train-source", args->train_source, "ibm1: more source text to train on");
  command->add_option("--train-target", args->train_target, "ibm1: its target side");
  command->add_option("--iterations", args->iterations, "ibm1: EM iterations")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  command->add_option("--gold", args->gold, "Gold alignments: i-j sure links, i?j possible links; prints scores");
  command->add_option("--gold-tagged", args->gold_tagged,
                      "Words the gold tags, per line 'source indices ||| target indices'; links touching "
                      "other words are not scored");
  command->add_option("--alignment", args->alignments, "Alignment files to score against --gold")->expected(1, -1);
  command->add_flag("--sweep", args->sweep, "With --attention and --gold: scores of every layer and head");
  command->add_flag("--json", args->json, "Scores as JSON");
  command->add_option("-o,--output", args->output, "Write here (atomically) instead of stdout");
  command->callback([args] { run_align_command(*args); });
}

}  // namespace attn::cli
