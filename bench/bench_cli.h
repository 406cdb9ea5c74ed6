#pragma once
// The command line of the bench programs, parsed with CLI11 as the `attn` commands parse theirs, and
// reported one way: --help prints the usage and exits 0; a bad argument (an unknown option, a missing
// value, a non-number where a number goes, a value out of range, an unknown preset) prints
// "PROGRAM: what is wrong" on stderr and exits 2; an attn::Error while running prints
// "PROGRAM: error: ..." and exits 1, as `attn` does.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "core/error.h"
#include "model/model_config.h"

namespace attn::bench {

// A number no less than `lo`, finite (CLI11's own ranges let NaN through and print their limits as
// 2.22507e-308). Checked on the text, before CLI11 converts it to the option's type.
inline CLI::Validator at_least(double lo) {
  char bound[32];
  std::snprintf(bound, sizeof bound, "%g", lo);
  const std::string text_bound = bound;
  return CLI::Validator(
      [lo, text_bound](std::string& text) -> std::string {
        double v = 0;
        std::size_t used = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception&) {
          return "'" + text + "' is not a number";
        }
        if (used != text.size()) return "'" + text + "' is not a number";
        if (!std::isfinite(v) || v < lo) return "value " + text + " is not a number >= " + text_bound;
        return "";
      },
      "");
}

// A model preset, looked up with ModelConfig::preset: an unknown name's message names it and the
// known ones.
inline CLI::Validator preset_name() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          ModelConfig::preset(text);
        } catch (const Error& e) {
          return e.what();
        }
        return "";
      },
      "");
}

// "base, big, small, tiny": for the help of a preset argument.
inline std::string preset_list() {
  std::string out;
  for (const auto& name : ModelConfig::preset_names()) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// Parses the command line with `app` (named after the program, which the messages start with) and
// runs `body` (returning the exit status). A check of the arguments that CLI11 cannot express
// throws CLI::ValidationError from `body`, before any work, and is reported as a bad argument.
template <typename Body>
int run_main(CLI::App& app, int argc, char** argv, Body&& body) {
  const std::string name = app.get_name();
  app.description(app.get_description() + "\n");  // a blank line before "Usage:"
  try {
    app.parse(argc, argv);
    return body();
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    // CLI11 checks for required options before it rejects the arguments it could not place; an
    // unknown option (perhaps a misspelt required one) is the fault to tell first.
    const std::vector<std::string> extras = app.remaining();
    const std::string what = extras.empty() ? e.what() : CLI::ExtrasError(extras).what();
    std::cerr << name << ": " << what << "\nRun " << name << " --help for the usage.\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << name << ": error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << name << ": unexpected error: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace attn::bench
