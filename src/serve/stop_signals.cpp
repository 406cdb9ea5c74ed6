#include "serve/stop_signals.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "core/error.h"

namespace attn::serve {

void StopSignals::serve(Service& service, HttpServer& http, double drain_seconds, const std::string& host, int port,
                        std::ostream& log) {
  std::atomic<bool> served{false}, signalled{false};
  std::thread waiter([&] {
    const int signal = signals_.wait();
    signalled = true;
    if (served) return;  // woken by serve() returning on its own (below)
    log << "attn serve: " << signal_name(signal) << ": no new connections; answering the requests in flight"
        << std::endl;
    service.begin_draining();
    if (drain_seconds > 0) {
      log << "attn serve: /health says \"draining\" for " << drain_seconds
          << " s before the port closes (a second signal closes it now)" << std::endl;
      signals_.wait_for(drain_seconds);
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
    signals_.wake(waiter);
    waiter.join();
    throw;
  }
  served = true;
  const bool stopped_by_signal = signalled;
  if (!stopped_by_signal) signals_.wake(waiter);  // wake the waiter: nobody else will
  waiter.join();
  service.drain();
  if (!stopped_by_signal)
    throw Error("the HTTP server stopped listening on its own (" + host + ":" + std::to_string(port) + ")");
}

}  // namespace attn::serve
