// The public Model, Translator and score() (include/attn/translator.h) over the decode floor.
#include "attn/translator.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <mutex>
#include <sstream>

#include "api/argument_errors.h"
#include "core/error.h"
#include "core/utf8.h"
#include "decode/attention_records.h"
#include "decode/attention_export.h"
#include "decode/forced_decoding.h"
#include "decode/model_directory.h"
#include "decode/search_options.h"
#include "decode/batch_translator.h"
#include "document/document_file.h"
#include "document/language_detection.h"
#include "document/model_sentences.h"
#include "inspect/word_alignment.h"

namespace attn {

struct Model::Impl {
  std::string directory, precision;
  LoadedModel loaded;
  std::mutex forced;  // forced decoding runs in the model's own training workspace: one call at a time
};

namespace {

using api::invalid;

// OpenMP's thread count of the calling thread for the length of a call (an ICV of this thread
// alone: other threads keep theirs).
class ThreadCount {
 public:
  explicit ThreadCount(int threads) : before_(omp_get_max_threads()) {
    if (threads > 0) omp_set_num_threads(threads);
  }
  ~ThreadCount() { omp_set_num_threads(before_); }

 private:
  int before_;
};

// What a model loaded with `asked` runs in: as asked, or as its file is.
std::string precision_name(const Transformer& model, const std::string& asked) {
  if (!asked.empty()) return asked;
  return model.weight_format() == WeightFormat::int8 ? "int8" : "fp32";
}

void check_utf8(const std::vector<std::string>& texts, const char* what) {
  for (std::size_t i = 0; i < texts.size(); ++i)
    if (auto bad = find_invalid_utf8(texts[i]))
      invalid(std::string(what) + " " + std::to_string(i) + ": invalid UTF-8 at byte " + std::to_string(*bad + 1));
}

std::vector<std::string> pieces(const data::Vocabulary& vocabulary, const std::vector<std::int32_t>& ids) {
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (std::int32_t id : ids) out.push_back(vocabulary.piece(id));
  return out;
}

}  // namespace

Model::Model(const std::string& directory, const ModelOptions& options) : impl_(std::make_shared<Impl>()) {
  impl_->directory = directory;
  try {
    impl_->loaded = load_model_directory(directory, options.precision);
  } catch (const Error& e) {
    namespace fs = std::filesystem;
    const fs::path dir(directory);
    bool known_precision = true;
    try {
      parse_load_precision(options.precision);
    } catch (const Error&) {
      known_precision = false;
    }
    if (!known_precision) invalid(e.what());
    bool missing = !fs::is_directory(dir);
    for (const char* file : {"model.safetensors", "config.json", "vocab.model"})
      missing = missing || !fs::exists(dir / file);
    if (missing) throw Error(e.what(), ErrorKind::not_found);
    throw;
  }
  impl_->precision = precision_name(*impl_->loaded.model, options.precision);
}

Model::~Model() = default;
Model::Model(const Model&) = default;
Model& Model::operator=(const Model&) = default;

const std::string& Model::directory() const { return impl_->directory; }
const std::string& Model::precision() const { return impl_->precision; }
std::int64_t Model::parameters() const { return impl_->loaded.model->parameter_count(); }
int Model::vocabulary_size() const { return impl_->loaded.vocabulary->size(); }
int Model::max_input_tokens() const { return impl_->loaded.model->config().max_positions - 1; }
const std::string& Model::source_language() const { return impl_->loaded.languages.source; }
const std::string& Model::target_language() const { return impl_->loaded.languages.target; }

std::vector<std::string> Model::encode(const std::string& text) const {
  if (auto bad = find_invalid_utf8(text)) invalid("invalid UTF-8 at byte " + std::to_string(*bad + 1));
  return impl_->loaded.vocabulary->encode_pieces(text);
}

std::string Model::decode(const std::vector<std::string>& pieces) const {
  return impl_->loaded.vocabulary->decode_pieces(pieces);
}

struct Translator::Impl {
  std::shared_ptr<Model::Impl> model;
  TranslationOptions options;
  inspect::AlignmentOptions align;
  std::unique_ptr<BatchTranslator> translator;
  BatchTranslatorOptions internal;                      // the options `translator` was made with
  std::unique_ptr<document::ModelSentences> sentences;  // translate_document's, made on first use
  std::mutex busy;
};

namespace {

BatchTranslatorOptions internal_options(const TranslationOptions& o, const LoadedModel& model,
                                        inspect::AlignmentOptions& align) {
  const ModelConfig& config = model.model->config();
  auto positive = [](int v, const char* name) {
    if (v < 1) invalid(std::string(name) + " must be at least 1, not " + std::to_string(v));
  };
  validate(o.search);  // the rule of every face (decode/search_options.h)
  positive(o.batch_tokens, "batch_tokens");
  positive(o.max_batch_sentences, "max_batch_sentences");
  if (o.max_input_tokens < 0) invalid("max_input_tokens must be >= 0 (0: the model's maximum)");
  if (o.threads < 0) invalid("threads must be >= 0 (0: OpenMP's default)");
  if (!(o.alignment_threshold >= 0 && o.alignment_threshold <= 1)) invalid("alignment_threshold must be in [0, 1]");
  BatchTranslatorOptions t;
  t.search = o.search;
  t.batch_tokens = o.batch_tokens;
  t.max_batch_sentences = o.max_batch_sentences;
  t.max_input_tokens = o.max_input_tokens;
  if (o.return_attention) {
    if (o.attention_kinds.empty()) invalid("attention_kinds is empty: name cross, decoder_self or encoder_self");
    t.attention.cross = false;
    for (const std::string& kind : o.attention_kinds) {
      switch (inspect::parse_attention_kind(kind)) {
        case inspect::AttentionKind::cross:
          t.attention.cross = true;
          break;
        case inspect::AttentionKind::decoder_self:
          t.attention.decoder_self = true;
          break;
        case inspect::AttentionKind::encoder_self:
          t.attention.encoder_self = true;
          break;
      }
    }
    t.attention.layers = o.attention_layers;
    t.attention.heads = o.attention_heads;
  }
  if (o.return_alignment) {
    if (o.search.n_best > 1) invalid("return_alignment aligns the best translation: it needs search.n_best 1");
    const std::string head = o.alignment_head < 0 ? "mean" : std::to_string(o.alignment_head);
    align = resolve_alignment(config, t.attention, o.alignment_layer, head, o.alignment_threshold);
  }
  t.export_attention = o.return_attention || o.return_alignment;
  if (o.shortlist_k < 1) invalid("shortlist_k must be at least 1, not " + std::to_string(o.shortlist_k));
  t.shortlist_k = o.shortlist_k;
  if (!o.shortlist.empty())
    t.shortlist = std::make_shared<const Shortlist>(Shortlist::load(o.shortlist, *model.vocabulary));
  return t;
}

// The matrices of one kind as one [layers, heads, rows, cols] array, in the record's order
// (layer, then head).
Attention gather(const std::vector<inspect::AttentionMatrix>& matrices, inspect::AttentionKind kind) {
  Attention a;
  a.kind = std::string(inspect::attention_kind_name(kind));
  std::vector<const inspect::AttentionMatrix*> chosen;
  for (const auto& m : matrices) {
    if (m.kind != kind) continue;
    chosen.push_back(&m);
    if (std::find(a.layers.begin(), a.layers.end(), m.layer) == a.layers.end()) a.layers.push_back(m.layer);
    if (std::find(a.heads.begin(), a.heads.end(), m.head) == a.heads.end()) a.heads.push_back(m.head);
  }
  if (chosen.empty()) return a;
  a.rows = chosen.front()->rows;
  a.cols = chosen.front()->cols;
  ATTN_CHECK(chosen.size() == a.layers.size() * a.heads.size(), "attention matrices form a layers x heads grid");
  a.weights.reserve(chosen.size() * static_cast<std::size_t>(a.rows) * a.cols);
  for (const auto* m : chosen) {
    ATTN_CHECK(m->rows == a.rows && m->cols == a.cols, "attention matrices of one kind share a shape");
    a.weights.insert(a.weights.end(), m->weights.begin(), m->weights.end());
  }
  return a;
}

}  // namespace

std::string cache_key(const TranslationOptions& options) {
  // Every member, by position: a member added to TranslationOptions stops this from compiling.
  const auto& [search, batch_tokens, max_batch_sentences, max_input_tokens, threads, return_attention, attention_kinds,
               attention_layers, attention_heads, return_alignment, alignment_layer, alignment_head,
               alignment_threshold, shortlist, shortlist_k] = options;
  std::ostringstream k;
  k << std::hexfloat << cache_key(search) << ' ' << batch_tokens << ' ' << max_batch_sentences << ' '
    << max_input_tokens << ' ' << threads << ' ' << return_attention << ' ' << return_alignment << ' '
    << alignment_layer << ' ' << alignment_head << ' ' << alignment_threshold << ' ' << shortlist_k;
  for (const std::string& kind : attention_kinds) k << " k" << kind;
  for (int l : attention_layers) k << " l" << l;
  for (int h : attention_heads) k << " h" << h;
  k << " s" << shortlist;  // last: a path may hold spaces
  return k.str();
}

Translator::Translator(const Model& model, TranslationOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->model = model.impl_;
  impl_->options = std::move(options);
  const LoadedModel& m = impl_->model->loaded;
  try {  // everything that can go wrong here is an option
    const BatchTranslatorOptions t = internal_options(impl_->options, m, impl_->align);
    impl_->translator = std::make_unique<BatchTranslator>(*m.model, *m.vocabulary, t);
    impl_->internal = t;
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::other) invalid(e.what());
    throw;
  }
}

Translator::~Translator() = default;

const TranslationOptions& Translator::options() const { return impl_->options; }

std::vector<TranslationResult> Translator::translate(const std::vector<std::string>& texts) {
  check_utf8(texts, "text");
  const std::lock_guard<std::mutex> lock(impl_->busy);
  const ThreadCount threads(impl_->options.threads);
  const TranslationOptions& o = impl_->options;
  const data::Vocabulary& vocabulary = *impl_->model->loaded.vocabulary;
  std::vector<BatchTranslation> translations = impl_->translator->translate(texts);
  std::vector<TranslationResult> out(texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    BatchTranslation& t = translations[i];
    TranslationResult& r = out[i];
    r.cropped = t.cropped;
    r.source_tokens = pieces(vocabulary, t.source_ids);
    for (std::size_t h = 0; h < t.n_best.size(); ++h) {
      ScoredTranslation s;
      s.text = t.n_best_text[h];
      s.tokens = pieces(vocabulary, t.n_best[h].tokens);
      s.score = t.n_best[h].score;
      s.log_prob = t.n_best[h].log_prob;
      r.n_best.push_back(std::move(s));
    }
    if (!r.n_best.empty()) static_cast<ScoredTranslation&>(r) = r.n_best.front();
    if (r.n_best.empty()) continue;  // an empty text
    if (o.return_alignment) {
      const inspect::AttentionRecord record = translation_record(vocabulary, static_cast<std::int64_t>(i) + 1, texts[i],
                                                                 r.text, t.source_ids, t.n_best, t.attention);
      for (const inspect::Link& link : inspect::align_record(record, impl_->align))
        r.alignment.push_back({link.source, link.target});
    }
    if (o.return_attention) {
      for (const std::string& kind : o.attention_kinds) {
        const inspect::AttentionKind k = inspect::parse_attention_kind(kind);
        bool seen = false;
        for (const Attention& a : r.attention) seen = seen || a.kind == inspect::attention_kind_name(k);
        if (!seen) r.attention.push_back(gather(t.attention, k));
      }
    }
  }
  return out;
}

DocumentTranslation Translator::translate_document(const std::string& data, const DocumentOptions& options) {
  const auto format = document::parse_format(options.format);
  if (!format) invalid("format \"" + options.format + "\" is not one of text, html, markdown, docx, odt");
  const std::lock_guard<std::mutex> lock(impl_->busy);
  const ThreadCount threads(impl_->options.threads);
  const LoadedModel& m = impl_->model->loaded;
  if (!impl_->sentences) impl_->sentences = std::make_unique<document::ModelSentences>(m, impl_->internal);
  document::FileTranslation t;
  try {
    t = document::translate_file(data, *format, std::ref(*impl_->sentences),
                                 document::document_options(*impl_->sentences, m, options.source_language));
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::other) invalid(e.what());
    throw;
  }
  DocumentTranslation out;
  out.data = std::move(t.bytes);
  out.warnings = std::move(t.details.warnings);
  out.sentences = static_cast<int>(t.details.sentences.size());
  return out;
}

std::vector<DetectedLanguage> detect_language(const std::string& text, const std::vector<std::string>& languages) {
  std::vector<DetectedLanguage> out;
  for (const auto& d : document::detect_language(text, languages)) out.push_back({d.language, d.confidence});
  return out;
}

struct ScoreAccess {
  static Model::Impl& impl(const Model& model) { return *model.impl_; }
};

std::vector<PairScore> score(const Model& model, const std::vector<std::string>& sources,
                             const std::vector<std::string>& targets, int batch_sentences, int threads) {
  if (sources.size() != targets.size())
    invalid("score: " + std::to_string(sources.size()) + " sources but " + std::to_string(targets.size()) + " targets");
  if (batch_sentences < 1) invalid("batch_sentences must be at least 1");
  check_utf8(sources, "source");
  check_utf8(targets, "target");
  Model::Impl& m = ScoreAccess::impl(model);
  const auto source_ids = m.loaded.vocabulary->encode_lines(sources);
  const auto target_ids = m.loaded.vocabulary->encode_lines(targets);
  const std::size_t limit = static_cast<std::size_t>(m.loaded.model->config().max_positions - 1);
  for (std::size_t i = 0; i < source_ids.size(); ++i) {
    if (source_ids[i].size() > limit || target_ids[i].size() > limit)
      invalid(std::string(source_ids[i].size() > limit ? "source " : "target ") + std::to_string(i) +
              " is longer than the model's " + std::to_string(limit) + " tokens");
  }
  std::vector<ForcedDecoding> results;
  {
    const std::lock_guard<std::mutex> lock(m.forced);
    const ThreadCount count(threads);
    results = force_decode(*m.loaded.model, source_ids, target_ids, batch_sentences);
  }
  std::vector<PairScore> out;
  out.reserve(results.size());
  for (const ForcedDecoding& r : results)
    out.push_back({r.log_prob, r.target_tokens, std::exp(-r.log_prob / std::max(r.target_tokens, 1))});
  return out;
}

}  // namespace attn
