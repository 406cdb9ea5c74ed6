#pragma once
// A synthetic translation task for training tests: sentences of 4-9 words from a 14-word
// vocabulary, translated by reversing the word order.
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "core/atomic_file.h"
#include "core/random.h"
#include "data/vocabulary_training.h"
#include "train/train_options.h"

namespace attn::testing {

// Whether `file` appeared within `limit` (a checkpoint a running job writes), looking every 2 ms.
inline bool wait_for_file(const std::filesystem::path& file, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!std::filesystem::exists(file) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return std::filesystem::exists(file);
}

struct ReverseTask {
  std::filesystem::path dir, train_src, train_tgt, dev_src, dev_tgt, vocabulary;
  std::vector<std::string> dev_sources, dev_targets;
};

inline std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> w;
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t j = s.find(' ', i);
    w.push_back(s.substr(i, j == std::string::npos ? std::string::npos : j - i));
    if (j == std::string::npos) break;
    i = j + 1;
  }
  return w;
}

inline ReverseTask make_reverse_task(const std::filesystem::path& dir, int train_pairs = 6000, int dev_pairs = 200) {
  static const std::vector<std::string> words{"alpha", "beta",   "gamma", "delta", "epsilon", "zeta",  "theta",
                                              "kappa", "lambda", "sigma", "omega", "river",   "stone", "light"};
  ReverseTask t;
  t.dir = dir;
  Random rng(12345);
  auto make = [&](int n, std::vector<std::string>& src, std::vector<std::string>& tgt) {
    for (int i = 0; i < n; ++i) {
      std::vector<std::string> w(4 + rng.below(6));
      for (auto& x : w) x = words[rng.below(words.size())];
      std::string s, r;
      for (std::size_t k = 0; k < w.size(); ++k) {
        s += (k ? " " : "") + w[k];
        r += (k ? " " : "") + w[w.size() - 1 - k];
      }
      src.push_back(s);
      tgt.push_back(r);
    }
  };
  std::vector<std::string> train_src, train_tgt;
  make(train_pairs, train_src, train_tgt);
  make(dev_pairs, t.dev_sources, t.dev_targets);
  auto write = [](const std::filesystem::path& p, const std::vector<std::string>& lines) {
    std::string text;
    for (const auto& l : lines) text += l + "\n";
    write_file_atomic(p, text);
  };
  t.train_src = dir / "train.src";
  t.train_tgt = dir / "train.tgt";
  t.dev_src = dir / "dev.src";
  t.dev_tgt = dir / "dev.tgt";
  write(t.train_src, train_src);
  write(t.train_tgt, train_tgt);
  write(t.dev_src, t.dev_sources);
  write(t.dev_tgt, t.dev_targets);
  data::VocabularyTrainingOptions v;
  v.inputs = {t.train_src};
  v.model_prefix = dir / "vocab";
  v.vocab_size = 400;
  t.vocabulary = data::train_vocabulary(v).model_file;
  return t;
}

// A model small enough to learn the task in seconds.
inline TrainOptions reverse_task_options(const ReverseTask& t, const std::filesystem::path& run) {
  TrainOptions o;
  o.train_source = t.train_src.string();
  o.train_target = t.train_tgt.string();
  o.valid_source = t.dev_src.string();
  o.valid_target = t.dev_tgt.string();
  o.vocabulary = t.vocabulary.string();
  o.run_dir = run.string();
  o.preset = "tiny";
  o.model = ModelConfig::preset("tiny");
  o.model.d_model = 64;
  o.model.d_ff = 128;
  o.model.d_k = o.model.d_v = 16;
  o.model.dropout = 0;
  o.batch_tokens = 1024;
  o.warmup_steps = 100;
  o.lr_scale = 0.2;
  o.valid_every = 500;
  o.valid_translate = 0;
  o.save_every = 0;
  o.save_every_minutes = 0;
  o.log_every = 100;
  return o;
}

}  // namespace attn::testing
