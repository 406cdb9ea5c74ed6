#include "inspect/word_alignment.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "inspect/word_pieces.h"

namespace attn::inspect {

int cross_layer_count(const AttentionRecord& record) {
  int layers = 0;
  for (const AttentionMatrix& matrix : record.attention) {
    if (matrix.kind == AttentionKind::cross) layers = std::max(layers, matrix.layer + 1);
  }
  return layers;
}

int cross_head_count(const AttentionRecord& record, int layer) {
  int heads = 0;
  for (const AttentionMatrix& matrix : record.attention) {
    if (matrix.kind == AttentionKind::cross && matrix.layer == layer) heads = std::max(heads, matrix.head + 1);
  }
  return heads;
}

int default_alignment_layer(int layers) { return layers >= 1 ? layers - 1 : 0; }

AttentionMatrix cross_attention(const AttentionRecord& record, int layer, int head) {
  const int layers = cross_layer_count(record);
  if (layer < 0 || layer >= layers) {
    throw Error("no cross-attention layer " + std::to_string(layer) + " (the record has " + std::to_string(layers) +
                " layers, 0 to " + std::to_string(layers - 1) + ")");
  }
  const int heads = cross_head_count(record, layer);
  if (heads == 0) throw Error("the record has no cross-attention of layer " + std::to_string(layer));
  if (head != kMeanOfHeads) {
    const AttentionMatrix* matrix = record.find(AttentionKind::cross, layer, head);
    if (!matrix) {
      throw Error("no cross-attention head " + std::to_string(head) + " in layer " + std::to_string(layer) +
                  " (it has heads 0 to " + std::to_string(heads - 1) + ")");
    }
    return *matrix;
  }
  std::vector<const AttentionMatrix*> matrices;
  for (int h = 0; h < heads; ++h) {
    const AttentionMatrix* matrix = record.find(AttentionKind::cross, layer, h);
    if (!matrix) {
      throw Error("layer " + std::to_string(layer) + " lacks cross-attention head " + std::to_string(h) +
                  " (heads 0 to " + std::to_string(heads - 1) + " are needed for their mean)");
    }
    matrices.push_back(matrix);
  }
  return mean_of_heads(matrices, "the cross-attention heads of layer " + std::to_string(layer));
}

WordAttention word_attention(const AttentionMatrix& cross, const std::vector<std::string>& source_pieces,
                             const std::vector<std::string>& target_pieces) {
  ATTN_CHECK(
      cross.rows == static_cast<int>(target_pieces.size()) && cross.cols == static_cast<int>(source_pieces.size()),
      "cross-attention is target pieces × source pieces");
  // Pieces of no word ("</s>", "<s>") have index -1 and are skipped, dropping EOS's row and column:
  // end-of-sentence is not a word of either text, so no link may touch it.
  const PieceWords source = group_pieces(source_pieces);
  const PieceWords target = group_pieces(target_pieces);
  WordAttention words;
  words.rows = static_cast<int>(target.words.size());
  words.cols = static_cast<int>(source.words.size());
  words.weights.assign(static_cast<std::size_t>(words.rows) * words.cols, 0.0);
  std::vector<int> pieces_of_target_word(target.words.size(), 0);
  for (int t = 0; t < cross.rows; ++t) {
    const int row = target.word_of_piece[t];
    if (row < 0) continue;
    ++pieces_of_target_word[row];
    for (int s = 0; s < cross.cols; ++s) {
      const int col = source.word_of_piece[s];
      if (col >= 0) words.weights[static_cast<std::size_t>(row) * words.cols + col] += cross.at(t, s);
    }
  }
  for (int row = 0; row < words.rows; ++row) {
    for (int col = 0; col < words.cols; ++col) {
      words.weights[static_cast<std::size_t>(row) * words.cols + col] /= pieces_of_target_word[row];
    }
  }
  return words;
}

Alignment hard_links(const WordAttention& attention, double threshold) {
  Alignment links;
  for (int t = 0; t < attention.rows; ++t) {
    if (threshold > 0) {
      for (int s = 0; s < attention.cols; ++s) {
        if (attention.at(t, s) >= threshold) links.push_back({s, t});
      }
      continue;
    }
    if (attention.cols == 0) continue;
    int best = 0;  // strict > keeps the lowest index among equal weights
    for (int s = 1; s < attention.cols; ++s) {
      if (attention.at(t, s) > attention.at(t, best)) best = s;
    }
    links.push_back({best, t});
  }
  normalize(links);
  return links;
}

Alignment align_record(const AttentionRecord& record, const AlignmentOptions& options) {
  // An empty input line (only "</s>" on a side, no matrices written) has nothing to link.
  if (record.attention.empty() && (record.source_pieces.size() <= 1 || record.target_pieces.size() <= 1)) return {};
  const int layer = options.layer >= 0 ? options.layer : default_alignment_layer(cross_layer_count(record));
  const AttentionMatrix cross = cross_attention(record, layer, options.head);
  return hard_links(word_attention(cross, record.source_pieces, record.target_pieces), options.threshold);
}

std::vector<Alignment> align_records(const std::vector<AttentionRecord>& records, const std::string& origin,
                                     const AlignmentOptions& options) {
  std::vector<Alignment> alignments;
  alignments.reserve(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    try {
      alignments.push_back(align_record(records[i], options));
    } catch (const Error& e) {
      throw_at(origin, i + 1, e.what());
    }
  }
  return alignments;
}

Alignment diagonal_alignment(int source_words, int target_words) {
  Alignment links;
  if (source_words <= 0 || target_words <= 0) return links;
  for (int j = 0; j < target_words; ++j) {
    const double position = (j + 0.5) * source_words / target_words - 0.5;
    const int i = std::clamp(static_cast<int>(std::lround(position)), 0, source_words - 1);
    links.push_back({i, j});
  }
  normalize(links);
  return links;
}

}  // namespace attn::inspect
