// `attn train` under mpirun: two ranks train one model. The independent truths: one process
// accumulating the same batches (a separate code path: no MPI, local gradient sums), and an
// uninterrupted run for the resumes. Runs with `mpirun --oversubscribe` on the 2-core CI.
#ifdef ATTN_MPIEXEC
#include <signal.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "distributed_test_support.h"
#include "model/safetensors.h"
#include "train/checkpoint.h"
#include "train/dist/host.h"
#include "train/train_log.h"
#include "train_test_support.h"

namespace attn {
namespace {

using namespace attn::testing;  // NOLINT: the process helpers of distributed_test_support.h

// mpirun with one program per rank (MPMD: "-np 1 A : -np 1 B") when the ranks' arguments differ.
Args mpirun(const std::vector<Args>& per_rank) {
  Args a{ATTN_MPIEXEC, "--oversubscribe", "--allow-run-as-root", "--bind-to", "none"};
  for (std::size_t r = 0; r < per_rank.size(); ++r) {
    if (r > 0) a.push_back(":");
    a.insert(a.end(), {"-np", "1"});
    a.insert(a.end(), per_rank[r].begin(), per_rank[r].end());
  }
  return a;
}

// The process of `rank` among mpirun's children (Open MPI starts local ranks itself).
pid_t rank_pid(pid_t mpirun_pid, int rank) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string pid, comm, state;
    pid_t parent = 0;
    if (!(stat >> pid >> comm >> state >> parent) || parent != mpirun_pid) continue;
    const std::string env = read_all(entry.path() / "environ");
    if (env.find(std::string("OMPI_COMM_WORLD_RANK=") + std::to_string(rank) + '\0') != std::string::npos)
      return static_cast<pid_t>(std::stol(name));
  }
  return 0;
}

class Distributed : public ReverseTaskSuite<Distributed> {
 public:
  static constexpr const char* kFolder = "distributed";
};

// Two ranks of one batch each sum the same two gradients as one process accumulating both: every
// gradient is computed from zero and the two are added once (a + b = b + a exactly), so the
// runs agree to the bit, losses and weights, validation included. Dropout and clipping are on.
TEST_F(Distributed, TwoRanksEqualOneProcessAccumulatingTheirBatches) {
  const auto& t = *task_;
  const int one = wait_for(spawn(with(train_args(t, *dir_ / "one"), {"--accumulate", "2"}), *dir_ / "one.log"));
  ASSERT_TRUE(succeeded(one)) << read_all(*dir_ / "one.log");
  const auto a = losses(*dir_ / "one");
  ASSERT_EQ(a.size(), 60u);
  // The gradient summed in buckets during the backward pass (the default; here buckets of 20 KB, many
  // to a layer, and one of 8 MB, the whole gradient of this model) and in one sum after it.
  for (const auto& [name, how] :
       std::vector<std::pair<std::string, Args>>{{"two", {}},
                                                 {"two-buckets", {"--allreduce-bucket-mb", "0.02"}},
                                                 {"two-after", {"--allreduce", "after_backward"}}}) {
    SCOPED_TRACE(name);
    const Args two = with(train_args(t, *dir_ / name), how);
    const int status = wait_for(spawn(mpirun({two, two}), *dir_ / (name + ".log")));
    const std::string log = read_all(*dir_ / (name + ".log"));
    ASSERT_TRUE(succeeded(status)) << log;
    EXPECT_NE(log.find("2 ranks (MPI"), std::string::npos) << log;
    EXPECT_NE(log.find("| 2 ranks, allreduce"), std::string::npos) << log;
    const auto b = losses(*dir_ / name);
    ASSERT_EQ(b.size(), 60u);
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "loss at step " << i + 1;
    for (int step : {20, 40, 60})
      expect_same_tensors(checkpoint_path(*dir_ / "one" / "checkpoints", step),
                          checkpoint_path(*dir_ / name / "checkpoints", step));
    expect_same_tensors(*dir_ / "one" / "best" / "model.safetensors", *dir_ / name / "best" / "model.safetensors");
  }
  // The ranks really trained different batches: one rank alone with one batch is another run.
  const int alone = wait_for(spawn(train_args(t, *dir_ / "alone"), *dir_ / "alone.log"));
  ASSERT_TRUE(succeeded(alone));
  EXPECT_NE(losses(*dir_ / "alone")[1], losses(*dir_ / "two")[1]);
}

// Two ranks accumulating two batches each, their gradient sent in small buckets during the last
// batch's backward pass (each bucket with the first batch's gradient added just before it goes),
// sum what the same two ranks sum in one all-reduce after the backward pass, to the bit. (Not what
// one process accumulating four batches sums: that adds ((a + b) + c) + d, the ranks (a + b) + (c + d).)
TEST_F(Distributed, OverlappedBucketsWithAccumulationEqualOneSumAfterTheBackwardPass) {
  const auto& t = *task_;
  auto run = [&](const std::string& name, const Args& how) {
    const Args two = with(with(train_args(t, *dir_ / name, 30), {"--accumulate", "2"}), how);
    const int status = wait_for(spawn(mpirun({two, two}), *dir_ / (name + ".log")));
    ASSERT_TRUE(succeeded(status)) << read_all(*dir_ / (name + ".log"));
  };
  run("acc-after", {"--allreduce", "after_backward"});
  run("acc-buckets", {"--allreduce-bucket-mb", "0.05"});
  const auto a = losses(*dir_ / "acc-after"), b = losses(*dir_ / "acc-buckets");
  ASSERT_EQ(a.size(), 30u);
  ASSERT_EQ(b.size(), 30u);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "loss at step " << i + 1;
  expect_same_tensors(checkpoint_path(*dir_ / "acc-after" / "checkpoints", 20),
                      checkpoint_path(*dir_ / "acc-buckets" / "checkpoints", 20));
}

// The ranks' sum of floats in fp32 and in bf16 (blocking, and started in pieces then waited for),
// on 2 ranks, against values worked by hand (wire_sum_check.cpp: ties to even, rounding before the
// sum and after it, infinities and NaN, a long buffer).
TEST_F(Distributed, TheSumOnTheWireInBf16IsRoundedAsWorkedByHand) {
  const Args check{ATTN_WIRE_SUM_CHECK};
  const int status = wait_for(spawn(mpirun({check, check}), *dir_ / "wire.log"), std::chrono::seconds(120));
  const std::string log = read_all(*dir_ / "wire.log");
  EXPECT_TRUE(succeeded(status)) << log;
  EXPECT_NE(log.find("wire_sum_check rank 0: ok"), std::string::npos) << log;
  EXPECT_NE(log.find("wire_sum_check rank 1: ok"), std::string::npos) << log;
}

// Two ranks sending their gradient in bf16 (--allreduce-precision bf16): the first update's loss is
// one process's accumulating their batches (computed before any sum), the later ones move with the
// gradient's rounding (2^-8) but stay within 2% of it; overlapped buckets and one sum after the
// backward pass round each element the same way (the reduction is element-wise), so they agree to
// the bit; the progress line says bf16.
TEST_F(Distributed, TwoRanksWithBf16GradientsStayCloseToOneProcessAccumulating) {
  const auto& t = *task_;
  const int one =
      wait_for(spawn(with(train_args(t, *dir_ / "bf16-one", 40), {"--accumulate", "2"}), *dir_ / "bf16-one.log"));
  ASSERT_TRUE(succeeded(one)) << read_all(*dir_ / "bf16-one.log");
  for (const auto& [name, how] : std::vector<std::pair<std::string, Args>>{
           {"bf16-overlapped", {"--allreduce-precision", "bf16", "--allreduce-bucket-mb", "0.05"}},
           {"bf16-after", {"--allreduce-precision", "bf16", "--allreduce", "after_backward"}}}) {
    const Args two = with(train_args(t, *dir_ / name, 40), how);
    const int status = wait_for(spawn(mpirun({two, two}), *dir_ / (name + ".log")));
    const std::string log = read_all(*dir_ / (name + ".log"));
    ASSERT_TRUE(succeeded(status)) << log;
    EXPECT_NE(log.find("allreduce"), std::string::npos) << log;
    EXPECT_NE(log.find("(bf16)"), std::string::npos) << log;
  }
  const auto a = losses(*dir_ / "bf16-one"), b = losses(*dir_ / "bf16-overlapped"), c = losses(*dir_ / "bf16-after");
  ASSERT_EQ(a.size(), 40u);
  ASSERT_EQ(b.size(), 40u);
  ASSERT_EQ(c.size(), 40u);
  EXPECT_EQ(a[0], b[0]);
  std::size_t differ = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(b[i], a[i], 0.02 * a[i]) << "loss at step " << i + 1;
    EXPECT_EQ(b[i], c[i]) << "loss at step " << i + 1;
    differ += b[i] != a[i];
  }
  EXPECT_GT(differ, 0u) << "bf16 on the wire changed nothing: was the gradient sent in fp32?";
  expect_same_tensors(checkpoint_path(*dir_ / "bf16-overlapped" / "checkpoints", 40),
                      checkpoint_path(*dir_ / "bf16-after" / "checkpoints", 40));
}

// SIGKILL of rank 1 ends the whole job quickly; --resume continues from the last checkpoint, with
// 2 ranks or with 1 rank accumulating 2 batches, to the weights of a run never interrupted.
TEST_F(Distributed, KilledRankStopsTheJobAndResumeReachesTheUninterruptedWeights) {
  const auto& t = *task_;
  const Args straight_args = train_args(t, *dir_ / "straight", 200);
  ASSERT_TRUE(succeeded(wait_for(spawn(mpirun({straight_args, straight_args}), *dir_ / "straight.log"))))
      << read_all(*dir_ / "straight.log");

  const Args killed_args = train_args(t, *dir_ / "killed", 200);
  const Job job = spawn(mpirun({killed_args, killed_args}), *dir_ / "killed.log");
  const auto wanted = checkpoint_path(*dir_ / "killed" / "checkpoints", 80);
  ASSERT_TRUE(wait_for_file(wanted, std::chrono::seconds(400)))
      << "the job never reached step 80: " << read_all(job.output);
  const pid_t victim = rank_pid(job.pid, 1);
  ASSERT_GT(victim, 0) << "rank 1's process not found among mpirun's children";
  ASSERT_EQ(kill(victim, SIGKILL), 0);
  const auto killed_at = Clock::now();
  const int status = wait_for(job, std::chrono::seconds(60));
  const double seconds = std::chrono::duration<double>(Clock::now() - killed_at).count();
  ASSERT_TRUE(status >= 0 && !succeeded(status)) << "the job went on after a rank died: " << read_all(job.output);
  EXPECT_LT(seconds, 30) << "the job took " << seconds << " s to stop";
  ASSERT_FALSE(std::filesystem::exists(checkpoint_path(*dir_ / "killed" / "checkpoints", 200)));
  std::cerr << "job stopped " << seconds << " s after rank 1 was killed\n";

  // Resume a copy with 1 rank accumulating 2 batches, then the original with 2 ranks.
  std::filesystem::copy(*dir_ / "killed", *dir_ / "killed-1", std::filesystem::copy_options::recursive);
  const Args one_rank = with(train_args(t, *dir_ / "killed-1", 200), {"--accumulate", "2", "--resume"});
  const int resumed_one = wait_for(spawn(one_rank, *dir_ / "resumed-1.log"));
  ASSERT_TRUE(succeeded(resumed_one)) << read_all(*dir_ / "resumed-1.log");
  EXPECT_NE(read_all(*dir_ / "resumed-1.log")
                .find("written by a run of 2 rank(s) x accumulate 1; continuing with 1 x 2: the same global batch"),
            std::string::npos);
  const Args two_ranks = with(killed_args, {"--resume"});
  const int resumed_two = wait_for(spawn(mpirun({two_ranks, two_ranks}), *dir_ / "resumed-2.log"));
  ASSERT_TRUE(succeeded(resumed_two)) << read_all(*dir_ / "resumed-2.log");

  const auto reference = checkpoint_path(*dir_ / "straight" / "checkpoints", 200);
  expect_same_tensors(reference, checkpoint_path(*dir_ / "killed" / "checkpoints", 200));
  expect_same_tensors(reference, checkpoint_path(*dir_ / "killed-1" / "checkpoints", 200));
  EXPECT_EQ(inspect_checkpoint(reference).progress.next_batch,
            inspect_checkpoint(checkpoint_path(*dir_ / "killed-1" / "checkpoints", 200)).progress.next_batch);
}

// A rank that stops (SIGSTOP: alive for mpirun, silent for everyone; as a frozen machine would be)
// is named by the other rank once peer_timeout_seconds have passed without its heartbeat, and the
// job ends; the rank's own number, the timeout and what to do are in the message. A pause shorter
// than the timeout is not a fault: the same job, stopped for 1 s, trains to its end.
TEST_F(Distributed, AStoppedRankIsNamedByTheOtherWithinThePeerTimeout) {
  const auto& t = *task_;
  for (const bool lost : {false, true}) {
    const std::string name = lost ? "stopped" : "paused";
    const Args args = with(train_args(t, *dir_ / name, lost ? 100000 : 60), {"--peer-timeout-seconds", "3"});
    const Job job = spawn(mpirun({args, args}), *dir_ / (name + ".log"));
    const auto wanted = checkpoint_path(*dir_ / name / "checkpoints", 20);
    ASSERT_TRUE(wait_for_file(wanted, std::chrono::seconds(400)))
        << "the job never reached step 20: " << read_all(job.output);
    const pid_t victim = rank_pid(job.pid, 1);
    ASSERT_GT(victim, 0) << "rank 1's process not found among mpirun's children";
    ASSERT_EQ(kill(victim, SIGSTOP), 0);
    const auto stopped_at = Clock::now();
    if (!lost) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      ASSERT_EQ(kill(victim, SIGCONT), 0);
      const int status = wait_for(job, std::chrono::seconds(400));
      EXPECT_TRUE(succeeded(status)) << "a pause of 1 s (timeout 3 s) ended the job: " << read_all(job.output);
      continue;
    }
    const int status = wait_for(job, std::chrono::seconds(60));
    const double seconds = std::chrono::duration<double>(Clock::now() - stopped_at).count();
    const std::string log = read_all(job.output);
    kill(victim, SIGKILL);  // in case mpirun left it stopped
    EXPECT_TRUE(failed_cleanly(status)) << log;
    // 3 s without a heartbeat, at most one heartbeat interval (0.3 s) to notice, then mpirun ends the job.
    EXPECT_GE(seconds, 3.0) << log;
    EXPECT_LT(seconds, 15) << log;
    std::cerr << "job ended " << seconds << " s after rank 1 was stopped\n";
    EXPECT_NE(log.find("attn: error on rank 0 of 2: rank 1 ("), std::string::npos) << log;
    EXPECT_NE(log.find(") has not been heard from for 3."), std::string::npos) << log;
    EXPECT_NE(log.find(" s (peer_timeout_seconds 3.0): its process stopped, its node went down or the network to "
                       "it was cut\nattn: stopping this rank; continue from the last checkpoint with --resume"),
              std::string::npos)
        << log;
  }
}

// The step split across ranks (train.jsonl: waiting_seconds, communication_seconds): rank 1 computes
// 100 ms longer before each gradient sum (ATTN_TEST_FAULTS: slow-compute), so rank 0 waits ~100 ms an
// update and the ranks' mean wait is ~50 ms; the link itself (shared memory, a tiny model) takes a few
// ms. Both ranks slowed alike: nobody waits for anybody. For the sum after the backward pass and
// the overlapped one.
TEST_F(Distributed, TheStepSplitsIntoComputeWaitingForTheSlowestRankAndCommunication) {
  const auto& t = *task_;
  for (const std::string how : {"overlapped", "after_backward"}) {
    SCOPED_TRACE(how);
    struct Split {
      double waiting = 0, communication = 0, allreduce = 0, seconds = 0;
      int updates = 0;
    };
    auto run = [&](const std::string& name, bool slow0, bool slow1) {
      const Args args = with(setting(train_args(t, *dir_ / name, 21), {"--valid-every", "1000"}), {"--allreduce", how});
      const Args slow = with({"/usr/bin/env", "ATTN_TEST_FAULTS=slow-compute"}, args);
      const int status = wait_for(spawn(mpirun({slow0 ? slow : args, slow1 ? slow : args}), *dir_ / (name + ".log")));
      Split s;
      if (!succeeded(status)) {
        ADD_FAILURE() << read_all(*dir_ / (name + ".log"));
        return s;
      }
      const auto records = read_training_log(*dir_ / name / "train.jsonl").train;
      // From the second update on (the first one's includes the start).
      for (std::size_t i = 1; i < records.size(); ++i) {
        const TrainRecord& r = records[i];
        if (!r.waiting_seconds || !r.communication_seconds || !r.allreduce_seconds) {
          ADD_FAILURE() << name << ": step " << r.step << " without its split";
          continue;
        }
        s.waiting += *r.waiting_seconds;
        s.communication += *r.communication_seconds;
        s.allreduce += *r.allreduce_seconds;
        s.seconds += r.elapsed_seconds - records[i - 1].elapsed_seconds;
        ++s.updates;
      }
      EXPECT_EQ(s.updates, 20);
      return s;
    };
    const Split one_slow = run("split-" + how, false, true);
    const double n = one_slow.updates;
    EXPECT_GT(one_slow.waiting / n, 0.040) << "the ranks' mean wait, per update";
    EXPECT_LT(one_slow.waiting / n, 0.080);
    EXPECT_GT(one_slow.allreduce / n, 0.080) << "rank 0's time in the sums holds its ~100 ms wait";
    EXPECT_LE(one_slow.waiting + one_slow.communication, one_slow.seconds);
    const Split both_slow = run("split-both-" + how, true, true);
    // The communication no compute hid is the sums' own cost, as where both ranks are slowed alike
    // (nobody waits), not the ~50 ms wait: measured against that run rather than a fixed bound,
    // since the sums' own cost depends on the build (under ASan: ~30 ms an update).
    EXPECT_LT(one_slow.communication / n, both_slow.communication / n + 0.025) << "not the wait";
    EXPECT_LT(both_slow.waiting / n, 0.030) << "nobody waits";
    EXPECT_GT(both_slow.seconds / n, 0.100) << "the sleep is compute";
  }
}

// Rank 0 writes the final model after the ranks' last sum, alone: a rank that has ended says so to
// the others, which do not take it for lost. Here rank 0 takes 5 s longer (ATTN_TEST_FAULTS:
// slow-final-model) than the 2 s the watch would wait for a silent peer.
TEST_F(Distributed, ARankThatHasEndedIsNotTakenForLost) {
  const auto& t = *task_;
  const Args args = with(train_args(t, *dir_ / "ended", 20), {"--peer-timeout-seconds", "2"});
  const Args slow = with({"/usr/bin/env", "ATTN_TEST_FAULTS=slow-final-model"}, args);
  const int status = wait_for(spawn(mpirun({slow, args}), *dir_ / "ended.log"), std::chrono::seconds(120));
  const std::string log = read_all(*dir_ / "ended.log");
  ASSERT_TRUE(succeeded(status)) << log;
  EXPECT_EQ(log.find("has not been heard from"), std::string::npos) << log;
  EXPECT_TRUE(std::filesystem::exists(*dir_ / "ended" / "model" / "model.safetensors")) << log;
}

// SIGTERM reaching one rank only: both ranks stop after the same update and write one checkpoint.
TEST_F(Distributed, SignalToOneRankStopsEveryRankAtTheSameStep) {
  const auto& t = *task_;
  const Args args = train_args(t, *dir_ / "signalled", 100000);
  const Job job = spawn(mpirun({args, args}), *dir_ / "signalled.log");
  const auto first = checkpoint_path(*dir_ / "signalled" / "checkpoints", 20);
  ASSERT_TRUE(wait_for_file(first, std::chrono::seconds(400))) << read_all(job.output);
  const pid_t victim = rank_pid(job.pid, 1);
  ASSERT_GT(victim, 0);
  ASSERT_EQ(kill(victim, SIGTERM), 0);
  const int status = wait_for(job, std::chrono::seconds(60));
  const std::string log = read_all(job.output);
  EXPECT_TRUE(failed_cleanly(status)) << log;
  EXPECT_NE(log.find("training interrupted; continue with --resume"), std::string::npos) << log;
  const auto all = list_checkpoints(*dir_ / "signalled" / "checkpoints");
  ASSERT_FALSE(all.empty());
  const auto last = inspect_checkpoint(all.back()).progress;
  EXPECT_NE(log.find("training stopped (interrupted) at step " + std::to_string(last.step)), std::string::npos) << log;
  EXPECT_EQ(last.ranks, 2);
}

// SIGUSR1 or SIGUSR2 to mpirun (which forwards both to every rank; its own Ctrl-C handling kills
// the ranks a second after asking them to stop): every rank stops after the same update, with a
// checkpoint.
TEST_F(Distributed, UserSignalsToMpirunStopEveryRankWithACheckpoint) {
  const auto& t = *task_;
  for (const int signal : {SIGUSR1, SIGUSR2}) {
    const std::string name = signal == SIGUSR1 ? "usr1" : "usr2";
    const Args args = train_args(t, *dir_ / name, 100000);
    const Job job = spawn(mpirun({args, args}), *dir_ / (name + ".log"));
    const auto first = checkpoint_path(*dir_ / name / "checkpoints", 20);
    ASSERT_TRUE(wait_for_file(first, std::chrono::seconds(400))) << name << ": " << read_all(job.output);
    ASSERT_EQ(kill(job.pid, signal), 0);
    const int status = wait_for(job, std::chrono::seconds(120));
    const std::string log = read_all(job.output);
    EXPECT_TRUE(failed_cleanly(status)) << name << ": " << log;
    const auto all = list_checkpoints(*dir_ / name / "checkpoints");
    ASSERT_FALSE(all.empty()) << name;
    const auto last = inspect_checkpoint(all.back()).progress;
    EXPECT_EQ(last.ranks, 2) << name;
    EXPECT_NE(log.find("training stopped (interrupted) at step " + std::to_string(last.step)), std::string::npos)
        << name << ": " << log;
  }
}

// A checkpoint of one process accumulating 2 batches, resumed by 2 ranks of one batch each, goes on
// to the weights the one process reaches uninterrupted (2 ranks sum what it accumulates).
// With a moving average of the weights (ema_decay), which rank 0 alone keeps, from the checkpoint.
TEST_F(Distributed, OneProcessCheckpointResumedByTwoRanksReachesTheOneProcessWeights) {
  const auto& t = *task_;
  const auto straight = *dir_ / "p1-straight", resumed = *dir_ / "p1-resumed";
  ASSERT_TRUE(succeeded(
      wait_for(spawn(with(train_args(t, straight), {"--accumulate", "2", "--ema-decay", "0.99"}), *dir_ / "p1.log"))))
      << read_all(*dir_ / "p1.log");
  // The same run stopped after step 20: its later checkpoints removed.
  std::filesystem::copy(straight, resumed, std::filesystem::copy_options::recursive);
  for (int step : {40, 60}) ASSERT_TRUE(std::filesystem::remove(checkpoint_path(resumed / "checkpoints", step)));
  ASSERT_EQ(list_checkpoints(resumed / "checkpoints").size(), 1u);
  const Args two = with(train_args(t, resumed), {"--resume", "--ema-decay", "0.99"});
  const int status = wait_for(spawn(mpirun({two, two}), *dir_ / "p1-resumed.log"));
  const std::string log = read_all(*dir_ / "p1-resumed.log");
  ASSERT_TRUE(succeeded(status)) << log;
  EXPECT_NE(log.find("written by a run of 1 rank(s) x accumulate 2; continuing with 2 x 1: the same global batch"),
            std::string::npos)
      << log;
  expect_same_tensors(checkpoint_path(straight / "checkpoints", 60), checkpoint_path(resumed / "checkpoints", 60));
  EXPECT_EQ(SafetensorsFile(checkpoint_path(resumed / "checkpoints", 60)).entries().count("optimizer.ema"), 1u);
  expect_same_tensors(straight / "model" / "model.safetensors", resumed / "model" / "model.safetensors");
}

// A checkpoint of 2 ranks resumed by one process without --accumulate 2: accepted (a user may
// mean it), with a note giving the new, halved global batch; the run goes on to its last update.
TEST_F(Distributed, TwoRankCheckpointResumedByOneProcessAloneSaysTheBatchIsHalved) {
  const auto& t = *task_;
  const auto run = *dir_ / "r2-alone";
  const Args two = train_args(t, run, 40);
  ASSERT_TRUE(succeeded(wait_for(spawn(mpirun({two, two}), *dir_ / "r2.log")))) << read_all(*dir_ / "r2.log");
  ASSERT_TRUE(std::filesystem::remove(checkpoint_path(run / "checkpoints", 40)));
  const int status = wait_for(spawn(with(train_args(t, run, 40), {"--resume"}), *dir_ / "r2-alone.log"));
  const std::string log = read_all(*dir_ / "r2-alone.log");
  ASSERT_TRUE(succeeded(status)) << log;
  EXPECT_NE(log.find("note: the checkpoint was written by a run of 2 rank(s); continuing with 1: same weights, "
                     "optimizer state and place in the data, but the global batch is now 512 x 1 x 1 tokens "
                     "(--accumulate 2 keeps the checkpoint's 512 x 2)"),
            std::string::npos)
      << log;
  const auto last = inspect_checkpoint(checkpoint_path(run / "checkpoints", 40)).progress;
  EXPECT_EQ(last.ranks, 1);
}

// A run that diverges under mpirun: every rank stops before the same update, the message is given
// once (by rank 0), no rank hangs, and no final model is written.
TEST_F(Distributed, DivergenceStopsEveryRankAtTheSameUpdateWithOneMessage) {
  const auto& t = *task_;
  const auto run = *dir_ / "diverged";
  const Args args = setting(train_args(t, run, 300),
                            {"--lr-scale", "1e30", "--warmup-steps", "10", "--clip-norm", "0", "--save-every", "1"});
  const int status = wait_for(spawn(mpirun({args, args}), *dir_ / "diverged.log"), std::chrono::seconds(120));
  const std::string log = read_all(*dir_ / "diverged.log");
  EXPECT_TRUE(failed_cleanly(status)) << log;
  const std::string message = "attn: error: training diverged at update ";
  const auto at = log.find(message);
  ASSERT_NE(at, std::string::npos) << log;
  EXPECT_EQ(at, log.rfind(message)) << "told once: " << log;
  EXPECT_NE(log.find("lower lr_scale, raise warmup_steps, or set clip_norm"), std::string::npos) << log;
  EXPECT_EQ(log.find("training stopped"), std::string::npos) << log;
  EXPECT_FALSE(std::filesystem::exists(run / "model"));
  // The last checkpoint is the update before the one named.
  const std::int64_t update = std::stoll(log.substr(at + message.size()));
  const auto saved = list_checkpoints(run / "checkpoints");
  ASSERT_FALSE(saved.empty());
  EXPECT_EQ(inspect_checkpoint(saved.back()).progress.step, update - 1) << log;
}

// Ranks whose weights drift apart (here one ulp a update on rank 1, asked with ATTN_TEST_FAULTS:
// nodes of different kinds would do it) are stopped at the first checkpoint, which is not written,
// with one message naming the rank.
TEST_F(Distributed, WeightsThatDifferBetweenRanksStopTheJobBeforeTheCheckpoint) {
  const auto& t = *task_;
  const Args args = train_args(t, *dir_ / "drift", 60);
  Args drifting{"/usr/bin/env", "ATTN_TEST_FAULTS=weights-drift"};
  drifting.insert(drifting.end(), args.begin(), args.end());
  const int status = wait_for(spawn(mpirun({args, drifting}), *dir_ / "drift.log"), std::chrono::seconds(300));
  const std::string log = read_all(*dir_ / "drift.log");
  EXPECT_TRUE(failed_cleanly(status)) << log;
  const std::string message = "attn: error: after step 20 the weights of rank 1 differ from rank 0's";
  ASSERT_NE(log.find(message), std::string::npos) << log;
  EXPECT_EQ(log.find("attn: error: "), log.rfind("attn: error: ")) << "told once: " << log;
  EXPECT_TRUE(list_checkpoints(*dir_ / "drift" / "checkpoints").empty()) << log;
  EXPECT_FALSE(std::filesystem::exists(*dir_ / "drift" / "model"));
}

// Setups that cannot train one model are refused at the start, on every rank, naming what differs.
TEST_F(Distributed, DifferentConfigurationsOrDataOnTheRanksAreRefusedAtTheStart) {
  const auto& t = *task_;
  struct Case {
    std::string name;
    Args rank1_extra;
    std::vector<std::string> expected;
  };
  // Same length, one word changed: a different corpus.
  std::string text = read_all(t.train_tgt);
  text.replace(text.find("alpha"), 5, "omega");
  std::ofstream(*dir_ / "changed.tgt") << text;
  // Another build of attn: the same program with one byte more (it still runs).
  const auto other_build = *dir_ / "attn-other-build";
  std::filesystem::copy_file(ATTN_BINARY, other_build, std::filesystem::copy_options::overwrite_existing);
  std::ofstream(other_build, std::ios::app) << '\0';
  // Both ranks run on this machine: each is named with its host and addresses.
  const std::string r1 =
      "rank 1 (" + dist::host_description() + ") differs from rank 0 (" + dist::host_description() + "): ";
  const std::vector<Case> cases{
      {"config", {"--batch-tokens", "1024"}, {r1 + "batch_tokens is 1024 on rank 1, 512 on rank 0"}},
      {"model", {"--d-ff", "256"}, {r1 + "d_ff is 256 on rank 1, 128 on rank 0"}},
      {"data", {"--train-target", (*dir_ / "changed.tgt").string()}, {r1 + "contents of train_target (sha256) is"}},
      {"program", {}, {r1 + "program (sha256) is \""}},
      // The watch's addresses are exchanged before the options are compared: a rank not watching
      // (timeout 0) still takes part, and the difference is named like any other.
      {"watch", {"--peer-timeout-seconds", "0"}, {r1 + "peer_timeout_seconds is 0.0 on rank 1, 60.0 on rank 0"}},
      {"unreadable",
       {"--train-source", (*dir_ / "missing.src").string()},
       {"rank 1: " + (*dir_ / "missing.src").string(), "cannot open"}},
  };
  for (const auto& c : cases) {
    const Args rank0 = train_args(t, *dir_ / ("bad-" + c.name));
    Args rank1 = setting(train_args(t, *dir_ / ("bad-" + c.name + "-1")), c.rank1_extra);
    if (c.name == "program") rank1.front() = other_build.string();
    const auto started = Clock::now();
    const int status =
        wait_for(spawn(mpirun({rank0, rank1}), *dir_ / ("bad-" + c.name + ".log")), std::chrono::seconds(60));
    const std::string log = read_all(*dir_ / ("bad-" + c.name + ".log"));
    EXPECT_TRUE(failed_cleanly(status)) << c.name << ": " << log;
    for (const auto& e : c.expected) EXPECT_NE(log.find(e), std::string::npos) << c.name << ": " << log;
    EXPECT_EQ(log.find("attn: error: "), log.rfind("attn: error: ")) << c.name << ": told once, by rank 0: " << log;
    EXPECT_FALSE(std::filesystem::exists(checkpoint_path(*dir_ / ("bad-" + c.name) / "checkpoints", 20))) << c.name;
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - started).count(), 30) << c.name;
  }
}

}  // namespace
}  // namespace attn
#endif  // ATTN_MPIEXEC
