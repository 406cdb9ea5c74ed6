// `attn align`: word alignments from cross-attention (or from a baseline) in the Pharaoh "i-j"
// format, and their precision, recall and AER against a gold standard. docs/alignment.md.
// The work is inspect/alignment_run.h's; forced decoding for --model is decode/forced_pairs.h's.
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "core/atomic_file.h"
#include "decode/forced_pairs.h"
#include "decode/model_directory.h"
#include "inspect/alignment_request.h"
#include "inspect/alignment_run.h"
#include "inspect/attention_record.h"

namespace attn::cli {
namespace {

struct AlignArgs {
  inspect::AlignmentRequest request;
  int batch_sentences = 32;  // --model
  std::string output;        // "" = stdout
};

void run_align_command(const AlignArgs& args) {
  const inspect::AlignmentRequest& r = args.request;
  inspect::check_alignment_request(r);
  std::string text;
  if (!r.model.empty()) {
    // Forced decoding of the given pairs, keeping every layer and head of cross-attention.
    const LoadedModel loaded = load_model_directory(r.model);
    text = inspect::align_attention_records(
        r, forced_cross_attention_records(loaded, r.source, r.target, args.batch_sentences), r.source);
  } else if (!r.attention.empty()) {
    text = inspect::align_attention_records(r, inspect::read_attention_records(r.attention), r.attention);
  } else if (!r.baseline.empty()) {
    text = inspect::align_by_baseline(r);
  } else {
    text = inspect::score_alignment_files(r);
  }
  if (args.output.empty()) {
    std::cout << text;
  } else {
    write_file_atomic(args.output, text);
  }
}

}  // namespace

void add_align_command(CLI::App& app) {
  auto args = std::make_shared<AlignArgs>();
  CLI::App* command =
      app.add_subcommand("align",
                         "Word alignments from cross-attention or a baseline (Pharaoh i-j lines), and their precision, "
                         "recall and AER against a gold standard (docs/alignment.md).");
  command->add_option("-m,--model", args->request.model,
                      "A model folder: align the --source/--target pairs by its cross-attention (forced decoding)");
  add_batch_sentences_option(command, args->batch_sentences, "--model: ");
  command->add_option("--attention", args->request.attention, "Attention records (attn translate/score --attention)");
  command->add_option("--layer", args->request.layer, "Cross-attention layer (default: the last)")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--head", args->request.head, "A head number, or 'mean' for the mean of the layer's heads")
      ->capture_default_str();
  command
      ->add_option("--threshold", args->request.threshold,
                   "0: link each target word to its argmax source word; > 0: to every source word whose "
                   "attention is at least this")
      ->check(finite_in(0, 1))
      ->capture_default_str();
  command->add_option("--baseline", args->request.baseline, "A baseline instead of attention: diagonal or ibm1")
      ->check(CLI::IsMember({"diagonal", "ibm1"}));
  command->add_option("--source", args->request.source,
                      "--model and baselines: the source sentences (words split at spaces)");
  command->add_option("--target", args->request.target,
                      "--model and baselines: the target sentences, one per source line");
  command->add_option("--train-source", args->request.train_source, "ibm1: more source text to train on");
  command->add_option("--train-target", args->request.train_target, "ibm1: its target side");
  command->add_option("--iterations", args->request.iterations, "ibm1: EM iterations")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  command->add_option("--gold", args->request.gold,
                      "Gold alignments: i-j sure links, i?j possible links; prints scores");
  command->add_option("--gold-tagged", args->request.gold_tagged,
                      "Words the gold tags, per line 'source indices ||| target indices'; links touching "
                      "other words are not scored");
  command->add_option("--alignment", args->request.alignments, "Alignment files to score against --gold")
      ->expected(1, -1);
  command->add_flag("--sweep", args->request.sweep, "With --attention and --gold: scores of every layer and head");
  command->add_flag("--json", args->request.json, "Scores as JSON");
  command->add_option("-o,--output", args->output, "Write here (atomically) instead of stdout");
  command->callback([args] { run_align_command(*args); });
}

}  // namespace attn::cli
