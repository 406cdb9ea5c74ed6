// Beam search (incremental decoding, cached keys and values, sentences batched with padding)
// against an independent reference beam search that recomputes the whole model for every
// hypothesis' prefix at every step, one unpadded sentence at a time, and applies the rules of
// decode/beam_search.h and decode/search_options.h from their statement, not through attn's code.
// Both run on a tiny model trained here on a task whose translations are genuinely ambiguous, so
// that the beams hold real alternatives of different lengths and the length penalty matters.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "common/full_recomputation.h"
#include "common/tiny_task.h"
#include "core/random.h"
#include "decode/beam_search.h"

namespace attn {
namespace {

using namespace testing::tiny_task;

// Cached and uncached decoding sum the same float32 products in different orders (one position
// at a time against whole prefixes, padded batches against single sentences), so their
// log-probabilities differ in the last bits: a log-softmax of logits of magnitude ~10 carries an
// error of a few 1e-6 per step, and a hypothesis sums at most max_length of them. 1e-4 bounds that
// for the lengths here (at most 8 + 50 steps, most under 20). The same bound separates decisions:
// where the reference's ranking rests on a margin below it, float32 cannot say which is right and
// the comparison would be meaningless; the test then fails as a broken fixture, saying so.
constexpr double kTolerance = 1e-4;

// The GNMT length penalty, written out here rather than calling attn's length_penalty().
double gnmt_penalty(int length, double alpha) { return std::pow((5.0 + length) / 6.0, alpha); }

enum class End { NoLiveHypothesis, EarlyStop, MaxLength };

struct Reference {
  std::vector<Hypothesis> n_best;  // best first
  End end = End::NoLiveHypothesis;
  int steps = 0;                      // model evaluations per hypothesis: the longest length, EOS included
  double smallest_margin = INFINITY;  // of every decision the result rests on
  std::string where;                  // the decision with the smallest margin
};

// The rules of decode/beam_search.h and search_options.h, one sentence:
//  - the maximum output length (EOS included) is ⌊a·|source| + b⌋, at least 1 and at most the
//    model's max_positions; at that length every live hypothesis ends with EOS;
//  - each step extends every live hypothesis by every token but PAD and BOS (and EOS while the
//    output, EOS included, would be shorter than min_length), and keeps the `beam − finished`
//    most probable (hypothesis, token) pairs; a kept pair ending in EOS is finished, scored
//    log P / ((5 + |Y|) / 6)^α with |Y| counting the EOS;
//  - the sentence is done when no live hypothesis remains, at its maximum length, or (early
//    stop, once n_best are finished) when no live hypothesis can still beat the n-th best
//    finished score: a live hypothesis' log-probability only falls as it grows, so the best it can
//    still score is the largest of log P / lp(n) over the lengths n it may still end at;
//  - the n_best (clamped to [1, beam]) finished hypotheses of highest score are returned.
Reference reference_beam_search(Transformer& m, const std::vector<std::int32_t>& source, const SearchOptions& opt) {
  struct Live {
    std::vector<std::int32_t> tokens;
    double log_prob = 0;
  };
  struct Candidate {
    std::size_t parent;
    std::int32_t token;
    double log_prob;
  };
  const int beam = std::max(1, opt.beam_size);
  const int n_best = std::clamp(opt.n_best, 1, beam);
  const double alpha = opt.length_penalty;
  const int max_length =
      std::clamp(static_cast<int>(std::floor(static_cast<double>(opt.max_length_a) * source.size() + opt.max_length_b)),
                 1, m.config().max_positions);
  Reference ref;
  auto note_margin = [&](double margin, const std::string& what) {
    if (margin < ref.smallest_margin) ref.smallest_margin = margin, ref.where = what;
  };
  std::vector<Live> live{Live{}};
  std::vector<Hypothesis> finished;
  for (int length = 1;; ++length) {  // the length hypotheses reach at this step, EOS included
    ref.steps = length;
    std::vector<Candidate> candidates;
    for (std::size_t h = 0; h < live.size(); ++h) {
      const auto lp = testing::recomputed_log_probs(m, source, live[h].tokens);
      for (std::int32_t v = 0; v < static_cast<std::int32_t>(lp.size()); ++v) {
        if (v == kPadId || v == kBosId) continue;
        if (length == max_length ? v != kEosId : (v == kEosId && length < opt.min_length)) continue;
        candidates.push_back({h, v, live[h].log_prob + lp[v]});
      }
    }
    const std::size_t width = length == max_length ? candidates.size() : beam - finished.size();
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.log_prob > b.log_prob; });
    const std::size_t take = std::min(width, candidates.size());
    if (take < candidates.size())
      note_margin(candidates[take - 1].log_prob - candidates[take].log_prob,
                  "the choice of " + std::to_string(take) + " at length " + std::to_string(length));
    std::vector<Live> next;
    for (std::size_t j = 0; j < take; ++j) {
      const Candidate& c = candidates[j];
      if (c.token == kEosId) {
        Hypothesis f;
        f.tokens = live[c.parent].tokens;
        f.log_prob = c.log_prob;
        f.score = c.log_prob / gnmt_penalty(length, alpha);
        finished.push_back(std::move(f));
      } else {
        next.push_back({live[c.parent].tokens, c.log_prob});
        next.back().tokens.push_back(c.token);
      }
    }
    live = std::move(next);
    if (length == max_length) {
      ref.end = End::MaxLength;
      break;
    }
    if (live.empty()) {
      ref.end = End::NoLiveHypothesis;
      break;
    }
    if (opt.early_stop && static_cast<int>(finished.size()) >= n_best) {
      std::vector<double> scores;
      for (const auto& f : finished) scores.push_back(f.score);
      std::sort(scores.begin(), scores.end(), std::greater<>());
      const double nth = scores[n_best - 1];
      double best_reachable = -INFINITY;
      for (const auto& h : live)
        for (int n = length + 1; n <= max_length; ++n)
          best_reachable = std::max(best_reachable, h.log_prob / gnmt_penalty(n, alpha));
      note_margin(std::abs(nth - best_reachable), "early stop at length " + std::to_string(length));
      if (nth >= best_reachable) {
        ref.end = End::EarlyStop;
        break;
      }
    }
  }
  std::stable_sort(finished.begin(), finished.end(),
                   [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
  // The order of the returned hypotheses, and which make the cut, rest on their score gaps.
  for (std::size_t j = 1; j < finished.size() && j <= static_cast<std::size_t>(n_best); ++j)
    note_margin(finished[j - 1].score - finished[j].score, "the ranking of finished " + std::to_string(j));
  finished.resize(std::min<std::size_t>(finished.size(), n_best));
  ref.n_best = std::move(finished);
  return ref;
}

std::string describe(const SearchOptions& o) {
  std::ostringstream s;
  s << "beam " << o.beam_size << ", alpha " << o.length_penalty << ", n_best " << o.n_best << ", max length "
    << o.max_length_a << "|x|+" << o.max_length_b << ", min length " << o.min_length << ", early stop " << o.early_stop;
  return s.str();
}

std::string show(const std::vector<std::int32_t>& tokens) {
  std::string s = "[";
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (i) s += ' ';
    s += std::to_string(tokens[i]);
  }
  s += ']';
  return s;
}

// Sentences of 1-8 words, decoded together (so padded to the longest) by attn.
const std::vector<std::vector<std::int32_t>> kSources{{4},     {5, 6, 7},         {11, 10, 9, 8, 7, 6, 5, 4},
                                                      {9, 11}, {6, 4, 10, 8, 11}, {8, 8, 11, 7, 10, 4}};

// Runs attn's beam search on kSources as one batch and the reference on each sentence alone;
// expects the same hypotheses in the same order with the same log-probabilities and scores, and
// as many steps for each sentence searched alone.
std::vector<Reference> expect_same_as_reference(Transformer& m, const SearchOptions& opt) {
  IncrementalDecoder decoder(m);
  const auto got = beam_search(decoder, kSources, opt);
  std::vector<Reference> refs;
  double smallest_margin = INFINITY;
  for (std::size_t b = 0; b < kSources.size(); ++b) {
    const std::string where = describe(opt) + ", sentence " + std::to_string(b) + " " + show(kSources[b]);
    Reference ref = reference_beam_search(m, kSources[b], opt);
    smallest_margin = std::min(smallest_margin, ref.smallest_margin);
    // A broken fixture, not a broken search: see kTolerance.
    EXPECT_GT(ref.smallest_margin, kTolerance) << where << ": a near-tie at " << ref.where;
    EXPECT_EQ(static_cast<int>(ref.n_best.size()), std::min(opt.n_best, opt.beam_size)) << where;
    EXPECT_EQ(got[b].size(), ref.n_best.size()) << where;
    for (std::size_t h = 0; h < std::min(got[b].size(), ref.n_best.size()); ++h) {
      const Hypothesis& want = ref.n_best[h];
      EXPECT_EQ(got[b][h].tokens, want.tokens)
          << where << ", hypothesis " << h << ": attn " << show(got[b][h].tokens) << " score " << got[b][h].score
          << ", reference " << show(want.tokens) << " score " << want.score;
      EXPECT_NEAR(got[b][h].log_prob, want.log_prob, kTolerance) << where << ", hypothesis " << h;
      EXPECT_NEAR(got[b][h].score, want.score, kTolerance) << where << ", hypothesis " << h;
    }
    // Alone, the sentence takes as many decoder steps as the reference's search: early stop
    // (or the maximum length) ends it neither sooner nor later, which its hypotheses alone may
    // not show.
    IncrementalDecoder alone(m);
    beam_search(alone, {kSources[b]}, opt);
    EXPECT_EQ(alone.position(), ref.steps) << where;
    refs.push_back(std::move(ref));
  }
  std::cout << describe(opt) << ": smallest decision margin " << smallest_margin << " (needed: above " << kTolerance
            << ")\n";
  return refs;
}

SearchOptions options(int beam, float alpha, int n_best) {
  SearchOptions o;
  o.beam_size = beam;
  o.length_penalty = alpha;
  o.n_best = n_best;
  return o;
}

class BeamReference : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { model_ = new Transformer(trained_model()); }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
  }
  static Transformer* model_;
};
Transformer* BeamReference::model_ = nullptr;

TEST_F(BeamReference, ReferenceSumsAreTheModelsSentenceLogProbabilities) {
  // The reference's own bookkeeping: the log-probability it accumulates for a hypothesis, EOS
  // included, is what forced decoding of the whole hypothesis gives.
  Transformer& m = *model_;
  for (const auto& source : kSources) {
    const Reference ref = reference_beam_search(m, source, options(3, 0.6f, 3));
    for (const auto& h : ref.n_best) {
      const testing::ToyBatch batch({source}, {h.tokens});
      EXPECT_NEAR(m.sentence_log_probs(batch.view())[0], h.log_prob, kTolerance)
          << show(source) << " -> " << show(h.tokens);
    }
  }
}

TEST_F(BeamReference, ModelLearnedTheTasksMostProbableTranslation) {
  // Without a length penalty the best translation is the task's mode, every word's single
  // rendering: the model has learned the task, so the beams below are not arbitrary.
  for (int beam : {2, 4}) {
    const auto refs = expect_same_as_reference(*model_, options(beam, 0.0f, 1));
    for (std::size_t b = 0; b < kSources.size(); ++b)
      EXPECT_EQ(refs[b].n_best[0].tokens, single_rendering(kSources[b])) << "beam " << beam << ", sentence " << b;
  }
}

TEST_F(BeamReference, BeamsTwoToFourWithAndWithoutLengthPenalty) {
  // Paper defaults (maximum length |x| + 50, early stop) with beams 2-4, α 0, 0.6 and 1, n-best
  // from 1 to the whole beam.
  for (int beam : {2, 3, 4})
    for (float alpha : {0.0f, 0.6f, 1.0f})
      for (int n_best : {1, beam}) expect_same_as_reference(*model_, options(beam, alpha, n_best));
}

TEST_F(BeamReference, EarlyStopEndsSearchesSoonerWithTheSameResults) {
  // With early stop, some sentences end while live hypotheses remain; without it, every sentence
  // runs until its beam is full of finished hypotheses. Every hypothesis finished later descends
  // from a live one that could not beat the n-th best, so both return the same n-best.
  int early = 0;
  for (int beam : {2, 3, 4})
    for (float alpha : {0.0f, 0.6f})
      for (int n_best : {1, 2}) {
        SearchOptions o = options(beam, alpha, n_best);
        const auto stopped = expect_same_as_reference(*model_, o);
        o.early_stop = false;
        const auto full = expect_same_as_reference(*model_, o);
        for (std::size_t b = 0; b < kSources.size(); ++b) {
          EXPECT_EQ(full[b].end, End::NoLiveHypothesis) << describe(o) << ", sentence " << b;
          if (stopped[b].end == End::EarlyStop) {
            ++early;
            EXPECT_LT(stopped[b].steps, full[b].steps) << describe(o) << ", sentence " << b;
          }
          ASSERT_EQ(stopped[b].n_best.size(), full[b].n_best.size());
          for (std::size_t h = 0; h < full[b].n_best.size(); ++h)
            EXPECT_EQ(stopped[b].n_best[h].tokens, full[b].n_best[h].tokens) << describe(o) << ", sentence " << b;
        }
      }
  std::cout << early << " of 72 searches stopped early\n";
  EXPECT_GT(early, 0);
}

TEST_F(BeamReference, MaximumAndMinimumLengths) {
  // A maximum length of |x| + 1 tokens, EOS included, cuts every two-token rendering's
  // hypothesis short, where EOS is forced; a minimum length above the mode's forbids EOS early.
  int forced = 0;
  for (int beam : {2, 3, 4})
    for (float alpha : {0.0f, 0.6f}) {
      SearchOptions o = options(beam, alpha, beam);
      o.max_length_a = 1;
      o.max_length_b = 1;
      for (const auto& r : expect_same_as_reference(*model_, o)) forced += r.end == End::MaxLength;
      o = options(beam, alpha, 2);
      o.min_length = 6;
      expect_same_as_reference(*model_, o);
    }
  EXPECT_GT(forced, 0);
}

}  // namespace
}  // namespace attn
