#pragma once
// The baselines `attn align --baseline` compares attention with: the diagonal, and IBM Model 1
// trained on the sentences to align (plus any more parallel text).
#include <string>
#include <vector>

#include "inspect/alignment_request.h"
#include "inspect/pharaoh.h"

namespace attn::inspect {

using Words = std::vector<std::vector<std::string>>;  // sentences split into words

// The words of every line of a text file, split at spaces and tabs.
Words read_words(const std::string& path);

// diagonal_alignment of each pair (source and target have one sentence each a line).
std::vector<Alignment> diagonal_alignments(const Words& source, const Words& target);

// IBM Model 1 trained on train_source + source against train_target + target (no labels are used,
// so learning from the sentences to align is the usual practice of unsupervised aligners such as
// GIZA++ and fast_align), then the Viterbi alignment of each pair to align.
std::vector<Alignment> ibm1_alignments(const Words& source, const Words& target, Words train_source, Words train_target,
                                       int iterations);

// The request's baseline over its --source/--target files (and --train-source/--train-target for
// ibm1). Throws Error if a file is missing from the request, the line counts differ or the baseline
// is neither "diagonal" nor "ibm1".
std::vector<Alignment> baseline_alignments(const AlignmentRequest& request);

}  // namespace attn::inspect
