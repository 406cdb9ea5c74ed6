#pragma once
// Readings of a training run's log that compare runs fairly when they differ in speed: where a run's
// dev loss stood at a given update, the update it had reached at a given training time, and how much
// its dev perplexity still moved over its last quarter (has it learnt what it will learn?).
#include <cstdint>
#include <optional>
#include <vector>

namespace attn::study {

// (update, value) from train.jsonl: elapsed training seconds of a train record, or the dev cross-entropy
// (nats per target subword) of a validation record. Points in increasing update order.
struct CurvePoint {
  std::int64_t step = 0;
  double value = 0;
};

// The update reached `seconds` into training: linear between the records either side, from (0, 0s)
// before the first. nullopt when the log ends before `seconds` (the run trained for less time).
std::optional<double> update_at_time(const std::vector<CurvePoint>& elapsed, double seconds);

// The value at `update`, linear between the points either side (cross-entropy: the perplexity
// log-linear); exact at a point. nullopt before the first point or after the last.
std::optional<double> value_at_update(const std::vector<CurvePoint>& curve, double update);

// How much the dev perplexity still changed over the last quarter of `updates`: |ppl(U) - ppl(0.75 U)|
// / ppl(0.75 U), both read from the dev cross-entropy curve. nullopt when the curve does not reach
// back to 0.75 U or forward to U.
std::optional<double> last_quarter_change(const std::vector<CurvePoint>& dev_cross_entropy, std::int64_t updates);

}  // namespace attn::study
