#pragma once
// Training time, and the faults a test can ask of a training run (ATTN_TEST_FAULTS,
// core/test_faults.h): read once where the run is set up, then applied at named points of the
// update, so that neither the clock nor the step asks the environment. Not a public header.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>

namespace attn {

class Transformer;

// The training time that the time budget, snapshots and the linear decay's end estimate go by.
class TrainingClock {
 public:
  virtual ~TrainingClock() = default;
  // Training time in all after `step` updates: earlier runs' (from the checkpoint) and this one's.
  virtual double elapsed(std::int64_t step) const = 0;
};

// The steady clock from the end of the run's setup.
class SteadyTrainingClock final : public TrainingClock {
 public:
  explicit SteadyTrainingClock(double before) : before_(before) {}
  double elapsed(std::int64_t) const override {
    return before_ + std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  }

 private:
  double before_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

// No clock but the updates: `warmup_seconds` each of the warmup, `later_seconds` each after it, so
// that a test knows to the update where a time budget, a snapshot's minute or the decay's
// estimated end falls, however loaded the machine that runs it.
class UpdateCountingClock final : public TrainingClock {
 public:
  UpdateCountingClock(double before, std::int64_t first_step, int warmup_steps, double warmup_seconds,
                      double later_seconds)
      : before_(before),
        first_step_(first_step),
        warmup_steps_(warmup_steps),
        warmup_seconds_(warmup_seconds),
        later_seconds_(later_seconds) {}
  double elapsed(std::int64_t step) const override { return before_ + seconds(step) - seconds(first_step_); }

 private:
  double seconds(std::int64_t step) const {
    const std::int64_t warm = std::min<std::int64_t>(step, warmup_steps_);
    return warmup_seconds_ * static_cast<double>(warm) + later_seconds_ * static_cast<double>(step - warm);
  }
  double before_;
  std::int64_t first_step_;
  int warmup_steps_;
  double warmup_seconds_, later_seconds_;
};

// The faults ATTN_TEST_FAULTS asks for, each reaching a path a correct run never takes (or takes
// only after minutes). All off outside tests.
struct TrainingFaults {
  bool busy_after_warmup = false;  // training time counted in updates: 1/8 s each of the warmup, 1 s each after
  bool idle_after_warmup = false;  // training time counted in updates: 30 s each of the warmup, 1 s each after
  bool weights_drift = false;      // this process's first weight moves by one ulp after each Adam step
  bool slow_final_model = false;   // the final model written 5 s late (rank 0 alone, the other ranks done)
  bool slow_compute = false;       // each update's compute 100 ms longer on this rank, before its gradient sum

  static TrainingFaults from_environment();  // the one place a training run reads ATTN_TEST_FAULTS

  // The run's clock, started now: `before` seconds of training in earlier runs, up to update first_step.
  std::unique_ptr<TrainingClock> clock(double before, std::int64_t first_step, int warmup_steps) const;
  // After Adam's step: the test of the ranks' agreement on the weights (weights_drift).
  void after_adam(Transformer& model) const;
  // Before the final model is written, after the ranks' last collective: the test of a rank that
  // works on alone after the others have ended (slow_final_model).
  void before_final_model() const;
  // Where a rank's compute of an update ends and its blocking gradient sum begins: the test of the
  // step's split into compute, waiting for the slowest rank and communication (slow_compute).
  void before_sum() const;
};

}  // namespace attn
