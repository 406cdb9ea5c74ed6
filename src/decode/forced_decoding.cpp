#include "decode/forced_decoding.h"

#include <algorithm>
#include <memory>

#include "core/error.h"
#include "core/special_tokens.h"

namespace attn {

std::vector<ForcedDecoding> force_decode(Transformer& model, const std::vector<std::vector<std::int32_t>>& src,
                                         const std::vector<std::vector<std::int32_t>>& tgt, int batch_sentences,
                                         const AttentionSelection* attention) {
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
    int S = 1, T = 1;
    for (std::size_t i = start; i < end; ++i) {
      S = std::max(S, static_cast<int>(src[i].size()) + 1);
      T = std::max(T, static_cast<int>(tgt[i].size()) + 1);
    }
    // Sources end with EOS; the decoder reads BOS + target and predicts target + EOS.
    std::vector<std::int32_t> s(static_cast<std::size_t>(B) * S, kPadId), ti(static_cast<std::size_t>(B) * T, kPadId),
        to(ti.size(), kPadId), sl(B), tl(B);
    for (int b = 0; b < B; ++b) {
      const auto& x = src[start + b];
      const auto& y = tgt[start + b];
      std::copy(x.begin(), x.end(), s.begin() + static_cast<std::ptrdiff_t>(b) * S);
      s[static_cast<std::size_t>(b) * S + x.size()] = kEosId;
      ti[static_cast<std::size_t>(b) * T] = kBosId;
      std::copy(y.begin(), y.end(), ti.begin() + static_cast<std::ptrdiff_t>(b) * T + 1);
      std::copy(y.begin(), y.end(), to.begin() + static_cast<std::ptrdiff_t>(b) * T);
      to[static_cast<std::size_t>(b) * T + y.size()] = kEosId;
      sl[b] = static_cast<std::int32_t>(x.size()) + 1;
      tl[b] = static_cast<std::int32_t>(y.size()) + 1;
    }
    if (recorder) recorder->clear();
    const auto log_probs =
        model.sentence_log_probs({B, S, T, s.data(), sl.data(), ti.data(), to.data(), tl.data()}, recorder.get());
    for (int b = 0; b < B; ++b) {
      ForcedDecoding& r = out[start + b];
      r.log_prob = log_probs[b];
      r.target_tokens = tl[b];
      if (recorder) r.attention = recorder->forced(b, sl[b], tl[b]);
    }
  }
  return out;
}

}  // namespace attn
