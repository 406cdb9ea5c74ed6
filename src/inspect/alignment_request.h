#pragma once
// What `attn align` is asked to do (docs/alignment.md): which alignments to make or score, and the
// checks that the choices go together. The option names in its errors are the command's.
#include <string>
#include <vector>

namespace attn::inspect {

struct AlignmentRequest {
  // The input: exactly one of these.
  std::string model;                    // a model folder whose forced decoding gives the records
  std::string attention;                // attention records (attn translate/score --attention)
  std::string baseline;                 // "diagonal" or "ibm1"
  std::vector<std::string> alignments;  // Pharaoh files to score against the gold
  // The sentence pairs of --model and the baselines, and more training text for ibm1.
  std::string source, target, train_source, train_target;
  int iterations = 5;  // ibm1: EM iterations
  // Which attention makes the links (--model and --attention).
  int layer = -1;             // -1: the last
  std::string head = "mean";  // a head number or "mean"
  double threshold = 0;       // 0: argmax links; > 0: every source word with at least this weight
  // With a gold standard the output is scores instead of links.
  std::string gold, gold_tagged;
  bool sweep = false;  // scores of every layer and head
  bool json = false;   // scores as JSON
};

// Throws Error saying which options do not go together (exactly one input; --sweep needs records
// and --gold; --json needs --gold; ...). It reads no file.
void check_alignment_request(const AlignmentRequest& request);

// "mean" is kMeanOfHeads, a number of up to nine digits is that head; anything else throws Error.
int parse_alignment_head(const std::string& head);

}  // namespace attn::inspect
