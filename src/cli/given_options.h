#pragma once
// Options that change a chosen set of settings (a preset) only where they are given: each option
// is bound to a scratch copy, and after parsing the fields given on the command line are copied
// over the chosen settings, field by field (`attn table3 plan --preset learnt --steps 500`).
#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace attn::cli {

template <class Settings>
class GivenOptions {
 public:
  explicit GivenOptions(CLI::App* app) : app_(app) {}

  // --name for settings.*field.
  template <class T>
  CLI::Option* add(const std::string& name, T Settings::*field, const std::string& help) {
    CLI::Option* option = app_->add_option(name, (*given_).*field, help);
    apply_.push_back([=, given = given_](Settings& s) {
      if (option->count()) s.*field = (*given).*field;
    });
    return option;
  }
  // --name for (settings.*part).*field.
  template <class Part, class T>
  CLI::Option* add(const std::string& name, Part Settings::*part, T Part::*field, const std::string& help) {
    CLI::Option* option = app_->add_option(name, ((*given_).*part).*field, help);
    apply_.push_back([=, given = given_](Settings& s) {
      if (option->count()) (s.*part).*field = ((*given).*part).*field;
    });
    return option;
  }

  // `chosen` with every given option's value in place of its own.
  Settings applied_to(Settings chosen) const {
    for (const auto& apply : apply_) apply(chosen);
    return chosen;
  }

 private:
  CLI::App* app_;
  std::shared_ptr<Settings> given_ = std::make_shared<Settings>();
  std::vector<std::function<void(Settings&)>> apply_;
};

}  // namespace attn::cli
