// SVG to PNG: the written file decodes to the expected size, with the expected colours where
// known shapes are.
#include "inspect/png_render.h"

#include <cairo.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "common/temp_dir.h"
#include "core/error.h"
#include "inspect/attention_svg.h"

namespace attn::inspect {
namespace {

namespace fs = std::filesystem;

class Decoded {
 public:
  explicit Decoded(const fs::path& file) : surface_(cairo_image_surface_create_from_png(file.c_str())) {}
  ~Decoded() { cairo_surface_destroy(surface_); }
  Decoded(const Decoded&) = delete;
  Decoded& operator=(const Decoded&) = delete;
  bool ok() const { return cairo_surface_status(surface_) == CAIRO_STATUS_SUCCESS; }
  int width() const { return cairo_image_surface_get_width(surface_); }
  int height() const { return cairo_image_surface_get_height(surface_); }
  // Colour and alpha of one pixel (ARGB32 words; the pictures are opaque, so not premultiplied).
  Rgb at(int x, int y) const {
    const unsigned char* data = cairo_image_surface_get_data(surface_);
    const int stride = cairo_image_surface_get_stride(surface_);
    std::uint32_t word;
    std::memcpy(&word, data + static_cast<std::size_t>(y) * stride + static_cast<std::size_t>(x) * 4, 4);
    return {static_cast<int>((word >> 16) & 0xFF), static_cast<int>((word >> 8) & 0xFF), static_cast<int>(word & 0xFF)};
  }
  int alpha(int x, int y) const {
    const unsigned char* data = cairo_image_surface_get_data(surface_);
    std::uint32_t word;
    const int stride = cairo_image_surface_get_stride(surface_);
    std::memcpy(&word, data + static_cast<std::size_t>(y) * stride + static_cast<std::size_t>(x) * 4, 4);
    return static_cast<int>(word >> 24);
  }

 private:
  cairo_surface_t* surface_;
};

class PngRender : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = attn::testing::fresh_temp_dir("png_render"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// A 40 × 20 picture: the left half a rectangle in the scale's midpoint colour, the right half left
// to the background.
const std::string kTwoHalves =
    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"40\" height=\"20\">"
    "<rect x=\"0\" y=\"0\" width=\"20\" height=\"20\" fill=\"#8498b5\"/></svg>";

TEST_F(PngRender, SizeColoursAndWhiteBackground) {
  const fs::path file = dir_ / "halves.png";
  write_png(file, kTwoHalves);
  Decoded png(file);
  ASSERT_TRUE(png.ok());
  EXPECT_EQ(png.width(), 40);
  EXPECT_EQ(png.height(), 20);
  EXPECT_EQ(png.at(10, 10), (Rgb{132, 152, 181}));
  EXPECT_EQ(png.at(30, 10), (Rgb{255, 255, 255}));  // the background is painted white, not transparent
  EXPECT_EQ(png.alpha(30, 10), 255);
}

TEST_F(PngRender, ScaleMultipliesTheSize) {
  const fs::path file = dir_ / "halves2.png";
  write_png(file, kTwoHalves, 2.5);
  Decoded png(file);
  ASSERT_TRUE(png.ok());
  EXPECT_EQ(png.width(), 100);
  EXPECT_EQ(png.height(), 50);
  EXPECT_EQ(png.at(45, 25), (Rgb{132, 152, 181}));
  EXPECT_EQ(png.at(55, 25), (Rgb{255, 255, 255}));
}

// The heatmap of a 2 × 3 matrix: the pixel in the middle of each cell has the cell's hand-computed
// colour (cells are found by their x, y in the SVG).
TEST_F(PngRender, HeatmapCellsHaveTheirColours) {
  AttentionRecord r;
  r.line = 1;
  r.source_pieces = {"\u2581x", "\u2581\u0645\u0631\u062d\u0628\u0627", "</s>"};
  r.target_pieces = {"\u2581y", "</s>"};
  AttentionMatrix m;
  m.rows = 2;
  m.cols = 3;
  m.weights = {0.5f, 0.25f, 0.25f, 0.0f, 0.0f, 1.0f};
  r.attention.push_back(m);
  const std::string svg = heatmap_svg(r, m);
  const std::regex cell("<rect class=\"cell\" x=\"([0-9.]+)\" y=\"([0-9.]+)\" width=\"([0-9]+)\"");
  std::vector<std::pair<int, int>> centres;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), cell); it != std::sregex_iterator(); ++it) {
    const double size = std::stod((*it)[3].str());
    centres.push_back({static_cast<int>(std::stod((*it)[1].str()) + size / 2),
                       static_cast<int>(std::stod((*it)[2].str()) + size / 2)});
  }
  ASSERT_EQ(centres.size(), 6u);
  const fs::path file = dir_ / "heatmap.png";
  write_png(file, svg);
  Decoded png(file);
  ASSERT_TRUE(png.ok());
  const std::vector<Rgb> expected{{132, 152, 181}, {193, 203, 218}, {193, 203, 218},
                                  {255, 255, 255}, {255, 255, 255}, {8, 48, 107}};
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(png.at(centres[i].first, centres[i].second), expected[i]) << i;
}

TEST_F(PngRender, MalformedSvgIsAnErrorNamingTheFile) {
  const fs::path file = dir_ / "bad.png";
  try {
    write_png(file, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"4\" height=\"4\"><rect></svg>");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(file.string() + ": cannot read the SVG", 0), 0u) << e.what();
  }
  EXPECT_FALSE(fs::exists(file));
  EXPECT_TRUE(fs::is_empty(dir_));  // no temporary file left behind either
}

TEST_F(PngRender, RefusesPicturesTooLarge) {
  const std::string huge = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"20000\" height=\"10\"></svg>";
  EXPECT_THROW(render_png(huge, 1.0, "huge.png"), Error);
  EXPECT_THROW(render_png(kTwoHalves, 0.0, "zero.png"), Error);
}

}  // namespace
}  // namespace attn::inspect
