#pragma once
// Pieces shared by the attention pictures (attention_svg.cpp, attention_svg_lines.cpp); not a
// public interface.
#include <string>
#include <string_view>

#include "inspect/attention_record.h"

namespace attn::inspect::svg_detail {

inline constexpr const char* kFontFamily = "'DejaVu Sans', 'Noto Sans', Verdana, sans-serif";

// A coordinate or size with at most one decimal ("12", "12.5").
std::string num(double v);

// Estimated width in px of `text` in DejaVu Sans at `font_size` (0.62 em a character, 1 em for
// wide East Asian characters); good enough to leave room for labels.
double text_width(std::string_view text, double font_size);

// <svg ...> with a white background, the font and the given size; close with "</svg>\n".
std::string svg_open(double width, double height);

// One label as its own <text> element, isolated for the bidirectional algorithm so a right-to-left
// label neither reorders nor is reordered by its neighbours. `attributes` is spliced in verbatim
// (x, y, text-anchor, transform, ...); `text` is escaped here.
std::string text_element(const std::string& attributes, std::string_view text);

// "cross-attention", "decoder self-attention", "encoder self-attention".
std::string kind_title(AttentionKind kind);

// "rows: target pieces (queries) · columns: source pieces (keys)" and the like.
std::string axes_caption(AttentionKind kind);

}  // namespace attn::inspect::svg_detail
