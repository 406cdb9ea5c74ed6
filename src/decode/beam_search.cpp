#include "decode/beam_search.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/special_tokens.h"
#include "core/token_batch.h"
#include "kernels/device_buffer.h"

namespace attn {

double length_penalty(int length, double alpha) { return std::pow((5.0 + length) / 6.0, alpha); }

namespace {

struct Live {
  std::vector<std::int32_t> tokens;
  double log_prob = 0;
  int row = 0;                          // its row within the sentence at the step about to run
  std::vector<std::int32_t> step_rows;  // as Hypothesis::step_rows, when attention is recorded
};

struct Candidate {
  int row;  // parent's row within the sentence
  std::int32_t token;
  double log_prob;
  int rank;  // order of discovery, to break ties deterministically
};

struct Sentence {
  int index = 0;  // in the caller's batch
  std::vector<Live> live;
  std::vector<Hypothesis> finished;
  int max_length = 0;  // output tokens, EOS included
};

}  // namespace

std::vector<std::vector<Hypothesis>> beam_search(IncrementalDecoder& decoder,
                                                 const std::vector<std::vector<std::int32_t>>& sources,
                                                 const SearchOptions& opt) {
  const int batch = static_cast<int>(sources.size());
  std::vector<std::vector<Hypothesis>> results(batch);
  if (batch == 0) return results;
  const ModelConfig& config = decoder.config();
  Backend& be = decoder.backend();
  const int beam = std::max(1, opt.beam_size);
  const int n_best = std::clamp(opt.n_best, 1, beam);
  // The columns of the decoder's rows: the vocabulary, or a shortlist of it (ids mapped back).
  const int vocab = decoder.output_width();
  const std::vector<std::int32_t>& output_ids = decoder.output_ids();
  const int eos_column = decoder.output_column(kEosId);
  if (eos_column < 0) throw Error("the output shortlist leaves out </s>: no hypothesis could end");
  const double alpha = opt.length_penalty;
  const bool track_rows = decoder.attention_tap() != nullptr;

  const PaddedBatch padded = pad_sources(sources);
  std::vector<Sentence> active(batch);
  int max_steps = 1;
  for (int b = 0; b < batch; ++b) {
    Sentence& s = active[b];
    s.index = b;
    s.live.push_back(Live{});
    const double limit = opt.max_length_a * static_cast<double>(sources[b].size()) + opt.max_length_b;
    s.max_length = std::clamp(static_cast<int>(limit), 1, config.max_positions);
    max_steps = std::max(max_steps, s.max_length);
  }
  decoder.start(padded.src.data(), padded.src_lengths.data(), batch, padded.src_len, beam, max_steps);

  // Per row: the k = beam + 3 best tokens (at most the vocabulary), so that at least beam remain after
  // skipping the three that may not come next (PAD and BOS, never generated, and EOS before
  // min_length); and EOS's log-probability, for the end forced at the maximum length.
  const int k = std::min(vocab, beam + 3);
  DeviceBuffer<float> top_values(be, static_cast<std::size_t>(batch) * beam * k),
      eos_values(be, static_cast<std::size_t>(batch) * beam);
  DeviceBuffer<std::int32_t> top_indices(be, static_cast<std::size_t>(batch) * beam * k);
  std::vector<float> values, eos;
  std::vector<std::int32_t> indices, tokens;
  std::vector<Candidate> candidates;

  for (int step = 0; !active.empty(); ++step) {
    const int rows_per_sentence = decoder.rows_per_sentence();
    const int rows = decoder.rows();
    tokens.assign(rows, kBosId);
    for (std::size_t i = 0; i < active.size(); ++i)
      for (int r = 0; r < rows_per_sentence; ++r) {
        // Rows beyond a sentence's live hypotheses repeat its first one; their results are unused.
        const Live& h = active[i].live[std::min<std::size_t>(r, active[i].live.size() - 1)];
        if (!h.tokens.empty()) tokens[i * rows_per_sentence + r] = h.tokens.back();
      }
    const float* log_probs = decoder.step(tokens.data());
    be.topk(log_probs, rows, vocab, k, top_values.data(), top_indices.data());
    be.gather_rows(log_probs + eos_column, vocab, nullptr, rows, 1, eos_values.data(), 1);
    values.resize(static_cast<std::size_t>(rows) * k);
    indices.resize(values.size());
    eos.resize(rows);
    be.copy_to_host(values.data(), top_values.data(), values.size() * sizeof(float));
    be.copy_to_host(indices.data(), top_indices.data(), indices.size() * sizeof(std::int32_t));
    be.copy_to_host(eos.data(), eos_values.data(), eos.size() * sizeof(float));

    std::vector<Sentence> next;
    std::vector<std::int32_t> kept, origin;
    int next_rows = 1;
    for (std::size_t i = 0; i < active.size(); ++i) {
      Sentence& s = active[i];
      const int width = beam - static_cast<int>(s.finished.size());
      const bool forced = step + 1 >= s.max_length;
      candidates.clear();
      for (std::size_t r = 0; r < s.live.size(); ++r) {
        const std::size_t row = i * rows_per_sentence + r;
        if (forced) {
          candidates.push_back({static_cast<int>(r), kEosId, s.live[r].log_prob + eos[row], static_cast<int>(r)});
          continue;
        }
        const bool eos_allowed = step + 1 >= opt.min_length;
        for (int j = 0; j < k; ++j) {
          const std::int32_t column = indices[row * k + j];
          const std::int32_t tok = output_ids.empty() ? column : output_ids[static_cast<std::size_t>(column)];
          if (tok == kPadId || tok == kBosId || (tok == kEosId && !eos_allowed)) continue;
          candidates.push_back({static_cast<int>(r), tok, s.live[r].log_prob + values[row * k + j],
                                static_cast<int>(candidates.size())});
        }
      }
      const auto better = [](const Candidate& a, const Candidate& b) {
        return a.log_prob != b.log_prob ? a.log_prob > b.log_prob : a.rank < b.rank;
      };
      const std::size_t take = std::min<std::size_t>(forced ? candidates.size() : width, candidates.size());
      std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(take), candidates.end(),
                        better);
      std::vector<Live> live;
      for (std::size_t j = 0; j < take; ++j) {
        const Candidate& cand = candidates[j];
        const Live& parent = s.live[cand.row];
        std::vector<std::int32_t> step_rows;
        if (track_rows) {
          step_rows = parent.step_rows;
          step_rows.push_back(static_cast<std::int32_t>(i) * rows_per_sentence + cand.row);
        }
        if (cand.token == kEosId) {
          const int length = static_cast<int>(parent.tokens.size()) + 1;
          s.finished.push_back(
              {parent.tokens, cand.log_prob, cand.log_prob / length_penalty(length, alpha), std::move(step_rows)});
        } else {
          Live h{parent.tokens, cand.log_prob, cand.row, std::move(step_rows)};
          h.tokens.push_back(cand.token);
          live.push_back(std::move(h));
        }
      }
      bool done = live.empty() || forced;
      if (!done && opt.early_stop && static_cast<int>(s.finished.size()) >= n_best) {
        // The best a live hypothesis can still reach: its log-probability only falls, and with
        // α > 0 the penalty divides it least at the longest length it may reach.
        std::vector<double> scores;
        for (const auto& f : s.finished) scores.push_back(f.score);
        std::nth_element(scores.begin(), scores.begin() + (n_best - 1), scores.end(), std::greater<>());
        const double nth = scores[n_best - 1];
        double bound = -INFINITY;
        for (const auto& h : live)
          bound = std::max(bound, alpha > 0 ? h.log_prob / length_penalty(s.max_length, alpha) : h.log_prob);
        done = nth >= bound;
      }
      if (done) {
        auto& out = results[s.index];
        out = std::move(s.finished);
        std::stable_sort(out.begin(), out.end(),
                         [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
        if (static_cast<int>(out.size()) > n_best) out.resize(n_best);
        continue;
      }
      kept.push_back(static_cast<std::int32_t>(i));
      next_rows = std::max<int>(next_rows, static_cast<int>(live.size()));
      s.live = std::move(live);
      next.push_back(std::move(s));
    }
    // Rows for the next step: each kept sentence's live hypotheses continue from their parents.
    for (std::size_t n = 0; n < next.size(); ++n) {
      const int base = kept[n] * rows_per_sentence;
      for (int r = 0; r < next_rows; ++r) {
        Live& h = next[n].live[std::min<std::size_t>(r, next[n].live.size() - 1)];
        origin.push_back(base + h.row);
      }
      for (std::size_t r = 0; r < next[n].live.size(); ++r) next[n].live[r].row = static_cast<int>(r);
    }
    active = std::move(next);
    if (!active.empty()) decoder.select(kept, origin, next_rows);
  }
  return results;
}

}  // namespace attn
