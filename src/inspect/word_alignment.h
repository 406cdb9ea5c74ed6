#pragma once
// Word alignments from cross-attention: piece-level attention merged into word-level attention,
// hard links read off it, and a diagonal baseline.
#include <string>
#include <vector>

#include "inspect/attention_record.h"
#include "inspect/pharaoh.h"

namespace attn::inspect {

struct AlignmentOptions {
  // Layer of the cross-attention; -1 (the default) takes default_alignment_layer().
  int layer = -1;
  // One head, or kMeanOfHeads (the default): the mean of the layer's heads.
  int head = kMeanOfHeads;
  // 0 (the default): each target word links to its argmax source word. > 0: each target word
  // links to every source word whose word-level weight is >= threshold (maybe none).
  double threshold = 0;
};

// Word-level attention [target words × source words], row-major.
struct WordAttention {
  int rows = 0, cols = 0;
  std::vector<double> weights;
  double at(int r, int c) const { return weights[static_cast<std::size_t>(r) * cols + c]; }
};

// The number of cross-attention layers of a record (1 + the largest layer), and the heads of one
// layer (1 + the largest head); 0 if there are none.
int cross_layer_count(const AttentionRecord& record);
int cross_head_count(const AttentionRecord& record, int layer);

// The layer used when none is asked for: the last, as Marian's guided alignment and fairseq's
// alignment_layer default to. On the main job's 3-layer model it is also the best by AER, on the
// dev verses and on the test verses alike (docs/results.md, docs/alignment.md); `attn align --sweep` shows
// every layer and head of a model.
int default_alignment_layer(int layers);

// The piece-level cross-attention of one head, or the mean over the heads of `layer` (head =
// kMeanOfHeads). Throws Error if the record has no such layer or head.
AttentionMatrix cross_attention(const AttentionRecord& record, int layer, int head);

// Merges a [target pieces × source pieces] matrix into words (inspect/word_pieces.h): a target
// word's row is the mean of its pieces' rows, a source word's column the sum of its pieces'
// columns (the attention the word receives). "</s>" (and "<s>") rows and columns are dropped:
// end-of-sentence is not a word, so it cannot be linked, although heads often park attention there.
WordAttention word_attention(const AttentionMatrix& cross, const std::vector<std::string>& source_pieces,
                             const std::vector<std::string>& target_pieces);

// Hard links from word-level attention (see AlignmentOptions::threshold). Argmax ties go to the
// lowest source index. No source words (or no target words) give no links.
Alignment hard_links(const WordAttention& attention, double threshold);

// cross_attention + word_attention + hard_links, with the options' defaults resolved.
Alignment align_record(const AttentionRecord& record, const AlignmentOptions& options);

// align_record of every record; an error names `origin` and the record's place there
// ("origin:3" for the third record).
std::vector<Alignment> align_records(const std::vector<AttentionRecord>& records, const std::string& origin,
                                     const AlignmentOptions& options);

// Target word j of T linked to source word round((j + 0.5)·S/T − 0.5) (halves rounded away from
// zero), clamped to [0, S−1]; none if S or T is 0. The alignment that assumes both sides run at an
// even pace: word centres matched proportionally.
Alignment diagonal_alignment(int source_words, int target_words);

}  // namespace attn::inspect
