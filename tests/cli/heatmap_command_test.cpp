// `attn heatmap` end to end: runs the built binary on a hand-written attention file and checks the
// files it writes and the errors it gives.
#include <cairo.h>
#include <gtest/gtest.h>
#include <librsvg/rsvg.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/run_attn.h"
#include "common/temp_dir.h"

namespace attn::inspect {
namespace {

namespace fs = std::filesystem;

using testing::run_attn;
using testing::RunResult;

// One record, written by hand: source "▁a ▁<b> </s>", target "▁c </s>"; cross-attention with two
// layers of two heads, one decoder and one encoder self-attention matrix.
const std::string kRecord = R"({"line":3,"source":"a <b>","target":"c","source_pieces":["▁a","▁<b>","</s>"],)"
                            R"("target_pieces":["▁c","</s>"],"log_prob":-1.5,"score":-1.0,"attention":[)"
                            R"({"kind":"cross","layer":0,"head":0,"weights":[[0.5,0.25,0.25],[0,0,1]]},)"
                            R"({"kind":"cross","layer":0,"head":1,"weights":[[0.5,0.5,0],[0,0.5,0.5]]},)"
                            R"({"kind":"cross","layer":1,"head":0,"weights":[[1,0,0],[0,1,0]]},)"
                            R"({"kind":"cross","layer":1,"head":1,"weights":[[0,1,0],[0,0,1]]},)"
                            R"({"kind":"decoder_self","layer":0,"head":0,"weights":[[1,0],[0.5,0.5]]},)"
                            R"({"kind":"encoder_self","layer":0,"head":0,"weights":[[1,0,0],[0,1,0],[0,0,1]]}]})";

std::string read(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::set<std::string> files_in(const fs::path& dir) {
  std::set<std::string> names;
  if (!fs::exists(dir)) return names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename().string());
  return names;
}

bool valid_svg(const fs::path& file) {
  const std::string text = read(file);
  GError* error = nullptr;
  RsvgHandle* handle = rsvg_handle_new_from_data(reinterpret_cast<const guint8*>(text.data()), text.size(), &error);
  if (error) g_error_free(error);
  if (!handle) return false;
  g_object_unref(handle);
  return true;
}

// Width and height of a PNG file, or (0, 0) if it does not decode.
std::pair<int, int> png_size(const fs::path& file) {
  cairo_surface_t* surface = cairo_image_surface_create_from_png(file.c_str());
  std::pair<int, int> size{0, 0};
  if (cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS)
    size = {cairo_image_surface_get_width(surface), cairo_image_surface_get_height(surface)};
  cairo_surface_destroy(surface);
  return size;
}

class HeatmapCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = attn::testing::fresh_temp_dir("heatmap_command");
    attention_ = write("attention.jsonl", kRecord + "\n");
    out_ = (dir_ / "out").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return (dir_ / name).string();
  }
  RunResult heatmap(const std::string& options, const std::string& attention = "") {
    return run_attn("heatmap --attention " + (attention.empty() ? attention_ : attention) + " --out " + out_ + " " +
                    options);
  }
  // Exit 1, the message, and no pictures.
  void expect_error(const RunResult& result, const std::string& message) {
    EXPECT_EQ(result.exit_code, 1) << result.output;
    EXPECT_NE(result.output.find(message), std::string::npos) << result.output;
    EXPECT_TRUE(files_in(out_).empty());
  }

  fs::path dir_;
  std::string attention_, out_;
};

TEST_F(HeatmapCommand, DefaultsDrawTheMeanOfTheLastLayerAsSvgAndPng) {
  const RunResult result = heatmap("");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const fs::path svg = fs::path(out_) / "line-3.cross.layer-1.head-mean.svg";
  const fs::path png = fs::path(out_) / "line-3.cross.layer-1.head-mean.png";
  EXPECT_EQ(files_in(out_), (std::set<std::string>{svg.filename().string(), png.filename().string()}));
  EXPECT_NE(result.output.find("wrote " + svg.string() + "\n"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("wrote " + png.string() + "\n"), std::string::npos) << result.output;
  EXPECT_TRUE(valid_svg(svg));
  // Mean of layer 1: [[0.5, 0.5, 0], [0, 0.5, 0.5]], max 0.5: darkest where 0.5, white where 0.
  const std::string text = read(svg);
  std::vector<std::string> fills;
  const std::regex fill("<rect class=\"cell\"[^>]* fill=\"(#[0-9a-f]{6})\"");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), fill); it != std::sregex_iterator(); ++it)
    fills.push_back((*it)[1].str());
  EXPECT_EQ(fills, (std::vector<std::string>{"#08306b", "#08306b", "#ffffff", "#ffffff", "#08306b", "#08306b"}));
  EXPECT_NE(text.find("&lt;b&gt;"), std::string::npos);
  // PNG at the default scale 2: twice the SVG's width and height.
  const std::smatch size = [&] {
    std::smatch m;
    std::regex_search(text, m, std::regex("<svg [^>]*width=\"([0-9]+)\" height=\"([0-9]+)\""));
    return m;
  }();
  ASSERT_EQ(size.size(), 3u);
  EXPECT_EQ(png_size(png), std::make_pair(2 * std::stoi(size[1].str()), 2 * std::stoi(size[2].str())));
}

// attn translate writes an empty input line as a record without matrices: nothing to draw, so all
// records' pictures skip it; asking for that line by name is an error.
TEST_F(HeatmapCommand, SkipsTheRecordsOfEmptyLines) {
  const std::string empty = R"({"line":1,"source":"","target":"","source_pieces":["</s>"],"target_pieces":["</s>"],)"
                            R"("log_prob":0,"score":0,"attention":[]})";
  const std::string both = write("both.jsonl", empty + "\n" + kRecord + "\n");
  const RunResult result = heatmap("--format svg", both);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(files_in(out_), (std::set<std::string>{"line-3.cross.layer-1.head-mean.svg"}));
  fs::remove_all(out_);
  expect_error(heatmap("--line 1", both), "line 1");
}

TEST_F(HeatmapCommand, EveryHeadGridAndLinesFileNames) {
  RunResult result = heatmap("--layer 0 --head all --format svg");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(files_in(out_),
            (std::set<std::string>{"line-3.cross.layer-0.head-0.svg", "line-3.cross.layer-0.head-1.svg"}));
  EXPECT_NE(result.output.find("2 pictures, 2 files in " + out_), std::string::npos) << result.output;
  fs::remove_all(out_);

  result = heatmap("--style grid --layer all --format png --scale 1");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(files_in(out_), (std::set<std::string>{"line-3.cross.layer-0.grid.png", "line-3.cross.layer-1.grid.png"}));
  EXPECT_GT(png_size(fs::path(out_) / "line-3.cross.layer-0.grid.png").first, 0);
  fs::remove_all(out_);

  result = heatmap("--style lines --kind encoder_self --layer 0 --word 1 --line 3");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(files_in(out_), (std::set<std::string>{"line-3.encoder_self.layer-0.lines.head-all.word-1.svg",
                                                   "line-3.encoder_self.layer-0.lines.head-all.word-1.png"}));
  EXPECT_TRUE(valid_svg(fs::path(out_) / "line-3.encoder_self.layer-0.lines.head-all.word-1.svg"));
  fs::remove_all(out_);

  // Layer 0's weights of at least 0.3: head 0 has 2, head 1 four; of at least 0.05 (the default), four each.
  for (const auto& [cutoff, lines] : {std::pair<std::string, std::size_t>{"--cutoff 0.3", 6}, {"", 8}}) {
    result = heatmap("--style lines --layer 0 --format svg " + cutoff);
    ASSERT_EQ(result.exit_code, 0) << result.output;
    const std::string text = read(fs::path(out_) / "line-3.cross.layer-0.lines.head-all.svg");
    std::size_t count = 0;
    for (std::size_t at = text.find("stroke-opacity="); at != std::string::npos;
         at = text.find("stroke-opacity=", at + 1))
      ++count;
    EXPECT_EQ(count, lines) << cutoff;
    fs::remove_all(out_);
  }

  result = heatmap("--kind decoder_self --head 0 --format svg");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(files_in(out_), (std::set<std::string>{"line-3.decoder_self.layer-0.head-0.svg"}));
}

TEST_F(HeatmapCommand, MissingLayerHeadOrLine) {
  expect_error(heatmap("--layer 5"), "attn: error: line 3: no cross-attention layer 5 (the record has layers 0, 1)");
  expect_error(heatmap("--layer 0 --head 2"), "line 3: no head 2 in cross-attention layer 0 (it has heads 0, 1)");
  expect_error(heatmap("--line 9"), attention_ + " has no record for line 9 (it has lines 3)");
  expect_error(heatmap("--style lines --word 2"), "--word 2: the cross attention has 2 query tokens (0-1)");
  expect_error(heatmap("--word 0"), "--word applies to --style lines only");
  expect_error(heatmap("--cutoff 0.5"), "--cutoff applies to --style lines only");
  expect_error(heatmap("--style grid --head 0"), "--head does not apply to --style grid");
  expect_error(heatmap("--layer first"), "--layer: 'first' is not a number (or all, last)");
}

TEST_F(HeatmapCommand, NotJsonNamesFileAndLine) {
  const std::string bad = write("bad.jsonl", kRecord + "\nhello\n");
  expect_error(heatmap("", bad), bad + ":2: not JSON");
}

TEST_F(HeatmapCommand, RefusesARecordTooLongToDraw) {
  // 301 target pieces: a 301 × 2 cross-attention matrix, written out by hand.
  std::string pieces, rows;
  for (int i = 0; i < 301; ++i) {
    pieces += std::string(i ? "," : "") + (i == 300 ? "\"</s>\"" : "\"▁w\"");
    rows += std::string(i ? "," : "") + "[0.5,0.5]";
  }
  const std::string file = write("long.jsonl", R"({"line":1,"source":"a","target":"w w","source_pieces":["▁a","</s>"],)"
                                               R"("target_pieces":[)" +
                                                   pieces +
                                                   R"(],"log_prob":-1,"score":-1,)"
                                                   R"("attention":[{"kind":"cross","layer":0,"head":0,"weights":[)" +
                                                   rows + "]}]}\n");
  expect_error(heatmap("", file), "line 1: cross-attention is 301 \u00d7 2 tokens, too long to draw");
}

TEST_F(HeatmapCommand, RefusesTooManyPicturesUnlessAllowed) {
  expect_error(heatmap("--layer all --head all --max-pictures 3"), "this would draw 4 pictures");
  const RunResult result = heatmap("--layer all --head all --max-pictures 4 --format svg");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(files_in(out_).size(), 4u);
}

TEST_F(HeatmapCommand, OutputThatIsNotAFolder) {
  out_ = write("a-file", "x");
  const RunResult result = heatmap("--format svg");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("attn: error: " + out_ + ": "), std::string::npos) << result.output;
  EXPECT_EQ(read(out_), "x");
}

}  // namespace
}  // namespace attn::inspect
