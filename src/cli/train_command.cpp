// `attn train`: train a model; every option of train_options.h is a --flag, a config-file key
// and a line of --dump-config. Precedence: defaults < --preset < --config file < flags.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/error.h"
#include "train/checkpoint.h"
#include "train/dist/communicator.h"
#include "train/dist/peer_watch.h"
#include "train/stop_signals.h"
#include "train/trainer.h"

namespace attn::cli {
namespace {

struct TrainArguments {
  std::string config_file;
  std::string preset;
  bool resume = false;
  bool resume_with_changes = false;
  bool dump_config = false;
  std::map<std::string, std::string> given;  // --name value, as typed
  TrainOptions scratch;                      // only to enumerate the fields
};

// "; continue from the last checkpoint with --resume" where the run folder has one.
std::string resume_hint(const TrainOptions& options) {
  try {
    const auto folder = std::filesystem::path(options.run_dir) / "checkpoints";
    if (std::filesystem::exists(folder) && !list_checkpoints(folder).empty())
      return "; continue from the last checkpoint with --resume";
  } catch (const std::exception&) {
  }
  return "";
}

// An end every rank meets together (an error each raised, a stop each made; one process alone too):
// rank 0 tells it, every rank exits non-zero normally. Rank 0 tells now, not after its watch and MPI have wound down,
// and the others wait until it has (the gather): a rank that exits first makes mpirun end the job, and the message was
// lost with it.
[[noreturn]] void fail_together(dist::Communicator& ranks, const std::string& message) {
  if (ranks.rank() == 0) std::cerr << "attn: error: " << message << std::endl;
  ranks.gather_all("");
  throw QuietFailure{};
}

void run(const TrainArguments& args) {
  const TrainOptions options = resolve_train_options(args.preset, args.config_file, args.given);
  if (args.dump_config) {
    std::cout << options_to_json(options).dump(2) << "\n";
    return;
  }
  // Before any thread starts (MPI's, OpenMP's): they inherit the blocked stop signals.
  const StopSignals signals;
  // Under mpirun every rank runs this; alone, one process.
  const std::unique_ptr<dist::Communicator> ranks = dist::world();
  // A peer gone silent (node down, link cut): this rank ends at once, from the watch's thread; the
  // main thread may be waiting in a collective that will never end, so no MPI call, no unwinding.
  const dist::PeerWatch watch(
      *ranks, options.peer_timeout_seconds,
      [&](const std::string& message) {
        std::cerr << "attn: error on rank " << ranks->rank() << " of " << ranks->size() << ": " << message
                  << "\nattn: stopping this rank" << resume_hint(options)
                  << " (with the ranks left: docs/distributed.md, \"Faults\")" << std::endl;
        std::_Exit(1);
      },
      [&](const std::string& message) {
        std::cerr << "attn: warning on rank " << ranks->rank() << ": " << message << std::endl;
      });
  TrainResult r;
  try {
    r = Trainer(options, std::cerr, *ranks).run(args.resume || args.resume_with_changes, args.resume_with_changes);
  } catch (const dist::JobError& e) {
    fail_together(*ranks, e.what());
  } catch (const std::exception& e) {
    if (ranks->size() == 1) throw;
    // This rank alone: the others may wait for it in a collective, so the whole job ends now.
    std::cerr << "attn: error on rank " << ranks->rank() << " of " << ranks->size() << ": " << e.what()
              << "\nattn: stopping every rank" << resume_hint(options) << std::endl;
    ranks->abort(1);
  }
  if (r.stop_reason == "interrupted") {
    fail_together(*ranks, "training interrupted; continue with --resume");
  }
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto args = std::make_shared<TrainArguments>();
  CLI::App* sub = app.add_subcommand("train", "Train a translation model (Vaswani et al., 2017, section 5)");
  sub->add_option("--config", args->config_file, "JSON file of options (keys as the flags below)");
  sub->add_option("--preset", args->preset,
                  "preset of the model and the recipe: base, big, small, tiny, cpu-hour (docs/config.md; default "
                  "small)");
  sub->add_flag("--resume", args->resume, "continue the run in --run-dir from its newest checkpoint");
  sub->add_flag("--resume-with-changes", args->resume_with_changes,
                "--resume even though options that shape the run (data, batches, seed, schedule, model) differ "
                "from the checkpoint's; without it such a resume is refused, listing the differences");
  sub->add_flag("--dump-config", args->dump_config, "print the effective configuration as JSON and exit");
  const nlohmann::json defaults = options_to_json(args->scratch);  // the small preset's values
  for (const auto& f : option_fields(args->scratch)) {
    std::string dashed = f.name;
    std::replace(dashed.begin(), dashed.end(), '_', '-');
    const std::string name = f.name;
    sub->add_option_function<std::string>(
           "--" + dashed + (dashed != f.name ? ",--" + f.name : ""),
           [args, name](const std::string& v) { args->given[name] = v; },
           f.help + " [default: " + defaults.at(f.name).dump() + "]")
        ->type_name(defaults.at(f.name).is_string() ? "TEXT" : "NUMBER")
        ->group(f.model ? "Model (Table 3)" : "Training");
  }
  sub->callback([args] { run(*args); });
}

}  // namespace attn::cli
