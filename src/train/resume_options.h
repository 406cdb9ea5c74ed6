#pragma once
// Which options a resumed run may change: where and how often things are written, when to stop,
// how many threads. Every other option shapes the run (data, batches, order, schedule, model).
#include <nlohmann/json.hpp>
#include <string>

namespace attn {

// "batch_tokens is 1024 now, 512 in the checkpoint; seed ..." for the options that shape the run
// and differ ("" when none does). Keys the checkpoint does not record (older versions) are skipped.
// accumulate may change with the number of ranks: what shapes the run is the batches per update,
// ranks x accumulate, and a new number of ranks is allowed (and told). Under lr_decay "linear",
// max_steps is where the learning rate reaches 0: it shapes the run too.
std::string changed_options(const nlohmann::json& saved, int saved_ranks, const nlohmann::json& now, int ranks);

}  // namespace attn
