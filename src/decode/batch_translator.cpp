#include "decode/batch_translator.h"

#include <algorithm>
#include <chrono>
#include <numeric>

#include "core/error.h"

namespace attn {

BatchTranslator::BatchTranslator(const Transformer& model, const data::Vocabulary& vocabulary,
                                 BatchTranslatorOptions options)
    : model_(model), vocabulary_(vocabulary), options_(options), decoder_(model) {
  if (options_.max_input_tokens <= 0) options_.max_input_tokens = model.config().max_positions - 1;
  options_.max_input_tokens = std::min(options_.max_input_tokens, model.config().max_positions - 1);
  if (options_.shortlist && options_.shortlist->vocabulary_size() != model.config().vocab_size)
    throw Error("the shortlist has " + std::to_string(options_.shortlist->vocabulary_size()) +
                " pieces, the model's vocabulary " + std::to_string(model.config().vocab_size));
  if (options_.export_attention) {
    options_.attention.check(model.config());
    recorder_ = std::make_unique<AttentionRecorder>(model.backend(), options_.attention, model.config().heads);
    decoder_.set_attention_tap(recorder_.get());
  }
}

std::vector<std::vector<Hypothesis>> BatchTranslator::translate_ids(
    const std::vector<std::vector<std::int32_t>>& sources,
    std::vector<std::vector<inspect::AttentionMatrix>>* attention) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t n = sources.size();
  std::vector<std::vector<Hypothesis>> out(n);
  if (attention) attention->assign(n, {});
  // Longest first: similar lengths share a batch, so little padding and few wasted steps.
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < n; ++i)
    if (!sources[i].empty()) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return sources[a].size() > sources[b].size(); });
  stats_ = {};
  std::vector<std::vector<std::int32_t>> batch;
  std::vector<std::size_t> members;
  auto flush = [&] {
    if (batch.empty()) return;
    if (options_.shortlist)
      decoder_.set_output_ids(options_.shortlist->select(batch, options_.shortlist_k, kShortlistWidthMultiple));
    ++stats_.batches;
    stats_.output_rows += decoder_.output_width();
    auto results = beam_search(decoder_, batch, options_.search);
    for (std::size_t j = 0; j < members.size(); ++j) {
      if (recorder_ && attention && !results[j].empty())
        (*attention)[members[j]] =
            recorder_->hypothesis(static_cast<int>(j), static_cast<int>(batch[j].size()) + 1, results[j][0].step_rows);
      stats_.target_tokens += results[j].empty() ? 0 : static_cast<std::int64_t>(results[j][0].tokens.size()) + 1;
      out[members[j]] = std::move(results[j]);
    }
    batch.clear();
    members.clear();
  };
  for (std::size_t i : order) {
    const std::size_t longest = (batch.empty() ? sources[i].size() : batch.front().size()) + 1;
    if (!batch.empty() && (static_cast<int>(batch.size()) >= options_.max_batch_sentences ||
                           (batch.size() + 1) * longest > static_cast<std::size_t>(options_.batch_tokens)))
      flush();
    batch.push_back(sources[i]);
    members.push_back(i);
    ++stats_.sentences;
    stats_.source_tokens += static_cast<std::int64_t>(sources[i].size()) + 1;
  }
  flush();
  stats_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

std::vector<BatchTranslation> BatchTranslator::translate(const std::vector<std::string>& lines) {
  auto ids = vocabulary_.encode_lines(lines);
  std::vector<BatchTranslation> out(lines.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    out[i].source_tokens = static_cast<int>(ids[i].size());
    if (static_cast<int>(ids[i].size()) > options_.max_input_tokens) {
      ids[i].resize(static_cast<std::size_t>(options_.max_input_tokens));
      out[i].cropped = true;
    }
  }
  std::vector<std::vector<inspect::AttentionMatrix>> attention;
  const auto hyps = translate_ids(ids, recorder_ ? &attention : nullptr);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    out[i].source_ids = ids[i];
    if (recorder_) out[i].attention = std::move(attention[i]);
    out[i].n_best = hyps[i];
    for (const auto& h : hyps[i]) out[i].n_best_text.push_back(vocabulary_.decode_line(h.tokens));
    if (!out[i].n_best_text.empty()) out[i].text = out[i].n_best_text.front();
  }
  return out;
}

}  // namespace attn
