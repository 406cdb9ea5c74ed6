#pragma once
// The option sets every face of the search options is tried with (decode's check, the command
// line, /v1, the C++ API; tests/python/test_attn.py holds the same table for Python), each with
// the message every face must give, written out by hand from the limits docs/commands.md states:
// beam 1..128, n_best 1..beam, alpha finite in [0, 10], max_length_a finite in [0, 1000],
// max_length_b and min_length in [0, 1048576], not both max_length_a and max_length_b 0.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "attn/search_options.h"

namespace attn::testing {

struct SearchOptionCase {
  std::string name;
  SearchOptions options;
  std::string error;            // "": accepted
  bool on_command_line = true;  // the command line has no --min-length
  bool in_json = true;          // JSON has no NaN nor infinity
};

inline std::vector<SearchOptionCase> search_option_cases() {
  const std::string n_best_rule = "n_best must be an integer from 1 to the beam, ";
  const std::string alpha_rule = "alpha must be a finite number from 0 to 10 (got ";
  const std::string a_rule = "max_length_a must be a finite number from 0 to 1000 (got ";
  const auto accepted = [](std::string name, SearchOptions options, bool on_command_line = true) {
    return SearchOptionCase{std::move(name), options, "", on_command_line, true};
  };
  const auto refused = [](std::string name, SearchOptions options, std::string error, bool on_command_line = true,
                          bool in_json = true) {
    return SearchOptionCase{std::move(name), options, std::move(error), on_command_line, in_json};
  };
  return {
      accepted("defaults", {}),
      accepted("greedy", {.beam_size = 1}),
      accepted("n_best equal to the beam", {.beam_size = 3, .n_best = 3}),
      accepted("alpha 0", {.length_penalty = 0}),
      accepted("the largest beam and n_best", {.beam_size = 128, .n_best = 128}),
      accepted("the largest alpha, a and b", {.length_penalty = 10, .max_length_a = 1000, .max_length_b = 1048576}),
      accepted("a 0 with b 1", {.max_length_a = 0, .max_length_b = 1}),
      accepted("a 0.5 with b 0", {.max_length_a = 0.5f, .max_length_b = 0}),
      accepted("the largest min_length", {.min_length = 1048576}, false),
      refused("n_best above the beam", {.beam_size = 2, .n_best = 3}, n_best_rule + "2 (got 3)"),
      refused("n_best 0", {.n_best = 0}, n_best_rule + "4 (got 0)"),
      refused("beam 0", {.beam_size = 0}, "beam must be an integer from 1 to 128 (got 0)"),
      refused("beam above the limit", {.beam_size = 129}, "beam must be an integer from 1 to 128 (got 129)"),
      refused("negative alpha", {.length_penalty = -0.5f}, alpha_rule + "-0.5)"),
      refused("alpha above the limit", {.length_penalty = 10.5f}, alpha_rule + "10.5)"),
      refused("alpha NaN", {.length_penalty = NAN}, alpha_rule + "nan)", true, false),
      refused("alpha infinite", {.length_penalty = INFINITY}, alpha_rule + "inf)", true, false),
      refused("negative max_length_a", {.max_length_a = -1}, a_rule + "-1)"),
      refused("max_length_a above the limit", {.max_length_a = 1000.5f}, a_rule + "1000.5)"),
      refused("max_length_a NaN", {.max_length_a = NAN}, a_rule + "nan)", true, false),
      refused("negative max_length_b", {.max_length_b = -1},
              "max_length_b must be an integer from 0 to 1048576 (got -1)"),
      refused("max_length_b above the limit", {.max_length_b = 1048577},
              "max_length_b must be an integer from 0 to 1048576 (got 1048577)"),
      refused("a and b 0", {.max_length_a = 0, .max_length_b = 0},
              "max_length_a 0 and max_length_b 0 allow no output token: give max_length_a or max_length_b > 0"),
      refused("negative min_length", {.min_length = -1}, "min_length must be an integer from 0 to 1048576 (got -1)",
              false),
      refused("min_length above the limit", {.min_length = 1048577},
              "min_length must be an integer from 0 to 1048576 (got 1048577)", false),
  };
}

}  // namespace attn::testing
