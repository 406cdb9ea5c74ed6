#pragma once
// Model snapshots every N whole minutes of training time (snapshot_every_minutes), kept beside
// the rotating checkpoints. With the paper's decay the learning-rate schedule does not depend on
// the budget, so the snapshot at minute M is the model an M-minute run would have ended with
// (before averaging); with lr_decay linear under a time budget it is the run midway, not annealed.
#include <cmath>
#include <cstdio>
#include <string>

namespace attn {

// The last snapshot mark reached after `elapsed_seconds` (a multiple of `every_minutes`), or 0
// when none is due yet or snapshots are off.
inline int snapshot_minute(double elapsed_seconds, int every_minutes) {
  if (every_minutes <= 0 || elapsed_seconds < 0) return 0;
  return static_cast<int>(std::floor(elapsed_seconds / 60.0 / every_minutes)) * every_minutes;
}

// "minute-015": folder names that sort by time.
inline std::string snapshot_name(int minute) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "minute-%03d", minute);
  return buf;
}

}  // namespace attn
