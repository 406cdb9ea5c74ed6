// GivenOptions: options that change a chosen preset only where they are on the command line.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/given_options.h"

namespace attn::cli {
namespace {

struct Inner {
  int steps = 0;
  std::string decay;
};
struct Settings {
  int width = 0;
  double rate = 0;
  Inner inner;
};

// Parses `args` with --width, --rate, --steps and --decay bound through GivenOptions, then applies
// them to a preset whose every field differs from the scratch copy's defaults.
Settings parse(std::vector<std::string> args) {
  CLI::App app;
  GivenOptions<Settings> given(&app);
  given.add("--width", &Settings::width, "");
  given.add("--rate", &Settings::rate, "");
  given.add("--steps", &Settings::inner, &Inner::steps, "");
  given.add("--decay", &Settings::inner, &Inner::decay, "");
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  app.parse(reversed);
  return given.applied_to(Settings{7, 0.5, Inner{100, "inverse_sqrt"}});
}

TEST(GivenOptions, OnlyTheOptionsGivenReplaceThePresetsValues) {
  const Settings none = parse({});
  EXPECT_EQ(none.width, 7);
  EXPECT_EQ(none.rate, 0.5);
  EXPECT_EQ(none.inner.steps, 100);
  EXPECT_EQ(none.inner.decay, "inverse_sqrt");

  const Settings some = parse({"--steps", "5", "--rate", "0.25"});
  EXPECT_EQ(some.width, 7);
  EXPECT_EQ(some.rate, 0.25);
  EXPECT_EQ(some.inner.steps, 5);
  EXPECT_EQ(some.inner.decay, "inverse_sqrt");

  // A value equal to the scratch copy's default (0, "") is still a value given.
  const Settings zero = parse({"--width", "0", "--decay", ""});
  EXPECT_EQ(zero.width, 0);
  EXPECT_EQ(zero.inner.decay, "");
  EXPECT_EQ(zero.inner.steps, 100);
}

}  // namespace
}  // namespace attn::cli
