#pragma once
// What `attn align` writes for each kind of input (docs/alignment.md): Pharaoh "i-j" lines, or
// with a gold standard a score table, or with --sweep the table of every layer and head. The
// request is assumed checked (check_alignment_request); the caller prints the text.
#include <string>
#include <vector>

#include "inspect/alignment_request.h"
#include "inspect/attention_record.h"

namespace attn::inspect {

// Records of attention (read from request.attention, or made by forced decoding of request.model's
// pairs). `origin` names them: in errors (record i is "origin:i+1") and as the score table's row.
std::string align_attention_records(const AlignmentRequest& request, const std::vector<AttentionRecord>& records,
                                    const std::string& origin);

// request.baseline over request.source/target; its score row is named "<baseline> baseline".
std::string align_by_baseline(const AlignmentRequest& request);

// request.alignments scored against request.gold, a row each, named by their paths.
std::string score_alignment_files(const AlignmentRequest& request);

}  // namespace attn::inspect
