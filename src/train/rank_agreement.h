#pragma once
// What the ranks of a distributed run must agree on before they train, and how many threads each
// takes. Collectives are marked: every rank calls them.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "train/dist/communicator.h"
#include "train/train_options.h"

namespace attn {

// What must be the same on every rank: the options (but not where each rank finds its files, nor
// its thread count) and the contents of the data files (by SHA-256; throws Error naming a file
// that cannot be read).
nlohmann::json job_fingerprint(const TrainOptions& o);

// Every rank's fingerprint (gathered, rank 0's first) compared with rank 0's: "rank 1 differs from
// rank 0: batch_tokens is 512 on rank 1, 1024 on rank 0; ..." or "" when all agree.
std::string fingerprint_differences(const std::vector<std::string>& all);

// Threads per rank when the options leave it open: the cores this process may use (mpirun binds
// ranks to cores or sockets, or not at all), divided among the ranks of this node that may use
// the same cores. A collective.
int default_threads(dist::Communicator& ranks);

}  // namespace attn
