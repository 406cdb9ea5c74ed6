#pragma once
// SVG to PNG with librsvg and cairo: the pictures of attention_svg.h as images any viewer opens.
#include <filesystem>
#include <string>
#include <string_view>

namespace attn::inspect {

// The largest PNG side rendered, in pixels (after scaling); a larger picture is refused.
inline constexpr int kMaxPngSide = 16384;

// Renders `svg` at `scale` × its own size (its width and height attributes, in px) on a white
// background and returns the PNG file's bytes. Throws Error starting with `name` (the file the
// PNG is for) if librsvg cannot read the SVG, the size is unusable, or cairo fails.
std::string render_png(std::string_view svg, double scale, const std::string& name);

// render_png, then written atomically (core/atomic_file.h) to `file`.
void write_png(const std::filesystem::path& file, std::string_view svg, double scale = 1.0);

}  // namespace attn::inspect
