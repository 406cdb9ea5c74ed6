// Snapshot marks: a snapshot every N whole minutes of training time, by hand-worked times.
#include <gtest/gtest.h>

#include "train/snapshot_schedule.h"

namespace attn {
namespace {

TEST(SnapshotSchedule, MarksEveryNMinutesOfTrainingTime) {
  EXPECT_EQ(snapshot_minute(0, 15), 0);
  EXPECT_EQ(snapshot_minute(899.9, 15), 0);    // 14:59.9
  EXPECT_EQ(snapshot_minute(900, 15), 15);     // 15:00
  EXPECT_EQ(snapshot_minute(1799, 15), 15);    // 29:59
  EXPECT_EQ(snapshot_minute(2700.5, 15), 45);  // 45:00.5
  EXPECT_EQ(snapshot_minute(125, 1), 2);
  EXPECT_EQ(snapshot_minute(5000, 0), 0);  // off
}

TEST(SnapshotSchedule, FolderNamesSortByTime) {
  EXPECT_EQ(snapshot_name(5), "minute-005");
  EXPECT_EQ(snapshot_name(15), "minute-015");
  EXPECT_EQ(snapshot_name(120), "minute-120");
  EXPECT_LT(snapshot_name(45), snapshot_name(120));
}

}  // namespace
}  // namespace attn
