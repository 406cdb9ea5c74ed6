// A run killed with SIGKILL mid-way and resumed ends with exactly the parameters (and optimizer
// state) of an uninterrupted run, at the same thread count.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/run_attn.h"
#include "common/temp_dir.h"
#include "model/safetensors.h"
#include "train/checkpoint.h"
#include "train_test_support.h"

extern char** environ;

namespace attn {
namespace {

std::vector<std::string> train_args(const testing::ReverseTask& t, const std::filesystem::path& run) {
  return {ATTN_BINARY,
          "train",
          "--preset",
          "tiny",
          "--train-source",
          t.train_src.string(),
          "--train-target",
          t.train_tgt.string(),
          "--vocabulary",
          t.vocabulary.string(),
          "--run-dir",
          run.string(),
          "--d-model",
          "64",
          "--d-ff",
          "128",
          "--d-k",
          "16",
          "--d-v",
          "16",
          "--dropout",
          "0.1",
          "--batch-tokens",
          "512",
          "--warmup-steps",
          "50",
          "--lr-scale",
          "0.2",
          "--max-steps",
          "240",
          "--save-every",
          "20",
          "--save-every-minutes",
          "0",
          "--keep-checkpoints",
          "3",
          "--log-every",
          "20",
          "--threads",
          "2",
          "--accumulate",
          "2"};
}

pid_t spawn(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

pid_t spawn_logged(std::vector<std::string> args, const std::filesystem::path& log) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

TEST(Resume, KilledAndResumedRunEqualsUninterruptedRunBitForBit) {
  const auto dir = testing::fresh_temp_dir("resume");
  const auto task = testing::make_reverse_task(dir, 3000, 20);

  const int straight = wait_for(spawn(train_args(task, dir / "straight")));
  ASSERT_TRUE(WIFEXITED(straight) && WEXITSTATUS(straight) == 0);

  const pid_t pid = spawn(train_args(task, dir / "killed"));
  const auto wanted = checkpoint_path(dir / "killed" / "checkpoints", 100);
  ASSERT_TRUE(testing::wait_for_file(wanted, std::chrono::seconds(120))) << "the run never reached step 100";
  kill(pid, SIGKILL);
  const int killed = wait_for(pid);
  ASSERT_TRUE(WIFSIGNALED(killed)) << "the run finished before it could be killed";
  ASSERT_FALSE(std::filesystem::exists(checkpoint_path(dir / "killed" / "checkpoints", 240)));

  auto resume = train_args(task, dir / "killed");
  resume.push_back("--resume");
  const int resumed = wait_for(spawn(resume));
  ASSERT_TRUE(WIFEXITED(resumed) && WEXITSTATUS(resumed) == 0);

  const SafetensorsFile a(checkpoint_path(dir / "straight" / "checkpoints", 240));
  const SafetensorsFile b(checkpoint_path(dir / "killed" / "checkpoints", 240));
  ASSERT_EQ(a.entries().size(), b.entries().size());
  for (const auto& [name, entry] : a.entries()) {
    const auto& other = b.entries().at(name);
    ASSERT_EQ(a.data().substr(entry.begin, entry.end - entry.begin),
              b.data().substr(other.begin, other.end - other.begin))
        << name << " differs";
  }
}

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// `attn ARGS` (args[0] is the binary) with what it prints written to `log`; its exit code.
int run_logged(std::vector<std::string> args, const std::filesystem::path& log) {
  args.erase(args.begin());
  return testing::run_attn(testing::shell_words(args) + " > '" + log.string() + "' 2>&1").exit_code;
}

std::vector<std::string> setting(std::vector<std::string> a, const std::vector<std::string>& changes) {
  for (std::size_t i = 0; i + 1 < changes.size(); i += 2) {
    auto it = std::find(a.begin(), a.end(), changes[i]);
    if (it != a.end())
      *(it + 1) = changes[i + 1];
    else
      a.insert(a.end(), {changes[i], changes[i + 1]});
  }
  return a;
}

// A resume with options that shape the run (batches, seed, schedule...) is refused, listing them,
// unless asked for with --resume-with-changes; when to stop or how often to write may change.
TEST(Resume, ChangedOptionsAreRefusedUnlessAskedFor) {
  const auto dir = testing::fresh_temp_dir("resume_changes");
  const auto task = testing::make_reverse_task(dir, 1000, 20);
  const auto args = setting(train_args(task, dir / "run"), {"--max-steps", "20"});
  ASSERT_EQ(run_logged(args, dir / "first.log"), 0) << read_all(dir / "first.log");

  auto changed = setting(args, {"--max-steps", "40", "--batch-tokens", "1024", "--seed", "7", "--accumulate", "1"});
  changed.push_back("--resume");
  EXPECT_NE(run_logged(changed, dir / "refused.log"), 0);
  const std::string refused = read_all(dir / "refused.log");
  EXPECT_NE(refused.find("batch_tokens is 1024 now, 512 in the checkpoint"), std::string::npos) << refused;
  EXPECT_NE(refused.find("seed is 7 now, 1 in the checkpoint"), std::string::npos) << refused;
  EXPECT_NE(refused.find("accumulate is 1 now, 2 in the checkpoint"), std::string::npos) << refused;
  EXPECT_EQ(refused.find("max_steps"), std::string::npos) << "max_steps may change: " << refused;
  EXPECT_NE(refused.find("--resume-with-changes"), std::string::npos) << refused;
  EXPECT_FALSE(std::filesystem::exists(checkpoint_path(dir / "run" / "checkpoints", 40)));

  auto free = setting(args, {"--max-steps", "30", "--log-every", "5", "--save-every", "5"});
  free.push_back("--resume");
  EXPECT_EQ(run_logged(free, dir / "free.log"), 0) << read_all(dir / "free.log");
  EXPECT_TRUE(std::filesystem::exists(checkpoint_path(dir / "run" / "checkpoints", 30)));

  changed.back() = "--resume-with-changes";
  EXPECT_EQ(run_logged(changed, dir / "accepted.log"), 0) << read_all(dir / "accepted.log");
  EXPECT_NE(read_all(dir / "accepted.log").find("note: resuming with changed options"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(checkpoint_path(dir / "run" / "checkpoints", 40)));
}

// Linear decay under a time budget alone: the run estimates the update its budget ends with at the
// end of the warmup (and says so), then again as it goes. Training time here is counted in updates,
// not read from a clock (ATTN_TEST_FAULTS=busy-after-warmup): 1/8 s each of the 10 warmup updates,
// 1 s each after them (a machine that became busy). So, worked out by hand, for a 30 s budget:
// - the first estimate, after update 10 at 1.25 s: 10 updates / 1.25 s = 8 updates/s, for the
//   28.75 s left, 230 updates more: "the time budget ends near update 240" (far beyond: the warmup's
//   speed promises 8 times the updates the budget allows);
// - update s > 10 ends at s - 8.75 s; update 38 at 29.25 s, short of the budget, whose estimate
//   (0.75 s left, at 38 / 29.25 updates/s: under one update, so one) moves the end to update 39;
// - update 39 runs on that line, to a learning rate of 0, ends at 30.25 s: the run stops there by
//   its time budget (the estimate after it, end 40, is one update beyond).
// Checked from train.jsonl: a record for every update, every update's learning rate on the straight
// line from the previous update's to 0 at the end then in force (no jump where the end moves).
TEST(Resume, LinearDecayUnderATimeBudgetAnnealsWhereTheTimeEnds) {
  const auto dir = testing::fresh_temp_dir("linear_time_budget");
  const auto task = testing::make_reverse_task(dir, 1000, 20);
  const auto args = setting(train_args(task, dir / "run"),
                            {"--max-steps", "0", "--time-budget-minutes", "0.5", "--lr-decay", "linear",
                             "--warmup-steps", "10", "--log-every", "1", "--save-every", "0"});
  ASSERT_EQ(setenv("ATTN_TEST_FAULTS", "busy-after-warmup", 1), 0);
  const int code = run_logged(args, dir / "run.log");
  unsetenv("ATTN_TEST_FAULTS");
  const std::string log = read_all(dir / "run.log");
  ASSERT_EQ(code, 0) << log;
  EXPECT_NE(log.find("lr_decay linear: at 8 updates/s the time budget ends near update 240;"), std::string::npos)
      << log;
  EXPECT_NE(log.find("training stopped (time_budget) at step 39,"), std::string::npos) << log;
  // lr_scale 0.2, d_model 64, warmup 10: peak 0.2 · 64^-0.5 · 10^-0.5.
  const double peak = 0.2 / 8 / std::sqrt(10.0);
  std::ifstream in(dir / "run" / "train.jsonl");
  std::int64_t last = 0, end = 0;
  double lr = 0, elapsed = 0;
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.at("type") != "train") continue;
    const std::int64_t step = j.at("step").get<std::int64_t>();
    ASSERT_EQ(step, last + 1) << "a record for every update";
    const double expected = step <= 10 ? peak * static_cast<double>(step) / 10 : [&] {
      end = j.at("lr_decay_end").get<std::int64_t>();
      EXPECT_GE(end, step);
      return lr * static_cast<double>(end - step) / static_cast<double>(end - step + 1);
    }();
    lr = j.at("lr").get<double>();
    EXPECT_NEAR(lr, expected, 1e-9 * peak) << "step " << step << " towards " << end;
    elapsed = j.at("elapsed_seconds").get<double>();
    EXPECT_EQ(elapsed, step <= 10 ? 0.125 * static_cast<double>(step) : static_cast<double>(step) - 8.75)
        << "step " << step;
    last = step;
  }
  EXPECT_EQ(last, 39) << log;
  EXPECT_EQ(end, 39) << "the line update 39 ran on: " << log;
  EXPECT_EQ(lr, 0.0) << "update 39, the budget's last, annealed to 0";
  EXPECT_EQ(elapsed, 30.25);
}

// A run that ends with its time budget stands for the whole budget, so it leaves the snapshot of the
// budget's minute, holding its last update, also where its linear decay reached the update estimated
// to be the budget's last before the time ran out (such a run used to leave none: the demo's "45 min,
// last checkpoint" row went missing). Training time is counted in updates, not read from a clock
// (ATTN_TEST_FAULTS=idle-after-warmup: 30 s each of the 5 warmup updates, 1 s each after them, a
// machine that became idle), so, worked out by hand: the warmup ends at 150 s, at 1/30 update a
// second the 450 s left promise 15 updates, the decay's end is update 20 (never estimated again:
// log_every 1000), reached at 165 s, 0:02:45; minute 1's snapshot is update 2's (60 s).
TEST(Resume, ARunEndedByItsDecayLeavesTheBudgetsSnapshot) {
  const auto dir = testing::fresh_temp_dir("budget_snapshot");
  const auto task = testing::make_reverse_task(dir, 1000, 20);
  const auto args =
      setting(train_args(task, dir / "run"),
              {"--max-steps", "0", "--time-budget-minutes", "10", "--lr-decay", "linear", "--warmup-steps", "5",
               "--log-every", "1000", "--save-every", "0", "--snapshot-every-minutes", "1"});
  ASSERT_EQ(setenv("ATTN_TEST_FAULTS", "idle-after-warmup", 1), 0);
  const int code = run_logged(args, dir / "run.log");
  unsetenv("ATTN_TEST_FAULTS");
  const std::string log = read_all(dir / "run.log");
  ASSERT_EQ(code, 0) << log;
  const std::string said = "training stopped (lr_decay_end) at step ";
  const auto at = log.find(said);
  ASSERT_NE(at, std::string::npos) << log;
  const std::int64_t last = std::stoll(log.substr(at + said.size()));
  EXPECT_EQ(last, 20) << log;
  const auto after = log.find(", after ", at);
  ASSERT_NE(after, std::string::npos) << log;
  EXPECT_EQ(log.substr(after + 8, 7), "0:02:45") << "stopped by its decay before the budget's minute: " << log;
  const auto snapshots = dir / "run" / "snapshots";
  ASSERT_TRUE(std::filesystem::exists(snapshots / "minute-001" / "model.safetensors")) << log;  // in the warmup
  EXPECT_EQ(SafetensorsFile(snapshots / "minute-001" / "model.safetensors").metadata().at("step"), "2");
  ASSERT_TRUE(std::filesystem::exists(snapshots / "minute-010" / "model.safetensors")) << log;
  const SafetensorsFile budget(snapshots / "minute-010" / "model.safetensors");
  EXPECT_EQ(budget.metadata().at("step"), std::to_string(last));
  EXPECT_FALSE(std::filesystem::exists(snapshots / "minute-011"));
}

// Under linear decay max_steps is where the learning rate reaches 0: a resume that moves it changes
// every later update, so it is refused like any option that shapes the run.
TEST(Resume, LinearDecayRefusesAnotherMaxSteps) {
  const auto dir = testing::fresh_temp_dir("resume_linear");
  const auto task = testing::make_reverse_task(dir, 1000, 20);
  const auto args =
      setting(train_args(task, dir / "run"), {"--max-steps", "20", "--lr-decay", "linear", "--warmup-steps", "5"});
  ASSERT_EQ(run_logged(args, dir / "first.log"), 0) << read_all(dir / "first.log");
  auto longer = setting(args, {"--max-steps", "30"});
  longer.push_back("--resume");
  EXPECT_NE(run_logged(longer, dir / "refused.log"), 0);
  EXPECT_NE(read_all(dir / "refused.log").find("max_steps is 30 now, 20 in the checkpoint"), std::string::npos)
      << read_all(dir / "refused.log");
}

// lr_decay "auto" is settled before the run starts: config.json and the checkpoints hold the decay
// the run used (linear, for max_steps beyond the warmup), and a resume with "auto" again continues
// it as the same run.
TEST(Resume, AutomaticDecayIsWrittenDownAsTheDecayTheRunUsed) {
  const auto dir = testing::fresh_temp_dir("resume_auto_decay");
  const auto task = testing::make_reverse_task(dir, 1000, 20);
  const auto args =
      setting(train_args(task, dir / "run"), {"--max-steps", "20", "--lr-decay", "auto", "--warmup-steps", "5"});
  ASSERT_EQ(run_logged(args, dir / "first.log"), 0) << read_all(dir / "first.log");
  EXPECT_NE(read_all(dir / "first.log").find("lr_decay auto: linear, to 0 at max_steps (20)"), std::string::npos)
      << read_all(dir / "first.log");
  EXPECT_EQ(nlohmann::json::parse(read_all(dir / "run" / "config.json")).at("lr_decay"), "linear");
  EXPECT_EQ(inspect_checkpoint(checkpoint_path(dir / "run" / "checkpoints", 20)).options.at("lr_decay"), "linear");
  auto again = args;
  again.push_back("--resume");  // at its end already: resumed, nothing to do, nothing refused
  EXPECT_EQ(run_logged(again, dir / "again.log"), 0) << read_all(dir / "again.log");
}

// The epoch limit falling exactly at an update's boundary ends the run without a phantom update:
// no second record of the last step (with a loss of NaN), no second validation of it.
TEST(Resume, EpochLimitAtAnUpdateBoundaryEndsWithoutAPhantomUpdate) {
  const auto dir = testing::fresh_temp_dir("epoch_limit");
  const auto task = testing::make_reverse_task(dir, 1000, 20);
  const auto args = setting(train_args(task, dir / "run"),
                            {"--max-steps", "0", "--max-epochs", "1", "--accumulate", "1", "--log-every", "1",
                             "--valid-source", task.dev_src.string(), "--valid-target", task.dev_tgt.string(),
                             "--valid-every", "1", "--valid-translate", "0", "--save-every", "1"});
  ASSERT_EQ(run_logged(args, dir / "run.log"), 0) << read_all(dir / "run.log");
  std::ifstream in(dir / "run" / "train.jsonl");
  std::map<std::pair<std::string, std::int64_t>, int> records;
  std::int64_t last = 0;
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(line.find("null"), std::string::npos) << line;
    ++records[{j.at("type").get<std::string>(), j.at("step").get<std::int64_t>()}];
    last = std::max(last, j.at("step").get<std::int64_t>());
  }
  ASSERT_GT(last, 5);
  for (const auto& [key, count] : records) EXPECT_EQ(count, 1) << key.first << " record of step " << key.second;
  EXPECT_EQ(records.size(), 2 * static_cast<std::size_t>(last));
  const auto progress = inspect_checkpoint(checkpoint_path(dir / "run" / "checkpoints", last)).progress;
  EXPECT_EQ(progress.epoch, 1);
}

// SIGTERM at random moments of training: every run finishes its update, writes a checkpoint that
// loads, says where it stopped and exits with status 1. (With a signal handler interrupting the
// computation, about one run in eight died with a corrupted heap instead.)
TEST(Resume, StopSignalsAtRandomMomentsAlwaysEndWithACheckpoint) {
  const auto dir = testing::fresh_temp_dir("stop_signals");
  const auto task = testing::make_reverse_task(dir, 1000, 20);
  Random rng(7);
  for (int i = 0; i < 12; ++i) {
    const auto run = dir / ("run" + std::to_string(i));
    auto args = setting(train_args(task, run),
                        {"--d-model", "256", "--d-ff", "512", "--d-k", "32", "--d-v", "32", "--max-steps", "100000",
                         "--save-every", "5", "--threads", "1", "--accumulate", "1"});
    const pid_t pid = spawn_logged(args, dir / ("run" + std::to_string(i) + ".log"));
    // Wait for training to be under way (the first checkpoint), then a random part of a few updates.
    testing::wait_for_file(checkpoint_path(run / "checkpoints", 5), std::chrono::seconds(300));
    std::this_thread::sleep_for(std::chrono::milliseconds(rng.below(400)));
    kill(pid, SIGTERM);
    const int status = wait_for(pid);
    const std::string log = read_all(dir / ("run" + std::to_string(i) + ".log"));
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << "run " << i << ": " << log;
    const auto saved = list_checkpoints(run / "checkpoints");
    ASSERT_FALSE(saved.empty());
    const auto progress = inspect_checkpoint(saved.back()).progress;
    EXPECT_NE(log.find("training stopped (interrupted) at step " + std::to_string(progress.step)), std::string::npos)
        << log;
  }
}

// Kills a run with SIGKILL once its checkpoint of `step` exists; the run must not have finished.
// The process is always killed and waited for, also when the checkpoint never comes.
void kill_after_checkpoint(const std::vector<std::string>& args, const std::filesystem::path& run, std::int64_t step) {
  const pid_t pid = spawn(args);
  const auto wanted = checkpoint_path(run / "checkpoints", step);
  const bool reached = testing::wait_for_file(wanted, std::chrono::seconds(300));
  kill(pid, SIGKILL);
  const bool killed = WIFSIGNALED(wait_for(pid));
  ASSERT_TRUE(reached) << "the run never reached step " << step;
  ASSERT_TRUE(killed) << "the run finished before it could be killed";
}

// Every tensor of two safetensors files, byte for byte (their metadata holds wall-clock times).
void expect_same_tensors(const std::filesystem::path& x, const std::filesystem::path& y) {
  const SafetensorsFile a(x), b(y);
  ASSERT_EQ(a.entries().size(), b.entries().size());
  for (const auto& [name, entry] : a.entries()) {
    const auto& other = b.entries().at(name);
    EXPECT_TRUE(a.data().substr(entry.begin, entry.end - entry.begin) ==
                b.data().substr(other.begin, other.end - other.begin))
        << name << " differs";
  }
}

void expect_same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  const std::string x = read_all(a), y = read_all(b);
  ASSERT_FALSE(x.empty()) << a;
  EXPECT_TRUE(x == y) << a << " and " << b << " differ";
}

// The newest checkpoint corrupted (a flipped bit), and a write cut short beside it (the temporary
// file a kill during a checkpoint's write leaves): the resume says so, falls back to the previous
// checkpoint, and still ends bit-identical to an uninterrupted run.
TEST(Resume, ACorruptNewestCheckpointFallsBackToThePreviousOneAndSaysSo) {
  const auto dir = testing::fresh_temp_dir("resume_corrupt");
  const auto task = testing::make_reverse_task(dir, 3000, 20);
  ASSERT_EQ(run_logged(train_args(task, dir / "straight"), dir / "straight.log"), 0) << read_all(dir / "straight.log");
  ASSERT_NO_FATAL_FAILURE(kill_after_checkpoint(train_args(task, dir / "killed"), dir / "killed", 100));

  const auto saved = list_checkpoints(dir / "killed" / "checkpoints");
  ASSERT_GE(saved.size(), 2u);
  const auto newest = saved.back(), previous = saved[saved.size() - 2];
  {
    std::fstream f(newest, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-100, std::ios::end);
    char c = 0;
    f.read(&c, 1);
    f.seekp(-100, std::ios::end);
    c = static_cast<char>(c ^ 0x10);
    f.write(&c, 1);
  }
  // As core/atomic_file names a temporary: "." + name + ".tmp.<pid>.<random>", renamed into place
  // only when complete.
  const auto torn = newest.parent_path() / ("." + newest.filename().string() + ".tmp.12345.678");
  std::ofstream(torn, std::ios::binary) << read_all(newest).substr(0, 1000);

  auto resume = train_args(task, dir / "killed");
  resume.push_back("--resume");
  ASSERT_EQ(run_logged(resume, dir / "resumed.log"), 0) << read_all(dir / "resumed.log");
  const std::string log = read_all(dir / "resumed.log");
  EXPECT_NE(log.find("warning: " + newest.string() + ": corrupted checkpoint"), std::string::npos) << log;
  EXPECT_NE(log.find("trying an older checkpoint"), std::string::npos) << log;
  EXPECT_NE(log.find("resuming from " + previous.string()), std::string::npos) << log;
  expect_same_tensors(checkpoint_path(dir / "straight" / "checkpoints", 240),
                      checkpoint_path(dir / "killed" / "checkpoints", 240));
}

// Validation state across a resume: the best model, the best loss and step, and early stopping's
// count of validations without improvement are what an uninterrupted run has, to the bit. The run
// is cut at a checkpoint S whose next validation does not improve on the best so far: a resume that
// lost the state would take that validation for a new best (best step, best/ and the count differ).
TEST(Resume, BestModelAndEarlyStoppingStateSurviveAResume) {
  const auto dir = testing::fresh_temp_dir("resume_best");
  const auto task = testing::make_reverse_task(dir, 3000, 20);
  auto args = [&](const std::filesystem::path& run, int max_steps) {
    return setting(train_args(task, run),
                   {"--valid-source", task.dev_src.string(), "--valid-target", task.dev_tgt.string(), "--valid-every",
                    "10", "--save-every", "10", "--valid-translate", "0", "--early-stopping", "0", "--max-steps",
                    std::to_string(max_steps)});
  };
  ASSERT_EQ(run_logged(args(dir / "straight", 240), dir / "straight.log"), 0) << read_all(dir / "straight.log");
  // S: the checkpoint before the first validation after step 20 that is not a new best (validations
  // and checkpoints every 10 updates: a loss that falls at every validation 20 updates apart may not
  // at every one 10 apart).
  std::int64_t cut = 0;
  std::string validations;  // step: loss for the message
  std::ifstream log(dir / "straight" / "train.jsonl");
  for (std::string line; std::getline(log, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.at("type") != "valid") continue;
    validations += " " + j.at("step").dump() + ": " + j.at("loss").dump();
    if (j.at("step").get<std::int64_t>() > 20 && !j.at("best").get<bool>()) {
      cut = j.at("step").get<std::int64_t>() - 10;
      break;
    }
  }
  ASSERT_GT(cut, 0) << "every validation of the run was a new best: nothing to carry across a resume; "
                       "lengthen the run. Validation losses:"
                    << validations;

  ASSERT_EQ(run_logged(args(dir / "split", static_cast<int>(cut)), dir / "first.log"), 0)
      << read_all(dir / "first.log");
  auto resume = args(dir / "split", 240);
  resume.push_back("--resume");
  ASSERT_EQ(run_logged(resume, dir / "resumed.log"), 0) << read_all(dir / "resumed.log");
  EXPECT_NE(read_all(dir / "resumed.log")
                .find("resuming from " + checkpoint_path(dir / "split" / "checkpoints", cut).string()),
            std::string::npos);

  // Every validation after the cut is judged "new best" or not as in the uninterrupted run.
  auto best_flags = [&](const std::filesystem::path& jsonl) {
    std::map<std::int64_t, bool> flags;
    std::ifstream in(jsonl);
    for (std::string line; std::getline(in, line);) {
      const auto j = nlohmann::json::parse(line);
      if (j.at("type") == "valid" && j.at("step").get<std::int64_t>() > cut)
        flags[j.at("step").get<std::int64_t>()] = j.at("best").get<bool>();
    }
    return flags;
  };
  const auto straight_flags = best_flags(dir / "straight" / "train.jsonl");
  EXPECT_FALSE(straight_flags.at(cut + 10));
  EXPECT_EQ(best_flags(dir / "split" / "train.jsonl"), straight_flags);

  const auto a = inspect_checkpoint(checkpoint_path(dir / "straight" / "checkpoints", 240)).progress;
  const auto b = inspect_checkpoint(checkpoint_path(dir / "split" / "checkpoints", 240)).progress;
  EXPECT_EQ(a.best_valid_loss, b.best_valid_loss);
  EXPECT_EQ(a.best_step, b.best_step);
  EXPECT_EQ(a.validations_without_improvement, b.validations_without_improvement);
  expect_same_tensors(dir / "straight" / "best" / "model.safetensors", dir / "split" / "best" / "model.safetensors");
  expect_same_file(dir / "straight" / "best" / "config.json", dir / "split" / "best" / "config.json");
  expect_same_tensors(checkpoint_path(dir / "straight" / "checkpoints", 240),
                      checkpoint_path(dir / "split" / "checkpoints", 240));
}

}  // namespace
}  // namespace attn
