#pragma once
// Whether the other ranks of a job are still there. A rank that dies is noticed by mpirun, which
// ends the job; a node whose link is cut, or a process that stops (SIGSTOP, a machine that freezes),
// is not: TCP waits for minutes and the collectives of every other rank wait forever. So each rank
// sends the others a small UDP datagram every interval from a thread of its own (independent of
// what the rank computes: a rank validating or writing a checkpoint for minutes still answers),
// and a rank that has heard nothing from a peer for `timeout` seconds calls `lost` with a message
// naming the peer's rank and addresses. Heartbeats go to every IPv4 address the peer's host has
// (not loopback; loopback too when both ranks share a network namespace).
//
// A rank whose watch ends (its rank has finished) says goodbye, and the others stop watching it:
// rank 0 may work alone for a while after the last collective (the final model).
// A peer never heard from within the first `timeout` (UDP blocked between the hosts) is not
// watched: `lost` is never called for it, and `warn` says so once.
#include <atomic>
#include <cstdint>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "train/dist/communicator.h"

namespace attn::dist {

class PeerWatch {
 public:
  using Lost = std::function<void(const std::string& message)>;
  using Warn = std::function<void(const std::string& message)>;
  // A collective: every rank of `ranks` constructs its watch at the same point, whatever its
  // timeout. With one rank, or timeout_seconds 0, nothing is watched and no thread starts. `lost` runs on the watch's
  // thread (the caller's main thread may be blocked in a collective that will never end) and should end the process; if
  // it returns, the watch stops.
  PeerWatch(Communicator& ranks, double timeout_seconds, Lost lost, Warn warn);
  ~PeerWatch();
  PeerWatch(const PeerWatch&) = delete;
  PeerWatch& operator=(const PeerWatch&) = delete;

  // "rank 1 (10.213.0.2)": the rank and its host's addresses, as the messages name it.
  std::string describe(int rank) const;
  double interval_seconds() const { return interval_; }

 private:
  struct Peer {
    std::vector<std::string> addresses;  // where its heartbeats go
    std::string host;                    // its host's addresses, for messages
  };
  void loop();
  void send_all(std::uint32_t kind);
  void receive_until(std::chrono::steady_clock::time_point until);

  int rank_ = 0;
  double timeout_ = 0, interval_ = 1;
  Lost lost_;
  Warn warn_;
  std::vector<Peer> peers_;  // by rank (this rank's entry unused)
  std::uint64_t job_ = 0;    // the same on every rank: datagrams of another job are ignored
  int socket_ = -1;
  std::chrono::steady_clock::time_point started_;
  std::mutex mutex_;
  std::vector<std::chrono::steady_clock::time_point> heard_;  // by rank; epoch: never
  std::vector<bool> unwatched_;
  std::vector<bool> ended_;  // said goodbye: finished, no longer watched
  bool settled_ = false;     // the first timeout has passed
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace attn::dist
