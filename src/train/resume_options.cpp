#include "train/resume_options.h"

#include <set>

namespace attn {

namespace {

bool free_to_change(const std::string& key) {
  static const std::set<std::string> free{"run_dir",
                                          "source_lang",
                                          "target_lang",
                                          "threads",
                                          "allreduce",
                                          "allreduce_bucket_mb",
                                          "allreduce_precision",
                                          "peer_timeout_seconds",
                                          "max_steps",
                                          "max_epochs",
                                          "time_budget_minutes",
                                          "early_stopping",
                                          "valid_every",
                                          "valid_translate",
                                          "save_every",
                                          "save_every_minutes",
                                          "keep_checkpoints",
                                          "snapshot_every_minutes",
                                          "log_every"};
  return free.count(key) > 0;
}

}  // namespace

std::string changed_options(const nlohmann::json& saved, int saved_ranks, const nlohmann::json& now, int ranks) {
  std::string text;
  const bool linear = now.value("lr_decay", "") == "linear";
  for (const auto& [key, value] : now.items()) {
    if ((free_to_change(key) && !(linear && key == "max_steps")) || !saved.contains(key) || saved.at(key) == value)
      continue;
    if (key == "accumulate" &&
        (saved_ranks != ranks || saved.at(key).get<int>() * saved_ranks == value.get<int>() * ranks))
      continue;
    text += (text.empty() ? "" : "; ") + key + " is " + value.dump() + " now, " + saved.at(key).dump() +
            " in the checkpoint";
  }
  return text;
}

}  // namespace attn
