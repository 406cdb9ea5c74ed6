#include "train/validation.h"

#include <chrono>
#include <cmath>
#include <cstdio>

#include "core/number_format.h"
#include "core/error.h"
#include "core/text_file.h"
#include "decode/batch_translator.h"
#include "eval/bleu.h"
#include "eval/chrf.h"

namespace attn {
namespace {

data::ParallelCorpus load_dev(const TrainOptions& o, const data::Vocabulary& vocabulary,
                              const std::filesystem::path& cache_dir, std::ostream& log) {
  data::ParallelCorpusOptions c;
  c.source_file = o.valid_source;
  c.target_file = o.valid_target;
  c.cache_dir = cache_dir;
  c.max_tokens = static_cast<std::size_t>(o.max_length);
  c.log = &log;
  return data::ParallelCorpus::load(vocabulary, c);
}

}  // namespace

std::string ValidationResult::summary() const {
  std::string s = "loss " + format_fixed(loss, 4) + " | ce " + format_fixed(cross_entropy, 4) + " | ppl " +
                  format_fixed(perplexity, 2);
  if (bleu) s += " | BLEU " + format_fixed(*bleu, 2);
  if (chrf) s += " | chrF2 " + format_fixed(*chrf, 2);
  return s + " | " + format_fixed(seconds, 1) + "s";
}

ValidRecord ValidationResult::record() const {
  ValidRecord r;
  r.loss = loss;
  r.cross_entropy = cross_entropy;
  r.ppl = perplexity;
  r.tokens = tokens;
  r.seconds = seconds;
  r.bleu = bleu;
  r.chrf = chrf;
  if (translated) r.translated = translated;
  return r;
}

Validation::Validation(const TrainOptions& o, const data::Vocabulary& vocabulary,
                       const std::filesystem::path& cache_dir, std::ostream& log)
    : vocabulary_(vocabulary), corpus_(load_dev(o, vocabulary, cache_dir, log)) {
  // With no pair to score, every validation would be a "new best" of perplexity 0.
  if (corpus_.size() == 0)
    throw Error("the dev set " + o.valid_source + " / " + o.valid_target +
                " has no usable sentence pair (every line is blank or longer than max_length): give dev "
                "sentences, or leave valid_source and valid_target out to train without validation");
  batcher_ =
      std::make_unique<data::Batcher>(corpus_, data::BatchingOptions{static_cast<std::size_t>(o.batch_tokens), 1});
  batches_ = batcher_->epoch(0);
  if (o.valid_translate > 0) {
    const auto src = read_text_lines(o.valid_source), tgt = read_text_lines(o.valid_target);
    for (std::size_t i = 0; i < src.size() && static_cast<int>(sources_.size()) < o.valid_translate; ++i) {
      if (src[i].empty() || tgt[i].empty()) continue;
      sources_.push_back(src[i]);
      references_.push_back(tgt[i]);
    }
  }
}

ValidationResult Validation::run(Transformer& model) {
  const auto t0 = std::chrono::steady_clock::now();
  ValidationResult r;
  double loss = 0, nll = 0;
  for (std::size_t k = 0; k < batches_.size(); ++k) {
    batcher_->fill(batches_.pairs(k), batch_);
    const LossSums s = model.evaluate(batch_.view());
    loss += s.loss;
    nll += s.nll;
    r.tokens += s.tokens;
  }
  if (r.tokens > 0) {
    r.loss = loss / static_cast<double>(r.tokens);
    r.cross_entropy = nll / static_cast<double>(r.tokens);
    r.perplexity = std::exp(r.cross_entropy);
  }
  if (!sources_.empty()) {
    BatchTranslatorOptions t;
    t.search.beam_size = 1;
    BatchTranslator translator(model, vocabulary_, t);
    std::vector<std::string> hyps;
    for (auto& tr : translator.translate(sources_)) hyps.push_back(std::move(tr.text));
    const eval::ReferenceSets refs{references_};
    r.bleu = eval::corpus_bleu(hyps, refs).score;
    r.chrf = eval::corpus_chrf(hyps, refs).score;
    r.translated = static_cast<int>(hyps.size());
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace attn
