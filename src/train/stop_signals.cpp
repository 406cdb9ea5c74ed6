#include "train/stop_signals.h"

#include <pthread.h>

#include <cstdlib>
#include <iostream>

namespace attn {
namespace {

std::atomic<int> g_stop_signal{0};

const char* signal_name(int s) {
  switch (s) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGUSR2:
      return "SIGUSR2";
    default:
      return "a signal";
  }
}

}  // namespace

int stop_signal() { return g_stop_signal.load(); }

void request_stop() {
  int none = 0;
  g_stop_signal.compare_exchange_strong(none, SIGINT);
}

void clear_stop_request() { g_stop_signal = 0; }

StopSignals::StopSignals() {
  sigemptyset(&signals_);
  for (int s : {SIGINT, SIGTERM, SIGUSR1, SIGUSR2}) sigaddset(&signals_, s);
  pthread_sigmask(SIG_BLOCK, &signals_, &old_mask_);
  g_stop_signal = 0;
  waiter_ = std::thread([this] {
    while (true) {
      int s = 0;
      if (sigwait(&signals_, &s) != 0) continue;
      if (done_) return;
      if (g_stop_signal.exchange(s) != 0) {
        std::cerr << "attn: " << signal_name(s) << " again: stopping at once (the last checkpoint is intact)"
                  << std::endl;
        std::_Exit(1);
      }
      std::cerr << "attn: " << signal_name(s) << ": stopping after this update, with a checkpoint (send it again "
                << "to stop at once)" << std::endl;
    }
  });
}

StopSignals::~StopSignals() {
  done_ = true;
  pthread_kill(waiter_.native_handle(), SIGUSR2);  // wakes the waiter, which sees done_
  waiter_.join();
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

}  // namespace attn
