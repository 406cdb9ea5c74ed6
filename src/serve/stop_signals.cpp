#include "serve/stop_signals.h"

#include <pthread.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <thread>

#include "core/error.h"

namespace attn::serve {

StopSignals::StopSignals() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGTERM);
  sigaddset(&signals_, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
}

void StopSignals::serve(Service& service, HttpServer& http, double drain_seconds, const std::string& host, int port,
                        std::ostream& log) {
  std::atomic<bool> served{false}, signalled{false};
  std::thread waiter([&] {
    int signal = 0;
    sigwait(&signals_, &signal);
    signalled = true;
    if (served) return;  // woken by serve() returning on its own (below)
    log << "attn serve: " << (signal == SIGTERM ? "SIGTERM" : "SIGINT")
        << ": no new connections; answering the requests in flight" << std::endl;
    service.begin_draining();
    if (drain_seconds > 0) {
      log << "attn serve: /health says \"draining\" for " << drain_seconds
          << " s before the port closes (a second signal closes it now)" << std::endl;
      const auto whole = static_cast<time_t>(drain_seconds);
      const timespec wait{whole, static_cast<long>((drain_seconds - static_cast<double>(whole)) * 1e9)};
      while (!served && sigtimedwait(&signals_, nullptr, &wait) < 0 && errno == EINTR) {
      }
    }
    // stop() before serve() has started listening is lost: repeat until serve() returned.
    while (!served) {
      http.stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  try {
    http.serve();  // returns after stop(), once the requests in flight are answered
  } catch (...) {
    served = true;
    pthread_kill(waiter.native_handle(), SIGTERM);
    waiter.join();
    throw;
  }
  served = true;
  const bool stopped_by_signal = signalled;
  if (!stopped_by_signal) pthread_kill(waiter.native_handle(), SIGTERM);  // wake the waiter: nobody else will
  waiter.join();
  service.drain();
  if (!stopped_by_signal)
    throw Error("the HTTP server stopped listening on its own (" + host + ":" + std::to_string(port) + ")");
}

}  // namespace attn::serve
