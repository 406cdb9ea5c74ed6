#pragma once
// One sentence's attention as `attn translate --attention` and `attn score --attention` write it:
// one JSON object per line (JSON Lines), described for users in docs/attention-format.md.
//
//   {"line": 3,                                   1-based line of the input
//    "source": "In the beginning",                the input text (as read)
//    "target": "En el principio",                 the output (translate) or given (score) text
//    "source_pieces": ["▁In", "▁the", "▁begin", "ning", "</s>"],
//    "target_pieces": ["▁En", "▁el", "▁principio", "</s>"],
//    "log_prob": -1.25, "score": -0.98,           log P(target + EOS | source); the search score
//                                                 (log_prob / length penalty; = log_prob for score)
//    "attention": [
//      {"kind": "cross", "layer": 0, "head": 0, "weights": [[...], ...]},
//      ...]}
//
// Pieces are SentencePiece pieces ("▁" starts a word); both lists end with "</s>". The decoder
// reads "<s>" followed by target_pieces without its last piece, and row t of every decoder-side
// matrix is the step that predicted target_pieces[t].
//  kind "cross":         [target_pieces × source_pieces]: encoder-decoder attention
//  kind "decoder_self":  [target_pieces × target_pieces]: row t attends to decoder inputs 0..t
//                        ("<s>", target_pieces[0], ...); causal, so entries after t are 0
//  kind "encoder_self":  [source_pieces × source_pieces]
// Layers and heads count from 0. Each row is a probability distribution (sums to 1).
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace attn::inspect {

enum class AttentionKind { cross, decoder_self, encoder_self };
std::string_view attention_kind_name(AttentionKind kind);  // "cross", ...
// Throws Error naming the accepted values.
AttentionKind parse_attention_kind(std::string_view name);

struct AttentionMatrix {
  AttentionKind kind = AttentionKind::cross;
  int layer = 0, head = 0;
  int rows = 0, cols = 0;
  std::vector<float> weights;  // [rows, cols], row-major
  float at(int r, int c) const { return weights[static_cast<std::size_t>(r) * cols + c]; }
};

struct AttentionRecord {
  std::int64_t line = 0;
  std::string source, target;
  std::vector<std::string> source_pieces, target_pieces;  // each ends with "</s>"
  double log_prob = 0, score = 0;
  std::vector<AttentionMatrix> attention;

  // The matrix of this kind, layer and head, or nullptr.
  const AttentionMatrix* find(AttentionKind kind, int layer, int head) const;
};

// The record as a JSON object with the keys in the order above, for a file line or a larger reply.
// Weights are held as the doubles with their float's shortest decimal text (core/float_decimal.h),
// so a record read back holds the very weights that were written. Throws Error for text that is not
// valid UTF-8 and for numbers that are not finite.
nlohmann::ordered_json to_json(const AttentionRecord& record);
// to_json(record) as one line of JSON (no newline).
std::string to_json_line(const AttentionRecord& record);

// The `head` value that stands for the mean over a layer's heads.
inline constexpr int kMeanOfHeads = -1;

// The element-wise mean of some heads' matrices of one kind and layer (summed in double), with
// head = kMeanOfHeads. Throws Error("<where> differ in shape") if their shapes differ.
AttentionMatrix mean_of_heads(const std::vector<const AttentionMatrix*>& heads, const std::string& where);

// Parses one line. Throws Error naming `file`, `line_number` and the problem (not JSON, a missing
// or mistyped key, a matrix whose shape does not match its kind and the pieces).
AttentionRecord parse_attention_record(std::string_view json_line, const std::string& file, std::int64_t line_number);

// Reads every record of a JSON Lines file (empty lines are not allowed), with the same errors.
std::vector<AttentionRecord> read_attention_records(const std::string& file);

}  // namespace attn::inspect
