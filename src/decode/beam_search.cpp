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

// One search over a batch: run() repeats a step — feed each live hypothesis' last token, read the
// best tokens of each row, extend and finish hypotheses, drop the sentences that are done, and
// reorder the decoder's rows for those that go on — until no sentence is left.
class BeamSearch {
 public:
  BeamSearch(IncrementalDecoder& decoder, const SearchOptions& opt)
      : decoder_(decoder),
        be_(decoder.backend()),
        opt_(opt),
        beam_(std::max(1, opt.beam_size)),
        n_best_(std::clamp(opt.n_best, 1, beam_)),
        vocab_(decoder.output_width()),
        output_ids_(decoder.output_ids()),
        eos_column_(decoder.output_column(kEosId)),
        track_rows_(decoder.attention_tap() != nullptr),
        // Per row the k = beam + 3 best tokens (at most the vocabulary), so that at least beam remain
        // after skipping the three that may not come next (PAD and BOS, never generated, and EOS
        // before min_length).
        k_(std::min(vocab_, beam_ + 3)) {}

  std::vector<std::vector<Hypothesis>> run(const std::vector<std::vector<std::int32_t>>& sources) {
    results_.assign(sources.size(), {});
    if (sources.empty()) return std::move(results_);
    if (eos_column_ < 0) throw Error("the output shortlist leaves out </s>: no hypothesis could end");
    start(sources);
    for (int step = 0; !active_.empty(); ++step) {
      read_step_scores();
      std::vector<Sentence> next;
      std::vector<std::int32_t> kept;
      for (std::size_t i = 0; i < active_.size(); ++i) {
        Sentence& s = active_[i];
        const bool forced = step + 1 >= s.max_length;
        collect_candidates(s, i, step, forced);
        std::vector<Live> live = extend(s, i, forced);
        if (live.empty() || forced || cannot_improve(s, live)) {
          finish(s);
          continue;
        }
        kept.push_back(static_cast<std::int32_t>(i));
        s.live = std::move(live);
        next.push_back(std::move(s));
      }
      continue_with(std::move(next), kept);
    }
    return std::move(results_);
  }

 private:
  // Each sentence starts with one empty hypothesis; the decoder encodes the sources.
  void start(const std::vector<std::vector<std::int32_t>>& sources) {
    const int batch = static_cast<int>(sources.size());
    const PaddedBatch padded = pad_sources(sources);
    active_.assign(static_cast<std::size_t>(batch), Sentence{});
    int max_steps = 1;
    for (int b = 0; b < batch; ++b) {
      Sentence& s = active_[static_cast<std::size_t>(b)];
      s.index = b;
      s.live.push_back(Live{});
      const double limit = opt_.max_length_a * static_cast<double>(sources[b].size()) + opt_.max_length_b;
      s.max_length = std::clamp(static_cast<int>(limit), 1, decoder_.config().max_positions);
      max_steps = std::max(max_steps, s.max_length);
    }
    decoder_.start(padded.src.data(), padded.src_lengths.data(), batch, padded.src_len, beam_, max_steps);
    const std::size_t rows = static_cast<std::size_t>(batch) * beam_;
    top_values_.resize(be_, rows * k_);
    top_indices_.resize(be_, rows * k_);
    eos_values_.resize(be_, rows);
  }

  // One decoder step for every row; then on the host, per row, its k best columns with their
  // log-probabilities, and EOS's log-probability (for the end forced at the maximum length).
  void read_step_scores() {
    const int rows_per_sentence = decoder_.rows_per_sentence();
    const int rows = decoder_.rows();
    tokens_.assign(static_cast<std::size_t>(rows), kBosId);
    for (std::size_t i = 0; i < active_.size(); ++i)
      for (int r = 0; r < rows_per_sentence; ++r) {
        // Rows beyond a sentence's live hypotheses repeat its first one; their results are unused.
        const Live& h = active_[i].live[std::min<std::size_t>(r, active_[i].live.size() - 1)];
        if (!h.tokens.empty()) tokens_[i * rows_per_sentence + r] = h.tokens.back();
      }
    const float* log_probs = decoder_.step(tokens_.data());
    be_.topk(log_probs, rows, vocab_, k_, top_values_.data(), top_indices_.data());
    be_.gather_rows(log_probs + eos_column_, vocab_, nullptr, rows, 1, eos_values_.data(), 1);
    values_.resize(static_cast<std::size_t>(rows) * k_);
    indices_.resize(values_.size());
    eos_.resize(static_cast<std::size_t>(rows));
    be_.copy_to_host(values_.data(), top_values_.data(), values_.size() * sizeof(float));
    be_.copy_to_host(indices_.data(), top_indices_.data(), indices_.size() * sizeof(std::int32_t));
    be_.copy_to_host(eos_.data(), eos_values_.data(), eos_.size() * sizeof(float));
  }

  // Sentence i's candidates (into candidates_), in order of discovery: each live hypothesis with each of its row's
  // best tokens that may come next, or with EOS alone at the maximum length.
  void collect_candidates(const Sentence& s, std::size_t i, int step, bool forced) {
    std::vector<Candidate>& out = candidates_;  // reused: no allocation per sentence and step
    out.clear();
    const std::size_t rows_per_sentence = static_cast<std::size_t>(decoder_.rows_per_sentence());
    const bool eos_allowed = step + 1 >= opt_.min_length;
    for (std::size_t r = 0; r < s.live.size(); ++r) {
      const std::size_t row = i * rows_per_sentence + r;
      if (forced) {
        out.push_back({static_cast<int>(r), kEosId, s.live[r].log_prob + eos_[row], static_cast<int>(r)});
        continue;
      }
      for (int j = 0; j < k_; ++j) {
        const std::int32_t column = indices_[row * k_ + j];
        const std::int32_t tok = output_ids_.empty() ? column : output_ids_[static_cast<std::size_t>(column)];
        if (tok == kPadId || tok == kBosId || (tok == kEosId && !eos_allowed)) continue;
        out.push_back(
            {static_cast<int>(r), tok, s.live[r].log_prob + values_[row * k_ + j], static_cast<int>(out.size())});
      }
    }
  }

  // The best `width` of candidates_ (every one when forced), width being the beam less the hypotheses
  // already finished: those ending in EOS join s.finished, the others are the live hypotheses
  // returned.
  std::vector<Live> extend(Sentence& s, std::size_t i, bool forced) {
    std::vector<Candidate>& candidates = candidates_;
    const int width = beam_ - static_cast<int>(s.finished.size());
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
      if (track_rows_) {
        step_rows = parent.step_rows;
        step_rows.push_back(static_cast<std::int32_t>(i) * decoder_.rows_per_sentence() + cand.row);
      }
      if (cand.token == kEosId) {
        const int length = static_cast<int>(parent.tokens.size()) + 1;
        s.finished.push_back({parent.tokens, cand.log_prob, cand.log_prob / length_penalty(length, opt_.length_penalty),
                              std::move(step_rows)});
      } else {
        Live h{parent.tokens, cand.log_prob, cand.row, std::move(step_rows)};
        h.tokens.push_back(cand.token);
        live.push_back(std::move(h));
      }
    }
    return live;
  }

  // Early stop: n_best hypotheses have finished and none of `live` can still beat the n-th best.
  // A live hypothesis' log-probability only falls, and with α > 0 the penalty divides it least at
  // the longest length it may reach.
  bool cannot_improve(const Sentence& s, const std::vector<Live>& live) const {
    if (!opt_.early_stop || static_cast<int>(s.finished.size()) < n_best_) return false;
    const double alpha = opt_.length_penalty;
    std::vector<double> scores;
    for (const auto& f : s.finished) scores.push_back(f.score);
    std::nth_element(scores.begin(), scores.begin() + (n_best_ - 1), scores.end(), std::greater<>());
    const double nth = scores[static_cast<std::size_t>(n_best_ - 1)];
    double bound = -INFINITY;
    for (const auto& h : live)
      bound = std::max(bound, alpha > 0 ? h.log_prob / length_penalty(s.max_length, alpha) : h.log_prob);
    return nth >= bound;
  }

  // A done sentence's result: its n_best finished hypotheses, best score first.
  void finish(Sentence& s) {
    auto& out = results_[static_cast<std::size_t>(s.index)];
    out = std::move(s.finished);
    std::stable_sort(out.begin(), out.end(),
                     [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
    if (static_cast<int>(out.size()) > n_best_) out.resize(static_cast<std::size_t>(n_best_));
  }

  // The sentences that go on (`next`, at positions `kept` of the step that ran): each one's live
  // hypotheses continue from their parents' rows, renumbered from 0.
  void continue_with(std::vector<Sentence> next, const std::vector<std::int32_t>& kept) {
    const int rows_per_sentence = decoder_.rows_per_sentence();
    int next_rows = 1;
    for (const Sentence& s : next) next_rows = std::max<int>(next_rows, static_cast<int>(s.live.size()));
    std::vector<std::int32_t> origin;
    for (std::size_t n = 0; n < next.size(); ++n) {
      const int base = kept[n] * rows_per_sentence;
      for (int r = 0; r < next_rows; ++r) {
        Live& h = next[n].live[std::min<std::size_t>(r, next[n].live.size() - 1)];
        origin.push_back(base + h.row);
      }
      for (std::size_t r = 0; r < next[n].live.size(); ++r) next[n].live[r].row = static_cast<int>(r);
    }
    active_ = std::move(next);
    if (!active_.empty()) decoder_.select(kept, origin, next_rows);
  }

  IncrementalDecoder& decoder_;
  Backend& be_;
  const SearchOptions& opt_;
  const int beam_, n_best_;
  // The columns of the decoder's rows: the vocabulary, or a shortlist of it (ids mapped back).
  const int vocab_;
  const std::vector<std::int32_t>& output_ids_;
  const int eos_column_;
  const bool track_rows_;
  const int k_;
  std::vector<Sentence> active_;
  std::vector<std::vector<Hypothesis>> results_;
  DeviceBuffer<float> top_values_, eos_values_;
  DeviceBuffer<std::int32_t> top_indices_;
  std::vector<float> values_, eos_;
  std::vector<std::int32_t> indices_, tokens_;
  std::vector<Candidate> candidates_;  // the sentence at hand's, in order of discovery
};

}  // namespace

std::vector<std::vector<Hypothesis>> beam_search(IncrementalDecoder& decoder,
                                                 const std::vector<std::vector<std::int32_t>>& sources,
                                                 const SearchOptions& opt) {
  return BeamSearch(decoder, opt).run(sources);
}

}  // namespace attn
