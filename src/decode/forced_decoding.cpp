#include "decode/forced_decoding.h"

#include <algorithm>
#include <memory>

#include "core/error.h"
#include "core/token_batch.h"

namespace attn {

std::vector<ForcedDecoding> force_decode(Transformer& model, const std::vector<std::vector<std::int32_t>>& src,
                                         const std::vector<std::vector<std::int32_t>>& tgt, int batch_sentences,
                                         const AttentionSelection* attention, bool scores) {
  ATTN_CHECK(src.size() == tgt.size(), "force_decode: as many targets as sources");
  ATTN_CHECK(batch_sentences > 0, "force_decode: batch_sentences > 0");
  std::unique_ptr<AttentionRecorder> recorder;
  if (attention) {
    AttentionSelection selection = *attention;
    selection.check(model.config());
    recorder = std::make_unique<AttentionRecorder>(model.backend(), selection, model.config().heads);
  }
  std::vector<ForcedDecoding> out(src.size());
  const std::size_t step = static_cast<std::size_t>(batch_sentences);
  for (std::size_t start = 0; start < src.size(); start += step) {
    const std::size_t end = std::min(src.size(), start + step);
    const int B = static_cast<int>(end - start);
    const PaddedBatch padded =
        pad_batch(std::span(src).subspan(start, end - start), std::span(tgt).subspan(start, end - start));
    if (recorder) recorder->clear();
    std::vector<double> log_probs(static_cast<std::size_t>(B), 0.0);
    if (scores)
      log_probs = model.sentence_log_probs(padded.view(), recorder.get());
    else
      model.attend(padded.view(), recorder.get());
    for (int b = 0; b < B; ++b) {
      ForcedDecoding& r = out[start + b];
      r.log_prob = log_probs[static_cast<std::size_t>(b)];
      r.target_tokens = padded.tgt_lengths[static_cast<std::size_t>(b)];
      if (recorder) r.attention = recorder->forced(b, padded.src_lengths[static_cast<std::size_t>(b)], r.target_tokens);
    }
  }
  return out;
}

}  // namespace attn
