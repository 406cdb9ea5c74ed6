#include "train/training_faults.h"

#include <cmath>
#include <limits>
#include <thread>

#include "core/test_faults.h"
#include "model/transformer.h"

namespace attn {

TrainingFaults TrainingFaults::from_environment() {
  TrainingFaults f;
  f.busy_after_warmup = test_fault("busy-after-warmup");
  f.idle_after_warmup = test_fault("idle-after-warmup");
  f.weights_drift = test_fault("weights-drift");
  f.slow_final_model = test_fault("slow-final-model");
  f.slow_compute = test_fault("slow-compute");
  return f;
}

std::unique_ptr<TrainingClock> TrainingFaults::clock(double before, std::int64_t first_step, int warmup_steps) const {
  if (busy_after_warmup) return std::make_unique<UpdateCountingClock>(before, first_step, warmup_steps, 0.125, 1.0);
  if (idle_after_warmup) return std::make_unique<UpdateCountingClock>(before, first_step, warmup_steps, 30.0, 1.0);
  return std::make_unique<SteadyTrainingClock>(before);
}

void TrainingFaults::after_adam(Transformer& model) const {
  if (!weights_drift) return;
  Backend& be = model.backend();
  float first = 0;
  be.copy_to_host(&first, model.parameters(), sizeof first);
  first = std::nextafter(first, std::numeric_limits<float>::infinity());
  be.copy_to_device(model.parameters(), &first, sizeof first);
}

void TrainingFaults::before_sum() const {
  if (slow_compute) std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

void TrainingFaults::before_final_model() const {
  if (slow_final_model) std::this_thread::sleep_for(std::chrono::seconds(5));
}

}  // namespace attn
