// `attn train` across nodes with network stacks of their own (scripts/nodes: Linux network
// namespaces joined by a bridge, links shaped with tc), over Open MPI's TCP transport only. Needs
// root for `ip netns add`: skipped, loudly, only where the kernel refuses it; CI runs as root.
#ifdef ATTN_MPIEXEC
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <algorithm>
#include <fstream>
#include <random>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "distributed_test_support.h"
#include "train/checkpoint.h"
#include "train_test_support.h"

namespace attn {
namespace {

using namespace attn::testing;  // NOLINT: the process helpers of distributed_test_support.h

const std::string kNodes = std::string(ATTN_SOURCE_DIR) + "/scripts/nodes";

// N nodes named uniquely for this test run, removed when it ends however it ends.
class NodeSet {
 public:
  NodeSet(const std::filesystem::path& dir, int nodes, const std::string& rate = "1gbit") : dir_(dir) {
    remove_stale(dir);
    std::random_device random;
    name_ = "t" + std::to_string(getpid()) + "-" + std::to_string(random() % 100000);
    const auto log = dir / ("up-" + name_ + ".log");
    status_ = wait_for(
        spawn({kNodes, "up", "--nodes", std::to_string(nodes), "--rate", rate, "--delay", "0.1ms", "--name", name_},
              log),
        std::chrono::seconds(60));
    output_ = read_all(log);
  }
  ~NodeSet() {
    const auto log = dir_ / ("down-" + name_ + ".log");
    const int status = wait_for(spawn({kNodes, "down", "--name", name_}, log), std::chrono::seconds(60));
    EXPECT_TRUE(succeeded(status)) << read_all(log);
  }
  // The kernel refused the namespaces (EPERM: not root): `up` exits 77 and says why.
  bool refused() const {
    return status_ >= 0 && WIFEXITED(status_) && WEXITSTATUS(status_) == 77 &&
           output_.find("Operation not permitted") != std::string::npos;
  }
  bool up() const { return succeeded(status_); }
  const std::string& output() const { return output_; }
  // `scripts/nodes run` of `command`, one rank on each node, with a time limit of its own.
  Args run(const Args& command, const Args& options = {}) const {
    Args a{kNodes, "run", "--name", name_, "--timeout", "400"};
    a.insert(a.end(), options.begin(), options.end());
    a.push_back("--");
    a.insert(a.end(), command.begin(), command.end());
    return a;
  }
  const std::string& name() const { return name_; }

 private:
  // Nodes of an earlier test run killed before its teardown (by ctest's time limit): their names
  // carry the pid of a process that is gone.
  static void remove_stale(const std::filesystem::path& dir) {
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator("/run/netns", error)) {
      const std::string ns = entry.path().filename();
      const auto end = ns.rfind("-bridge");
      if (ns.rfind("attn-t", 0) != 0 || end == std::string::npos) continue;
      const std::string name = ns.substr(5, end - 5);  // t<pid>-<n>
      const std::string pid = name.substr(1, name.find('-') - 1);
      if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
      if (std::filesystem::exists("/proc/" + pid)) continue;
      wait_for(spawn({kNodes, "down", "--name", name}, dir / ("stale-" + name + ".log")), std::chrono::seconds(60));
    }
  }

  std::filesystem::path dir_;
  std::string name_, output_;
  int status_ = -1;
};

#define ATTN_NODES_UP(nodes)                                                                                          \
  if ((nodes).refused())                                                                                              \
    GTEST_SKIP() << "\n\n*** SKIPPED: the kernel refuses network namespaces here (run as root): " << (nodes).output() \
                 << "*** the nodes tests did not run\n";                                                              \
  ASSERT_TRUE((nodes).up()) << (nodes).output()

class Nodes : public ReverseTaskSuite<Nodes> {
 public:
  static constexpr const char* kFolder = "nodes";
};

// Two nodes, one rank each, links of 1 Gbit/s: the ranks talk TCP between the nodes' addresses
// (Open MPI says which transport it chose) and sum exactly what one process accumulating the same
// two batches sums, so losses, checkpoints and the best model agree to the bit (fp32).
TEST_F(Nodes, TwoNodesOverTcpEqualOneProcessAccumulatingTwoBatches) {
  const NodeSet nodes(*dir_, 2);
  ATTN_NODES_UP(nodes);
  const auto& t = *task_;
  const Args fp32{"--precision", "fp32"};
  const int one =
      wait_for(spawn(with(with(train_args(t, *dir_ / "one"), {"--accumulate", "2"}), fp32), *dir_ / "one.log"));
  ASSERT_TRUE(succeeded(one)) << read_all(*dir_ / "one.log");

  // Each rank in its own node: its address and its core.
  const int where = wait_for(spawn(nodes.run({"sh", "-c",
                                              "echo rank $OMPI_COMM_WORLD_RANK at $(ip -br -4 addr show dev eth0 | "
                                              "awk '{print $3}') on cores $(taskset -pc $$ | sed 's/.*: //')"}),
                                   *dir_ / "where.log"),
                             std::chrono::seconds(120));
  const std::string here = read_all(*dir_ / "where.log");
  ASSERT_TRUE(succeeded(where)) << here;
  EXPECT_NE(here.find("rank 0 at 10.213.0.1/24"), std::string::npos) << here;
  EXPECT_NE(here.find("rank 1 at 10.213.0.2/24"), std::string::npos) << here;

  const int status =
      wait_for(spawn(nodes.run(with(train_args(t, *dir_ / "two"), fp32), {"--verbose"}), *dir_ / "two.log"));
  const std::string log = read_all(*dir_ / "two.log");
  ASSERT_TRUE(succeeded(status)) << log;
  EXPECT_NE(log.find("2 ranks (MPI"), std::string::npos) << log;
  // Open MPI's own account (btl_base_verbose): TCP on each node's address, no shared memory.
  EXPECT_NE(log.find("btl: tcp: Found match: 10.213.0.1 (eth0)"), std::string::npos) << log;
  EXPECT_NE(log.find("btl: tcp: Found match: 10.213.0.2 (eth0)"), std::string::npos) << log;
  EXPECT_EQ(log.find("component vader"), std::string::npos) << log;

  const auto a = losses(*dir_ / "one"), b = losses(*dir_ / "two");
  ASSERT_EQ(a.size(), 60u);
  ASSERT_EQ(b.size(), 60u);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "loss at step " << i + 1;
  for (int step : {20, 40, 60})
    expect_same_tensors(checkpoint_path(*dir_ / "one" / "checkpoints", step),
                        checkpoint_path(*dir_ / "two" / "checkpoints", step));
  expect_same_tensors(*dir_ / "one" / "best" / "model.safetensors", *dir_ / "two" / "best" / "model.safetensors");
}

// A node killed (every process in it), or its link cut (`ip link set eth0 down` on the node), while
// two nodes train and sum gradients: the job ends within 30 s with Open MPI's message naming the
// node (mpirun probes its idle connections to the nodes' daemons: scripts/nodes sets 5 s, then 5
// probes 1 s apart), every checkpoint written loads, and the run resumes on the node left, one
// rank accumulating two batches, to the weights of one process that trained straight through.
TEST_F(Nodes, ANodeKilledOrCutOffEndsTheJobNamingItAndTheRunResumesOnTheNodeLeft) {
  const auto& t = *task_;
  const Args fp32{"--precision", "fp32"};
  // The independent truth: one process accumulating the same two batches, never interrupted.
  const auto straight = *dir_ / "straight";
  const int one =
      wait_for(spawn(with(with(train_args(t, straight, 80), {"--accumulate", "2"}), fp32), *dir_ / "straight.log"));
  ASSERT_TRUE(succeeded(one)) << read_all(*dir_ / "straight.log");
  for (const std::string fault : {"kill", "cut"}) {
    const NodeSet nodes(*dir_, 2);
    ATTN_NODES_UP(nodes);
    const std::string node1 = "attn-" + nodes.name() + "-node1";
    const auto run = *dir_ / ("fault-" + fault);
    // As long as it takes: the fault ends it.
    const Job job = spawn(nodes.run(with(train_args(t, run, 100000), fp32)), *dir_ / ("fault-" + fault + ".log"));
    const auto wanted = checkpoint_path(run / "checkpoints", 40);
    ASSERT_TRUE(wait_for_file(wanted, std::chrono::seconds(300))) << "never reached step 40: " << read_all(job.output);
    const std::string command = fault == "kill" ? "ip netns pids " + node1 + " | xargs -r kill -KILL"
                                                : "ip -n " + node1 + " link set eth0 down";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    const auto at = Clock::now();
    const int status = wait_for(job, std::chrono::seconds(120));
    const double seconds = std::chrono::duration<double>(Clock::now() - at).count();
    const std::string log = read_all(job.output);
    EXPECT_TRUE(failed_cleanly(status)) << fault << ": " << log;
    EXPECT_LT(seconds, 30) << fault << ": " << log;
    std::cerr << fault << ": the job ended " << seconds << " s after the fault\n";
    EXPECT_NE(log.find("ORTE has lost communication with a remote daemon"), std::string::npos) << fault << ": " << log;
    EXPECT_NE(log.find("on node 10.213.0.2\n"), std::string::npos) << fault << ": " << log;
    // Nothing half-written: every checkpoint left loads; the newest is where the fault struck.
    int newest = 0;
    for (const auto& c : list_checkpoints(run / "checkpoints")) {
      int step = 0;
      EXPECT_NO_THROW(step = static_cast<int>(inspect_checkpoint(c).progress.step)) << c;
      newest = std::max(newest, step);
    }
    EXPECT_GE(newest, 40) << fault;
    ASSERT_LT(newest, 80) << fault << ": the fault came too late for the resume to be checked";

    // The node left goes on: one rank, two batches accumulated, the same global batch.
    const auto left = *dir_ / (fault + "-left.hosts");
    std::ofstream(left) << "10.213.0.1\n";
    const int resumed =
        wait_for(spawn(nodes.run(with(train_args(t, run, 80), {"--accumulate", "2", "--resume", "--precision", "fp32"}),
                                 {"--hostfile", left.string()}),
                       *dir_ / (fault + "-resumed.log")));
    const std::string resumed_log = read_all(*dir_ / (fault + "-resumed.log"));
    ASSERT_TRUE(succeeded(resumed)) << fault << ": " << resumed_log;
    EXPECT_NE(resumed_log.find("written by a run of 2 rank(s) x accumulate 1; continuing with 1 x 2: the same global "
                               "batch (512 x 2 tokens)"),
              std::string::npos)
        << resumed_log;
    expect_same_tensors(checkpoint_path(straight / "checkpoints", 80), checkpoint_path(run / "checkpoints", 80));
  }
}

// A node whose data or program differs from node0's stops the job at the start, naming both nodes
// by their addresses: here node1 trains another build of attn (one byte more) on another batch size.
TEST_F(Nodes, NodesThatDifferAreRefusedNamingTheirAddresses) {
  const NodeSet nodes(*dir_, 2);
  ATTN_NODES_UP(nodes);
  const auto other_build = *dir_ / "attn-node1-build";
  std::filesystem::copy_file(ATTN_BINARY, other_build, std::filesystem::copy_options::overwrite_existing);
  std::ofstream(other_build, std::ios::app) << '\0';
  auto quoted = [](const Args& args) {
    std::string text;
    for (const auto& a : args) text += " '" + a + "'";
    return text;
  };
  const Args node0 = train_args(*task_, *dir_ / "differ");
  Args node1 = setting(node0, {"--batch-tokens", "1024"});
  node1.front() = other_build.string();
  const std::string command =
      "if [ $OMPI_COMM_WORLD_RANK = 1 ]; then exec" + quoted(node1) + "; else exec" + quoted(node0) + "; fi";
  const auto started = Clock::now();
  const int status = wait_for(spawn(nodes.run({"sh", "-c", command}), *dir_ / "differ.log"), std::chrono::seconds(120));
  const std::string log = read_all(*dir_ / "differ.log");
  EXPECT_TRUE(failed_cleanly(status)) << log;
  const std::string host = read_all("/proc/sys/kernel/hostname");
  const std::string ranks = "rank 1 (" + host.substr(0, host.find('\n')) + ": 10.213.0.2) differs from rank 0 (" +
                            host.substr(0, host.find('\n')) + ": 10.213.0.1): ";
  EXPECT_NE(log.find(ranks), std::string::npos) << log;
  EXPECT_NE(log.find("batch_tokens is 1024 on rank 1, 512 on rank 0"), std::string::npos) << log;
  EXPECT_NE(log.find(", program (sha256) is \""), std::string::npos) << log;
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - started).count(), 60);
}

// A hostfile naming a node that does not answer (an address nobody has; a node whose link is down)
// ends with an error naming it within seconds, before mpirun would wait for a daemon that never
// calls back.
TEST_F(Nodes, ANodeThatDoesNotAnswerIsNamedAndNothingHangs) {
  const NodeSet nodes(*dir_, 3);
  ATTN_NODES_UP(nodes);
  struct Case {
    std::string name, hosts, expected;
  };
  const std::vector<Case> cases{
      {"nobody", "10.213.0.1\n10.213.0.77\n",
       "host 10.213.0.77 of the hostfile " + (*dir_ / "nobody.hosts").string() + " is not a node of '" + nodes.name() +
           "'"},
      {"link-down", "10.213.0.1\n10.213.0.3\n",
       "node 10.213.0.3 (attn-" + nodes.name() + "-node2) does not answer from node0 within 3 s"},
  };
  // Node 2 is there but cut off: its end of the link is down.
  ASSERT_EQ(std::system(("ip -n attn-" + nodes.name() + "-node2 link set eth0 down").c_str()), 0);
  for (const auto& c : cases) {
    const auto hosts = *dir_ / (c.name + ".hosts");
    std::ofstream(hosts) << c.hosts;
    const auto started = Clock::now();
    const int status = wait_for(spawn(nodes.run({"true"}, {"--hostfile", hosts.string()}), *dir_ / (c.name + ".log")),
                                std::chrono::seconds(60));
    const std::string log = read_all(*dir_ / (c.name + ".log"));
    EXPECT_TRUE(failed_cleanly(status)) << c.name << ": " << log;
    EXPECT_NE(log.find("nodes: error: " + c.expected), std::string::npos) << c.name << ": " << log;
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - started).count(), 20) << c.name;
  }
  // The nodes that answer still run a job.
  const auto hosts = *dir_ / "answering.hosts";
  std::ofstream(hosts) << "10.213.0.1\n10.213.0.2\n";
  const int status = wait_for(spawn(nodes.run({"true"}, {"--hostfile", hosts.string()}), *dir_ / "answering.log"),
                              std::chrono::seconds(60));
  EXPECT_TRUE(succeeded(status)) << read_all(*dir_ / "answering.log");
}

// A job that outlives `run --timeout` is killed with a message saying so, on every node.
TEST_F(Nodes, AJobBeyondItsTimeoutIsKilledOnEveryNode) {
  const NodeSet nodes(*dir_, 2);
  ATTN_NODES_UP(nodes);
  Args run = nodes.run({"sleep", "300"});
  run = setting(run, {"--timeout", "3"});
  const auto started = Clock::now();
  const int status = wait_for(spawn(run, *dir_ / "timeout.log"), std::chrono::seconds(60));
  const std::string log = read_all(*dir_ / "timeout.log");
  EXPECT_TRUE(failed_cleanly(status)) << log;
  EXPECT_NE(log.find("nodes: error: mpirun did not end within --timeout 3 s (killed)"), std::string::npos) << log;
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - started).count(), 30);
  // No process is left in either node (mpirun's daemons end theirs).
  const auto pids = *dir_ / "pids.txt";
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  std::string left;
  do {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const std::string command = "ip netns pids attn-" + nodes.name() + "-node0 > " + pids.string() +
                                " && ip netns pids attn-" + nodes.name() + "-node1 >> " + pids.string();
    ASSERT_EQ(std::system(command.c_str()), 0);
    left = read_all(pids);
  } while (!left.empty() && Clock::now() < deadline);
  EXPECT_EQ(left, "") << "processes left in the nodes";
}

// `up` of nodes that exist already is refused, naming them; `down` removes every namespace.
TEST_F(Nodes, UpRefusesNodesThatExistAndDownRemovesEverything) {
  std::string name;
  {
    const NodeSet nodes(*dir_, 2);
    ATTN_NODES_UP(nodes);
    name = nodes.name();
    const int again =
        wait_for(spawn({kNodes, "up", "--nodes", "2", "--name", name}, *dir_ / "again.log"), std::chrono::seconds(60));
    const std::string log = read_all(*dir_ / "again.log");
    EXPECT_TRUE(failed_cleanly(again)) << log;
    EXPECT_NE(
        log.find("namespace attn-" + name + "-bridge exists already: 'scripts/nodes down --name " + name + "' first"),
        std::string::npos)
        << log;
    // The refusal left the nodes as they were.
    EXPECT_TRUE(std::filesystem::exists("/run/netns/attn-" + name + "-node1"));
  }
  for (const auto& ns : {"bridge", "node0", "node1"})
    EXPECT_FALSE(std::filesystem::exists("/run/netns/attn-" + name + "-" + ns)) << ns;
}

}  // namespace
}  // namespace attn
#endif  // ATTN_MPIEXEC
