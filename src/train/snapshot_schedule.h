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

// The snapshot a run that ended with its time budget stands for: the budget's own minute, where
// that is a whole multiple of `every_minutes`; 0 otherwise. (A linear decay to the clock stops a run
// at the update estimated to be its budget's last, which may come a moment before that minute.)
inline int budget_snapshot_minute(double budget_minutes, int every_minutes) {
  if (every_minutes <= 0 || budget_minutes <= 0 || budget_minutes != std::floor(budget_minutes)) return 0;
  if (budget_minutes > 1e6) return 0;  // beyond any run; keeps the conversion below in range
  const int minute = static_cast<int>(budget_minutes);
  return minute % every_minutes == 0 ? minute : 0;
}

// "minute-015": folder names that sort by time.
inline std::string snapshot_name(int minute) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "minute-%03d", minute);
  return buf;
}

}  // namespace attn
