#include "inspect/alignment_request.h"

#include "core/error.h"
#include "inspect/attention_record.h"

namespace attn::inspect {

void check_alignment_request(const AlignmentRequest& r) {
  const int inputs = !r.model.empty() + !r.attention.empty() + !r.baseline.empty() + !r.alignments.empty();
  if (inputs != 1) {
    throw Error(
        "give exactly one of --model DIR, --attention FILE, --baseline diagonal|ibm1, or --gold GOLD "
        "--alignment FILE...");
  }
  if (!r.model.empty() && (r.source.empty() || r.target.empty()))
    throw Error("--model needs --source and --target (the sentence pairs to align)");
  if (!r.alignments.empty() && r.gold.empty()) throw Error("--alignment needs --gold");
  if (r.sweep && ((r.attention.empty() && r.model.empty()) || r.gold.empty()))
    throw Error("--sweep needs --attention or --model, and --gold");
  if (!r.gold_tagged.empty() && r.gold.empty()) throw Error("--gold-tagged needs --gold");
  if (r.json && r.gold.empty()) throw Error("--json applies to scores: give --gold");
  if (r.attention.empty() && r.model.empty() && (r.layer >= 0 || r.head != "mean" || r.threshold != 0)) {
    throw Error("--layer, --head and --threshold apply to --attention and --model");
  }
  if (r.baseline.empty() && r.model.empty() && !(r.source + r.target).empty()) {
    throw Error("--source and --target apply to --model and --baseline");
  }
  if (r.baseline.empty() && !(r.train_source + r.train_target).empty()) {
    throw Error("--train-source and --train-target apply to --baseline ibm1");
  }
  if (r.baseline == "diagonal" && !(r.train_source + r.train_target).empty()) {
    throw Error("the diagonal baseline learns nothing: --train-source and --train-target apply to --baseline ibm1");
  }
}

int parse_alignment_head(const std::string& head) {
  if (head == "mean") return kMeanOfHeads;
  if (!head.empty() && head.size() < 10 && head.find_first_not_of("0123456789") == std::string::npos) {
    return std::stoi(head);
  }
  throw Error("--head: expected a head number (0, 1, ...) or 'mean', not '" + head + "'");
}

}  // namespace attn::inspect
