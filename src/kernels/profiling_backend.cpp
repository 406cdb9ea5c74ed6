#include "kernels/profiling_backend.h"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace attn {

std::string ProfilingBackend::report() const {
  std::vector<std::pair<std::string, Stat>> rows(stats_.begin(), stats_.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  double total = 0;
  for (const auto& r : rows) total += r.second.seconds;
  std::string out;
  char line[256];
  for (const auto& [key, s] : rows) {
    std::snprintf(line, sizeof line, "%-36s %7.1f ms %5.1f%% %6ld calls", key.c_str(), s.seconds * 1e3,
                  100 * s.seconds / total, s.calls);
    out += line;
    if (s.flops > 0) {
      std::snprintf(line, sizeof line, " %7.1f GFLOP/s", s.flops / s.seconds / 1e9);
      out += line;
    }
    out += "\n";
  }
  return out;
}

}  // namespace attn
