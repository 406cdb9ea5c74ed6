#pragma once
// The one way attn takes stop signals (training and the service): the signals are blocked in the
// thread that constructs BlockedSignals, and so in every thread started after it (OpenMP's pool,
// MPI's, the HTTP server's), and one thread takes them with wait(): no signal handler ever
// interrupts the computation. Construct it before any other thread starts and keep it while the
// signals matter; destruction restores the thread's mask as it was.
#include <signal.h>

#include <initializer_list>
#include <thread>

namespace attn {

class BlockedSignals {
 public:
  explicit BlockedSignals(std::initializer_list<int> signals);
  ~BlockedSignals();
  BlockedSignals(const BlockedSignals&) = delete;
  BlockedSignals& operator=(const BlockedSignals&) = delete;

  // The next of the signals (waits as long as it takes; interruptions are retried).
  int wait() const;
  // The next of the signals within `seconds`, or 0 when none came.
  int wait_for(double seconds) const;
  // Wakes `waiter`, a thread blocked in wait() or wait_for(), with the first of the signals.
  void wake(std::thread& waiter) const;

 private:
  sigset_t signals_, old_mask_;
  int first_ = 0;
};

// "SIGINT", "SIGTERM", "SIGUSR1", "SIGUSR2"; "a signal" for any other.
const char* signal_name(int signal);

}  // namespace attn
