#include "core/blocked_signals.h"

#include <pthread.h>

#include <cerrno>
#include <ctime>

namespace attn {

BlockedSignals::BlockedSignals(std::initializer_list<int> signals) {
  sigemptyset(&signals_);
  for (int s : signals) {
    sigaddset(&signals_, s);
    if (first_ == 0) first_ = s;
  }
  pthread_sigmask(SIG_BLOCK, &signals_, &old_mask_);
}

BlockedSignals::~BlockedSignals() { pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr); }

int BlockedSignals::wait() const {
  int s = 0;
  while (sigwait(&signals_, &s) != 0) {
  }
  return s;
}

int BlockedSignals::wait_for(double seconds) const {
  if (!(seconds > 0)) return 0;
  const auto whole = static_cast<time_t>(seconds);
  const timespec timeout{whole, static_cast<long>((seconds - static_cast<double>(whole)) * 1e9)};
  while (true) {
    const int s = sigtimedwait(&signals_, nullptr, &timeout);
    if (s > 0) return s;
    if (errno != EINTR) return 0;  // EAGAIN: the time is up
  }
}

void BlockedSignals::wake(std::thread& waiter) const { pthread_kill(waiter.native_handle(), first_); }

const char* signal_name(int signal) {
  switch (signal) {
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

}  // namespace attn
