#pragma once
// Readings of a training run's log that compare runs fairly when they differ in speed: its pace
// (seconds per update, so the update it reaches at a given training time), where its dev loss stood
// at a given update, and how much its dev perplexity still moved over its last quarter (has it
// learnt what it will learn?).
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

// The run's pace on a quiet machine, in training seconds per update: the 20th percentile over the
// log's intervals (consecutive records), the first (from the start, with its start-up) left out when
// there are others. A run slowed for a while by other work on the machine keeps its own pace, so
// runs compare at equal time even when they did not have the machine to themselves. 0 for an empty log.
double steady_seconds_per_update(const std::vector<CurvePoint>& elapsed);

// The value at `update`, linear between the points either side (cross-entropy: the perplexity
// log-linear); exact at a point. nullopt before the first point or after the last.
std::optional<double> value_at_update(const std::vector<CurvePoint>& curve, double update);

// How much the dev perplexity still changed over the last quarter of `updates`: |ppl(U) - ppl(0.75 U)|
// / ppl(0.75 U), both read from the dev cross-entropy curve. nullopt when the curve does not reach
// back to 0.75 U or forward to U.
std::optional<double> last_quarter_change(const std::vector<CurvePoint>& dev_cross_entropy, std::int64_t updates);

}  // namespace attn::study
