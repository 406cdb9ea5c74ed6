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

// The snapshot a run ended by its time budget stands for: the budget's minute, where the snapshots'
// cadence lands on it.
TEST(SnapshotSchedule, ARunEndedByItsBudgetStandsForTheBudgetsMinute) {
  EXPECT_EQ(budget_snapshot_minute(45, 15), 45);
  EXPECT_EQ(budget_snapshot_minute(45, 1), 45);
  EXPECT_EQ(budget_snapshot_minute(90, 45), 90);
  EXPECT_EQ(budget_snapshot_minute(40, 15), 0);    // 15, 30, then the end at 40: no mark there
  EXPECT_EQ(budget_snapshot_minute(44.5, 15), 0);  // not a whole minute
  EXPECT_EQ(budget_snapshot_minute(0.2, 1), 0);
  EXPECT_EQ(budget_snapshot_minute(0, 15), 0);  // no time budget
  EXPECT_EQ(budget_snapshot_minute(45, 0), 0);  // snapshots off
}

TEST(SnapshotSchedule, FolderNamesSortByTime) {
  EXPECT_EQ(snapshot_name(5), "minute-005");
  EXPECT_EQ(snapshot_name(15), "minute-015");
  EXPECT_EQ(snapshot_name(120), "minute-120");
  EXPECT_LT(snapshot_name(45), snapshot_name(120));
}

}  // namespace
}  // namespace attn
