// Floats written to JSON configs read as their shortest decimal and round-trip exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "core/float_decimal.h"
#include "core/random.h"

namespace attn {
namespace {

TEST(FloatDecimal, ConfigValuesReadAsTyped) {
  EXPECT_EQ(nlohmann::json(float_decimal(0.1f)).dump(), "0.1");
  EXPECT_EQ(nlohmann::json(float_decimal(0.98f)).dump(), "0.98");
  EXPECT_EQ(nlohmann::json(float_decimal(1e-9f)).dump(), "1e-09");
  EXPECT_EQ(nlohmann::json(float_decimal(0.3f)).dump(), "0.3");
}

TEST(FloatDecimal, RoundTripsEveryFloatExactly) {
  Random rng(7);
  for (int i = 0; i < 100000; ++i) {
    const auto bits = static_cast<std::uint32_t>(rng.next());
    float f;
    std::memcpy(&f, &bits, sizeof f);
    if (!std::isfinite(f)) continue;
    EXPECT_EQ(static_cast<float>(float_decimal(f)), f) << bits;
  }
}

}  // namespace
}  // namespace attn
