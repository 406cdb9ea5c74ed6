// The learning-curve readings of a training log, on hand-made curves worked out by hand.
#include "study/learning_curve.h"

#include <cmath>

#include <gtest/gtest.h>

namespace attn::study {
namespace {

// The pace of a run: records every 100 updates; the machine was busy between 300 and 500 (twice the
// time per update).
TEST(LearningCurve, SteadyPaceLeavesOutStartUpAndBusySpells) {
  const std::vector<CurvePoint> elapsed = {{100, 30.0},  {200, 40.0},   {300, 50.0},  {400, 70.0},
                                           {500, 90.0},  {600, 100.0},  {700, 110.5}, {800, 120.5},
                                           {900, 131.0}, {1000, 141.0}, {1100, 151.0}};
  // Intervals after the start-up (30 s for the first 100: loading): 0.1 0.1 0.2 0.2 0.1 0.105 0.1
  // 0.105 0.1 0.1 seconds per update; sorted, the 20th percentile of ten is the second: 0.1.
  EXPECT_DOUBLE_EQ(steady_seconds_per_update(elapsed), 0.1);
  // So the update it reaches in 60 s of steady training is 600, not the 340 of the log's clock.
  EXPECT_DOUBLE_EQ(60 / steady_seconds_per_update(elapsed), 600);
  // One record: its own pace, start-up and all. None: 0.
  EXPECT_DOUBLE_EQ(steady_seconds_per_update({{50, 10.0}}), 0.2);
  EXPECT_DOUBLE_EQ(steady_seconds_per_update({}), 0);
  // A resumed log that repeats an update after its checkpoint: the repeated interval is left out.
  EXPECT_DOUBLE_EQ(steady_seconds_per_update({{100, 50.0}, {200, 60.0}, {300, 70.0}, {200, 75.0}, {300, 85.0}}), 0.1);
}

TEST(LearningCurve, ValueAtAnUpdateIsLinearBetweenValidations) {
  const std::vector<CurvePoint> ce = {{400, 5.0}, {800, 4.0}, {1200, 3.6}};
  EXPECT_DOUBLE_EQ(*value_at_update(ce, 800), 4.0);
  EXPECT_DOUBLE_EQ(*value_at_update(ce, 500), 4.75);   // a quarter of the way from 5.0 to 4.0
  EXPECT_DOUBLE_EQ(*value_at_update(ce, 1100), 3.7);   // three quarters from 4.0 to 3.6
  EXPECT_FALSE(value_at_update(ce, 399).has_value());  // before the first validation
  EXPECT_FALSE(value_at_update(ce, 1201).has_value());
}

TEST(LearningCurve, LastQuarterChangeOfThePerplexity) {
  // Perplexity 10.3 at update 600 and 10.0 at 800: 0.3 / 10.3 = 2.91%.
  const std::vector<CurvePoint> settled = {{200, std::log(40.0)}, {600, std::log(10.3)}, {800, std::log(10.0)}};
  EXPECT_NEAR(*last_quarter_change(settled, 800), 0.3 / 10.3, 1e-12);
  // No validation at 600: read between 400 (ppl 20) and 800 (ppl 10), linear in cross-entropy, so the
  // perplexity at 600 is the geometric mean, sqrt(200): (sqrt(200) - 10) / sqrt(200) = 29.3%.
  const std::vector<CurvePoint> moving = {{400, std::log(20.0)}, {800, std::log(10.0)}};
  EXPECT_NEAR(*last_quarter_change(moving, 800), (std::sqrt(200.0) - 10) / std::sqrt(200.0), 1e-12);
  // A rising perplexity counts as much as a falling one.
  const std::vector<CurvePoint> rising = {{600, std::log(10.0)}, {800, std::log(10.5)}};
  EXPECT_NEAR(*last_quarter_change(rising, 800), 0.05, 1e-12);
  // Nothing at or before 3/4 of the updates, or nothing at the end: no reading.
  EXPECT_FALSE(last_quarter_change({{700, 2.0}, {800, 1.9}}, 800).has_value());
  EXPECT_FALSE(last_quarter_change({{400, 2.0}, {700, 1.9}}, 800).has_value());
}

}  // namespace
}  // namespace attn::study
