#include "inspect/alignment_baseline.h"

#include <utility>

#include "core/error.h"
#include "core/text_file.h"
#include "inspect/alignment_gold.h"
#include "inspect/ibm_model1.h"
#include "inspect/word_alignment.h"

namespace attn::inspect {

Words read_words(const std::string& path) {
  Words sentences;
  for (const std::string& line : read_text_lines(path)) sentences.push_back(split_words(line));
  return sentences;
}

std::vector<Alignment> diagonal_alignments(const Words& source, const Words& target) {
  std::vector<Alignment> alignments;
  for (std::size_t k = 0; k < source.size(); ++k) {
    alignments.push_back(diagonal_alignment(static_cast<int>(source[k].size()), static_cast<int>(target[k].size())));
  }
  return alignments;
}

std::vector<Alignment> ibm1_alignments(const Words& source, const Words& target, Words train_source, Words train_target,
                                       int iterations) {
  train_source.insert(train_source.end(), source.begin(), source.end());
  train_target.insert(train_target.end(), target.begin(), target.end());
  IbmModel1Options options;
  options.iterations = iterations;
  const IbmModel1 model = IbmModel1::train(train_source, train_target, options);
  std::vector<Alignment> alignments;
  for (std::size_t k = 0; k < source.size(); ++k) alignments.push_back(model.viterbi(source[k], target[k]));
  return alignments;
}

std::vector<Alignment> baseline_alignments(const AlignmentRequest& r) {
  if (r.source.empty() || r.target.empty()) throw Error("--baseline needs --source and --target");
  const Words source = read_words(r.source), target = read_words(r.target);
  check_same_lines(r.source, source.size(), r.target, target.size());
  if (r.baseline == "diagonal") return diagonal_alignments(source, target);
  if (r.baseline != "ibm1") throw Error("--baseline: unknown baseline '" + r.baseline + "' (known: diagonal, ibm1)");
  if (r.train_source.empty() != r.train_target.empty()) {
    throw Error("--train-source and --train-target go together");
  }
  Words train_source = r.train_source.empty() ? Words{} : read_words(r.train_source);
  Words train_target = r.train_target.empty() ? Words{} : read_words(r.train_target);
  check_same_lines(r.train_source, train_source.size(), r.train_target, train_target.size());
  return ibm1_alignments(source, target, std::move(train_source), std::move(train_target), r.iterations);
}

}  // namespace attn::inspect
