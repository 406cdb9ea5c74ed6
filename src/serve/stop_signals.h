#pragma once
// How `attn serve` stops (docs/serve.md): SIGTERM or SIGINT stops new connections, answers what is
// in flight, and returns; with a drain time the service first says "draining" on /health for that
// long, or until a second signal.
#include <signal.h>

#include <ostream>
#include <string>

#include "core/blocked_signals.h"
#include "serve/http_server.h"
#include "serve/service.h"

namespace attn::serve {

class StopSignals {
 public:
  // Blocks SIGTERM and SIGINT in the calling thread. Threads started after it (the service's
  // worker, the HTTP server's) inherit the mask and never see them: only serve()'s waiter does.
  // Construct it before the Service.
  StopSignals() = default;

  // Runs http.serve() until a signal, then stops as the header says, telling `log` what it does,
  // and drains the service. Throws Error if the server stops listening on its own (`host` and
  // `port` name where it listened), or what http.serve() throws.
  void serve(Service& service, HttpServer& http, double drain_seconds, const std::string& host, int port,
             std::ostream& log);

 private:
  BlockedSignals signals_{SIGTERM, SIGINT};
};

}  // namespace attn::serve
