#pragma once
// Stopping a training run from outside: SIGINT (Ctrl-C), SIGTERM, SIGUSR1 or SIGUSR2 (which mpirun
// forwards to every rank) ask it to stop after the current update, with a checkpoint; the same
// signal a second time ends the process at once.
//
// The signals are blocked in the thread that constructs StopSignals, and so in every thread it
// starts afterwards (OpenMP's pool, MPI's), and one thread waits for them with sigwait: no signal
// handler ever interrupts the computation. (One did before: a SIGTERM landing in the middle of an
// update corrupted the heap in about one run in eight.) Construct it before any other thread
// starts, and keep it for the whole run.
#include <atomic>
#include <csignal>
#include <thread>

#include "core/blocked_signals.h"

namespace attn {

class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  BlockedSignals signals_{SIGINT, SIGTERM, SIGUSR1, SIGUSR2};  // first: its mask is restored last
  std::atomic<bool> done_{false};
  std::thread waiter_;
};

// The signal that asked the run to stop; 0 while none has.
int stop_signal();

// A stop asked for by a program rather than a signal (the library's request_training_stop, a
// progress callback returning false): as a first SIGINT. Lock-free, so safe in a signal handler.
void request_stop();
// Forgets any stop asked for, before a new run in the same process.
void clear_stop_request();

}  // namespace attn
