// The learning-curve readings of a training log, on hand-made curves worked out by hand.
#include "study/learning_curve.h"

#include <cmath>

#include <gtest/gtest.h>

namespace attn::study {
namespace {

// Records at updates 50, 100, 150 after 10, 30 and 40 seconds of training.
const std::vector<CurvePoint> kElapsed = {{50, 10.0}, {100, 30.0}, {150, 40.0}};

TEST(LearningCurve, UpdateReachedAtAGivenTime) {
  EXPECT_DOUBLE_EQ(*update_at_time(kElapsed, 10.0), 50);   // at a record
  EXPECT_DOUBLE_EQ(*update_at_time(kElapsed, 20.0), 75);   // halfway from 10 s to 30 s: halfway from 50 to 100
  EXPECT_DOUBLE_EQ(*update_at_time(kElapsed, 35.0), 125);  // 5 of the 10 s from 100 to 150
  EXPECT_DOUBLE_EQ(*update_at_time(kElapsed, 5.0), 25);    // before the first record: from (0, 0 s)
  EXPECT_DOUBLE_EQ(*update_at_time(kElapsed, 0.0), 0);
  EXPECT_FALSE(update_at_time(kElapsed, 40.5).has_value());  // the run trained for 40 s only
  EXPECT_FALSE(update_at_time({}, 1.0).has_value());
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
