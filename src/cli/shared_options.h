#pragma once
// The options several commands share, declared once: the same name, help, default display and
// range wherever they appear (translate, serve, score, align).
#include <CLI/CLI.hpp>
#include <omp.h>

#include <string>

namespace attn::cli {

// --precision for commands that load a model folder (decode/model_directory.h's names).
inline void add_precision_option(CLI::App* sub, std::string& precision) {
  sub->add_option("--precision", precision,
                  "fp32, bf16 (products in bf16; needs AVX512-BF16) or int8 (weights quantized as the model loads); "
                  "default: as the model file is (float32 or int8)")
      ->check(CLI::IsMember({"fp32", "bf16", "int8"}));
}

// --threads for commands that run a model.
inline void add_threads_option(CLI::App* sub, int& threads) {
  sub->add_option("--threads", threads, "CPU threads for the model's work (0: all cores)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1024));
}

// Applies a --threads value to this thread's model work (0 keeps OpenMP's default: all cores).
inline void apply_threads(int threads) {
  if (threads > 0) omp_set_num_threads(threads);
}

// --batch-tokens and --max-batch-sentences for commands that batch sentences of similar length
// (decode/batch_translator.h's BatchTranslatorOptions, serve's batching).
inline void add_batching_options(CLI::App* sub, int& batch_tokens, int& max_batch_sentences) {
  sub->add_option("--batch-tokens", batch_tokens, "source tokens per batch, padding included")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 24));
  sub->add_option("--max-batch-sentences", max_batch_sentences, "sentences per batch")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 16));
}

// --batch-sentences for commands that force-decode given pairs in file order (score, align).
inline void add_batch_sentences_option(CLI::App* sub, int& batch_sentences, const std::string& scope = "") {
  sub->add_option("--batch-sentences", batch_sentences, scope + "sentence pairs per forced-decoding batch")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 16));
}

}  // namespace attn::cli
