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

// Every rank's fingerprint (gathered, rank 0's first) compared with rank 0's, each rank named with
// its host (dist::host_description, gathered the same way; none where `hosts` is empty): "rank 1
// (node1: 10.0.0.2) differs from rank 0 (node0: 10.0.0.1): batch_tokens is 512 on rank 1, 1024 on
// rank 0; ..." or "" when all agree. The fingerprint holds the options (paths, run_dir and threads
// aside), the SHA-256 of the data files and of the program itself.
std::string fingerprint_differences(const std::vector<std::string>& all, const std::vector<std::string>& hosts = {});

// Threads per rank when the options leave it open: the cores this process may use (mpirun binds
// ranks to cores or sockets, or not at all), divided among the ranks of this node that may use
// the same cores. A collective.
int default_threads(dist::Communicator& ranks);

}  // namespace attn
