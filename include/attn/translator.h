#pragma once
// attn as a library: a model folder loaded once, translators over it, and the scoring of given
// translations (docs/cpp-api.md). What `attn translate` and `attn score` compute, with the same
// defaults and the same errors.
//
// Threads: a Model is immutable once loaded and may be shared by any number of threads and
// Translators. One Translator translates one batch at a time (its calls are serialised); create one
// per thread to translate in parallel. score() may be called from several threads at once (calls
// on one Model are serialised). Each call runs its matrix products on `threads` OpenMP threads of
// the calling thread (0: OpenMP's default, all cores).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attn/document.h"
#include "attn/error.h"
#include "attn/search_options.h"

namespace attn {

struct ModelOptions {
  // What to run the model in:
  //   "" (the default): as its file is: an int8 model.safetensors runs in int8, a float32 one in fp32;
  //   "fp32": float32 weights and products;
  //   "bf16": float32 weights, matrix products in bf16 (needs a CPU with AVX512-BF16);
  //   "int8": int8 matrices (a float32 file is quantized as it loads, as `attn quantize` would).
  std::string precision;
};

// A model folder: model.safetensors, config.json and vocab.model (docs/model-format.md).
class Model {
 public:
  // Throws Error naming the missing or inconsistent file, or the unknown precision.
  explicit Model(const std::string& directory, const ModelOptions& options = {});
  ~Model();
  Model(const Model&);  // shares the loaded weights
  Model& operator=(const Model&);

  const std::string& directory() const;
  const std::string& precision() const;  // what it runs in: "fp32", "bf16" or "int8"
  std::int64_t parameters() const;
  int vocabulary_size() const;
  int max_input_tokens() const;  // longer inputs are cropped when translated
  // The language codes the folder records (attn train --source-lang --target-lang); "" where it
  // records none.
  const std::string& source_language() const;
  const std::string& target_language() const;

  // The model's SentencePiece vocabulary: a text as pieces, and pieces back to text.
  std::vector<std::string> encode(const std::string& text) const;
  std::string decode(const std::vector<std::string>& pieces) const;

  struct Impl;

 private:
  friend class Translator;
  friend struct ScoreAccess;
  std::shared_ptr<Impl> impl_;
};

// How a Translator translates. Defaults are `attn translate`'s.
struct TranslationOptions {
  SearchOptions search;           // beam 4, alpha 0.6, at most source tokens + 50 output tokens, 1-best
  int batch_tokens = 2048;        // source tokens per batch, padding included
  int max_batch_sentences = 64;   // sentences per batch
  int max_input_tokens = 0;       // longer inputs are cropped (TranslationResult::cropped); 0: the model's maximum
  int threads = 0;                // OpenMP threads of each call; 0: OpenMP's default
  bool return_attention = false;  // fill TranslationResult::attention (the best hypothesis)
  std::vector<std::string> attention_kinds{"cross"};  // any of "cross", "decoder_self", "encoder_self"
  std::vector<int> attention_layers;                  // layers to return (from 0); empty: all
  std::vector<int> attention_heads;                   // heads to return (from 0); empty: all
  bool return_alignment = false;                      // fill TranslationResult::alignment (needs n_best 1)
  int alignment_layer = -1;  // the cross-attention layer words are aligned by; -1: the default (docs/alignment.md)
  int alignment_head = -1;   // one head, or -1: the mean of the layer's heads
  double alignment_threshold = 0;  // 0: each target word links to its most attended source word; > 0: to every
                                   // source word with at least this weight
  // A lexical shortlist file (`attn shortlist build`, docs/shortlist.md): each batch is decoded over
  // the frequent pieces and each source piece's first shortlist_k candidates only; "": the whole
  // vocabulary. A file built for another vocabulary is refused.
  std::string shortlist;
  int shortlist_k = 50;
};

// A text equal for two options exactly when every field is equal (floats bit for bit): a key for
// a cache of Translators by their options (Python's binding keeps one).
std::string cache_key(const TranslationOptions& options);

// One kind of attention of one translation: weights[layer][head][target][source], float32, row-major,
// over the returned layers and heads. Rows are the output's pieces and </s>, columns the input's
// pieces and </s> (for "decoder_self" both are the output's; for "encoder_self" the input's).
struct Attention {
  std::string kind;  // "cross", "decoder_self" or "encoder_self"
  std::vector<int> layers, heads;
  int rows = 0, cols = 0;
  std::vector<float> weights;  // layers.size() × heads.size() × rows × cols
  float at(std::size_t layer, std::size_t head, int row, int col) const {
    return weights[((layer * heads.size() + head) * static_cast<std::size_t>(rows) + row) * cols + col];
  }
};

struct WordLink {  // source word i is aligned with target word j (both from 0; words split at spaces)
  int source = 0, target = 0;
  bool operator==(const WordLink&) const = default;
};

struct ScoredTranslation {
  std::string text;
  std::vector<std::string> tokens;  // the output's pieces, without </s>
  double score = 0;                 // log_prob / ((5 + |Y|) / 6)^alpha, |Y| counting </s>: what the search ranks by
  double log_prob = 0;              // log P(tokens + </s> | source)
};

struct TranslationResult : ScoredTranslation {  // the best hypothesis
  std::vector<ScoredTranslation> n_best;        // search.n_best hypotheses, best first (the first is this one)
  std::vector<std::string> source_tokens;       // the input's pieces as translated (cropped), without </s>
  bool cropped = false;                         // the input was longer than max_input_tokens
  std::vector<Attention> attention;             // return_attention: one per kind asked, in the order asked
  std::vector<WordLink> alignment;              // return_alignment: sorted by (source, target)
};

class Translator {
 public:
  // Throws Error naming the option that is out of range or that the model does not have.
  explicit Translator(const Model& model, TranslationOptions options = {});
  ~Translator();
  Translator(const Translator&) = delete;
  Translator& operator=(const Translator&) = delete;

  // One result per text, in order. Empty texts translate to empty results; texts must be UTF-8
  // (an Error names the text's index and the byte otherwise).
  std::vector<TranslationResult> translate(const std::vector<std::string>& texts);
  // A whole document in its format: cut into sentences, translated with this translator's search
  // options (n_best 1), inline markup placed on the translated words by their alignment, and
  // written back with its layout. Throws Error (invalid_argument) naming what is wrong with the
  // document or the options.
  DocumentTranslation translate_document(const std::string& data, const DocumentOptions& options = {});
  const TranslationOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct PairScore {
  double log_prob = 0;    // log P(target + </s> | source)
  int tokens = 0;         // the target's pieces, </s> included
  double perplexity = 0;  // exp(-log_prob / tokens)
};

// The model's log-probability of given translations (forced decoding; `attn score`). Sources and
// targets pair by index; each must fit the model (an Error names the index otherwise).
std::vector<PairScore> score(const Model& model, const std::vector<std::string>& sources,
                             const std::vector<std::string>& targets, int batch_sentences = 32, int threads = 0);

}  // namespace attn
