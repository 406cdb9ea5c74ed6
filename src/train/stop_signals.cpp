#include "train/stop_signals.h"

#include <cstdlib>
#include <iostream>

namespace attn {
namespace {

std::atomic<int> g_stop_signal{0};

}  // namespace

int stop_signal() { return g_stop_signal.load(); }

void request_stop() {
  int none = 0;
  g_stop_signal.compare_exchange_strong(none, SIGINT);
}

void clear_stop_request() { g_stop_signal = 0; }

StopSignals::StopSignals() {
  g_stop_signal = 0;
  waiter_ = std::thread([this] {
    while (true) {
      const int s = signals_.wait();
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
  signals_.wake(waiter_);  // the waiter sees done_
  waiter_.join();
}

}  // namespace attn
