#pragma once
// What `attn vocab train` prints when it is done: the vocabulary's size and special ids, the
// files written, how the vocabulary cuts each input, and how long training and measuring took.
#include <string>

#include "data/vocabulary_training.h"

namespace attn::data {

// Several lines, each ending in '\n'; figures to two decimals, the byte-fallback share (a
// percentage) to four.
std::string describe_vocabulary_training(const VocabularyTrainingReport& report);

}  // namespace attn::data
