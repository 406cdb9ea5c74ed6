#pragma once
// `attn train` started as a process (alone, under mpirun, or across namespaced nodes): the tiny
// model's arguments on the word-reversal task, a job in a process group of its own with a time
// limit, and what the runs wrote (losses per step, tensors compared to the bit).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/temp_dir.h"
#include "model/safetensors.h"
#include "train_test_support.h"

extern char** environ;

namespace attn::testing {

using Args = std::vector<std::string>;
using Clock = std::chrono::steady_clock;

// A suite's folder and its word-reversal task (3000 training pairs, 20 dev), made once per suite
// (ctest runs each test in a process of its own): `class Suite : public ReverseTaskSuite<Suite>`,
// with `static constexpr const char* kFolder` naming the folder.
template <class Suite>
class ReverseTaskSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::filesystem::path(fresh_temp_dir(Suite::kFolder));
    task_ = new ReverseTask(make_reverse_task(*dir_, 3000, 20));
  }
  static void TearDownTestSuite() {
    delete task_;
    delete dir_;
    task_ = nullptr;
    dir_ = nullptr;
  }
  static inline std::filesystem::path* dir_ = nullptr;
  static inline ReverseTask* task_ = nullptr;
};

inline Args train_args(const ReverseTask& t, const std::filesystem::path& run, int max_steps = 60) {
  return {ATTN_BINARY,
          "train",
          "--preset",
          "tiny",
          "--train-source",
          t.train_src.string(),
          "--train-target",
          t.train_tgt.string(),
          "--valid-source",
          t.dev_src.string(),
          "--valid-target",
          t.dev_tgt.string(),
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
          "--label-smoothing",
          "0.1",
          "--batch-tokens",
          "512",
          "--warmup-steps",
          "50",
          "--lr-scale",
          "0.2",
          "--max-steps",
          std::to_string(max_steps),
          "--save-every",
          "20",
          "--save-every-minutes",
          "0",
          "--keep-checkpoints",
          "20",
          "--log-every",
          "1",
          "--valid-every",
          "30",
          "--valid-translate",
          "5",
          "--clip-norm",
          "5",
          "--threads",
          "1"};
}

inline Args with(Args a, const Args& more) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

// The arguments with the values of some flags replaced ("--flag value" pairs), or added.
inline Args setting(Args a, const Args& changes) {
  for (std::size_t i = 0; i + 1 < changes.size(); i += 2) {
    auto it = std::find(a.begin(), a.end(), changes[i]);
    if (it != a.end())
      *(it + 1) = changes[i + 1];
    else
      a.insert(a.end(), {changes[i], changes[i + 1]});
  }
  return a;
}

struct Job {
  pid_t pid = 0;
  std::filesystem::path output;  // stdout and stderr of mpirun and every rank
};

inline Job spawn(Args args, const std::filesystem::path& output) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The ranks inherit this environment. Open MPI's own allocations at exit are not ours to
  // check, so the sanitizer build looks for leaks in the single-process tests only.
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e)
    if (std::string(*e).rfind("ASAN_OPTIONS=", 0) != 0) env_text.emplace_back(*e);
  env_text.emplace_back("ASAN_OPTIONS=detect_leaks=0");
  std::vector<char*> env;
  for (auto& e : env_text) env.push_back(e.data());
  env.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  // A process group of its own, so that a hung job can be killed with every rank.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  Job job{0, output};
  EXPECT_EQ(posix_spawn(&job.pid, argv[0], &actions, &attributes, argv.data(), env.data()), 0);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  return job;
}

// Waits at most `limit` (generous: the sanitizer build on a loaded 2-core machine is ~5x slower);
// a job still running then is killed, every rank with it, and reported as a hang.
inline int wait_for(const Job& job, std::chrono::seconds limit = std::chrono::seconds(400)) {
  const auto deadline = Clock::now() + limit;
  int status = 0;
  while (waitpid(job.pid, &status, WNOHANG) == 0) {
    if (Clock::now() > deadline) {
      kill(-job.pid, SIGKILL);
      waitpid(job.pid, &status, 0);
      ADD_FAILURE() << "the job did not end within " << limit.count() << " s (hang)";
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return status;
}

inline std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline bool succeeded(int status) { return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0; }
inline bool failed_cleanly(int status) { return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) != 0; }

inline std::vector<double> losses(const std::filesystem::path& run) {
  std::vector<double> out;
  std::ifstream in(run / "train.jsonl");
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.at("type") == "train") out.push_back(j.at("loss").get<double>());
  }
  return out;
}

inline void expect_same_tensors(const std::filesystem::path& a_path, const std::filesystem::path& b_path) {
  const SafetensorsFile a(a_path), b(b_path);
  ASSERT_EQ(a.entries().size(), b.entries().size());
  for (const auto& [name, entry] : a.entries()) {
    const auto& other = b.entries().at(name);
    EXPECT_TRUE(a.data().substr(entry.begin, entry.end - entry.begin) ==
                b.data().substr(other.begin, other.end - other.begin))
        << name << " differs between " << a_path << " and " << b_path;
  }
}

}  // namespace attn::testing
