// A run killed with SIGKILL mid-way and resumed ends with exactly the parameters (and optimizer
// state) of an uninterrupted run, at the same thread count.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "model/safetensors.h"
#include "train/checkpoint.h"
#include "train_test_support.h"

extern char** environ;

namespace attn {
namespace {

std::vector<std::string> train_args(const testing::ReverseTask& t, const std::filesystem::path& run) {
  return {ATTN_BINARY, "train", "--preset", "tiny", "--train-source", t.train_src.string(), "--train-target",
          t.train_tgt.string(), "--vocabulary", t.vocabulary.string(), "--run-dir", run.string(), "--d-model", "64",
          "--d-ff", "128", "--d-k", "16", "--d-v", "16", "--dropout", "0.1", "--batch-tokens", "512",
          "--warmup-steps", "50", "--lr-scale", "0.2", "--max-steps", "240", "--save-every", "20",
          "--save-every-minutes", "0", "--keep-checkpoints", "3", "--log-every", "20", "--threads", "2",
          "--accumulate", "2"};
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
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!std::filesystem::exists(wanted) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_TRUE(std::filesystem::exists(wanted)) << "the run never reached step 100";
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
    ASSERT_EQ(a.data().substr(entry.begin, entry.end - entry.begin), b.data().substr(other.begin, other.end - other.begin))
        << name << " differs";
  }
}

}  // namespace
}  // namespace attn
