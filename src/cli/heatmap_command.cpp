// `attn heatmap`: pictures of the attention that `attn translate --attention` wrote
// (docs/attention-pictures.md).
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "inspect/attention_record.h"
#include "inspect/attention_svg.h"
#include "inspect/png_render.h"

namespace attn::cli {

namespace {

namespace fs = std::filesystem;
using inspect::AttentionKind;
using inspect::AttentionRecord;
using inspect::kMeanHead;

struct HeatmapCommandArgs {
  std::string attention_path, out_dir;
  std::vector<std::int64_t> lines;
  std::string kind = "cross", layer = "last", head, style = "heatmap", format = "both";
  int word = -1;
  std::optional<double> cutoff;
  double scale = 2.0;
  int max_pictures = 100;
};

// One picture to draw: which record, layer, heads, and the file name without its extension.
struct Picture {
  const AttentionRecord* record = nullptr;
  int layer = 0;
  std::vector<int> heads;  // heatmap: one head (or kMeanHead); lines: those drawn; grid: unused
  std::string stem;
};

enum class Style { heatmap, grid, lines };

Style parse_style(const std::string& s) {
  if (s == "heatmap") return Style::heatmap;
  if (s == "grid") return Style::grid;
  if (s == "lines") return Style::lines;
  throw Error("--style: unknown style '" + s + "' (known: heatmap, grid, lines)");
}

std::vector<int> resolve_layers(const AttentionRecord& record, AttentionKind kind, const std::string& layer) {
  const std::vector<int> layers = inspect::layers_of(record, kind);
  if (layers.empty())
    throw Error("line " + std::to_string(record.line) + ": the record has no " +
                std::string(inspect::attention_kind_name(kind)) + " attention");
  if (layer == "all") return layers;
  if (layer == "last") return {layers.back()};
  return {std::stoi(layer)};  // checked to be a number by parse_number(); existence checked by select_matrix
}

int parse_number(const std::string& option, const std::string& value) {
  const bool digits = std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (value.empty() || value.size() > 6 || !digits)
    throw Error(option + ": '" + value + "' is not a number" +
                (option == "--layer"  ? " (or all, last)"
                 : option == "--head" ? " (or mean, all)"
                                      : ""));
  return std::stoi(value);
}

// Every picture the arguments ask for, each checked (record, layer, head, size, --word) before any
// file is written.
std::vector<Picture> plan(const HeatmapCommandArgs& args, const std::vector<AttentionRecord>& records,
                          AttentionKind kind, Style style) {
  std::vector<const AttentionRecord*> chosen;
  if (args.lines.empty()) {
    // Empty input lines have records without matrices: nothing to draw.
    for (const auto& r : records)
      if (!r.attention.empty()) chosen.push_back(&r);
  } else {
    for (std::int64_t line : args.lines) {
      auto it = std::find_if(records.begin(), records.end(), [&](const auto& r) { return r.line == line; });
      if (it == records.end()) {
        std::string have;
        for (std::size_t i = 0; i < records.size() && i < 10; ++i)
          have += (i ? ", " : "") + std::to_string(records[i].line);
        if (records.size() > 10) have += ", ...";
        throw Error(args.attention_path + " has no record for line " + std::to_string(line) +
                    (records.empty() ? " (it is empty)" : " (it has lines " + have + ")"));
      }
      if (std::find(chosen.begin(), chosen.end(), &*it) == chosen.end()) chosen.push_back(&*it);
    }
  }
  if (chosen.empty()) throw Error(args.attention_path + ": no attention records");
  std::set<std::int64_t> seen;
  for (const AttentionRecord* r : chosen)
    if (!seen.insert(r->line).second)
      throw Error(args.attention_path + " has more than one record for line " + std::to_string(r->line) +
                  "; choose one with --line (pictures are named by line)");

  if (args.layer != "all" && args.layer != "last") parse_number("--layer", args.layer);
  std::string head = args.head;
  if (style == Style::grid && !head.empty())
    throw Error("--head does not apply to --style grid (a grid shows every head and their mean)");
  if (head.empty()) head = style == Style::lines ? "all" : "mean";
  if (head != "all" && head != "mean") parse_number("--head", head);
  if (args.word >= 0 && style != Style::lines) throw Error("--word applies to --style lines only");
  if (args.cutoff && style != Style::lines) throw Error("--cutoff applies to --style lines only");

  const std::string kind_name(inspect::attention_kind_name(kind));
  std::vector<Picture> pictures;
  for (const AttentionRecord* r : chosen) {
    const std::string prefix = "line-" + std::to_string(r->line) + "." + kind_name + ".layer-";
    for (int layer : resolve_layers(*r, kind, args.layer)) {
      const std::string base = prefix + std::to_string(layer);
      std::vector<int> heads;
      if (head == "all")
        heads = inspect::heads_of(*r, kind, layer);
      else if (head == "mean")
        heads = {kMeanHead};
      else
        heads = {std::stoi(head)};
      if (heads.empty()) inspect::select_matrix(*r, kind, layer, kMeanHead);  // throws, naming the layers there are
      if (style == Style::grid) heads = inspect::heads_of(*r, kind, layer);
      int rows = 0;
      for (int h : heads) {
        const inspect::AttentionMatrix m = inspect::select_matrix(*r, kind, layer, h);
        inspect::check_drawable(*r, m);
        rows = m.rows;
      }
      if (args.word >= rows)
        throw Error("line " + std::to_string(r->line) + ": --word " + std::to_string(args.word) + ": the " + kind_name +
                    " attention has " + std::to_string(rows) + " query tokens (0-" + std::to_string(rows - 1) + ")");
      auto head_part = [&](int h) { return h == kMeanHead ? std::string("mean") : std::to_string(h); };
      if (style == Style::heatmap) {
        for (int h : heads) pictures.push_back({r, layer, {h}, base + ".head-" + head_part(h)});
      } else if (style == Style::grid) {
        pictures.push_back({r, layer, {}, base + ".grid"});
      } else {
        std::string stem = base + ".lines.head-" + (head == "all" ? std::string("all") : head_part(heads[0]));
        if (args.word >= 0) stem += ".word-" + std::to_string(args.word);
        pictures.push_back({r, layer, heads, stem});
      }
    }
  }
  if (static_cast<int>(pictures.size()) > args.max_pictures)
    throw Error("this would draw " + std::to_string(pictures.size()) + " pictures, more than --max-pictures " +
                std::to_string(args.max_pictures) + "; choose fewer with --line, --layer or --head, or raise " +
                "--max-pictures");
  return pictures;
}

void make_out_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw_in(dir.string(), "cannot create the output folder: " + ec.message());
  if (!fs::is_directory(dir)) throw_in(dir.string(), "is not a folder");
  if (::access(dir.c_str(), W_OK | X_OK) != 0) throw_in(dir.string(), "the output folder is not writable");
}

void run_heatmap_command(const HeatmapCommandArgs& args) {
  const AttentionKind kind = inspect::parse_attention_kind(args.kind);
  const Style style = parse_style(args.style);
  const bool svg = args.format == "svg" || args.format == "both", png = args.format == "png" || args.format == "both";
  if (!svg && !png) throw Error("--format: unknown format '" + args.format + "' (known: svg, png, both)");
  const std::vector<AttentionRecord> records = inspect::read_attention_records(args.attention_path);
  const std::vector<Picture> pictures = plan(args, records, kind, style);
  const fs::path dir(args.out_dir);
  make_out_dir(dir);
  std::size_t files = 0;
  for (const Picture& p : pictures) {
    std::string text;
    if (style == Style::heatmap) {
      text = inspect::heatmap_svg(*p.record, inspect::select_matrix(*p.record, kind, p.layer, p.heads[0]));
    } else if (style == Style::grid) {
      text = inspect::head_grid_svg(*p.record, kind, p.layer);
    } else {
      inspect::LinesOptions options;
      options.heads = p.heads;
      options.query = args.word;
      if (args.cutoff) options.cutoff = *args.cutoff;
      text = inspect::lines_svg(*p.record, kind, p.layer, options);
    }
    if (svg) {
      const fs::path file = dir / (p.stem + ".svg");
      write_file_atomic(file, text);
      std::cout << "wrote " << file.string() << "\n";
      ++files;
    }
    if (png) {
      const fs::path file = dir / (p.stem + ".png");
      inspect::write_png(file, text, args.scale);
      std::cout << "wrote " << file.string() << "\n";
      ++files;
    }
  }
  std::cout << pictures.size() << (pictures.size() == 1 ? " picture, " : " pictures, ") << files
            << (files == 1 ? " file" : " files") << " in " << dir.string() << "\n";
}

}  // namespace

void add_heatmap_command(CLI::App& app) {
  auto args = std::make_shared<HeatmapCommandArgs>();
  CLI::App* command = app.add_subcommand(
      "heatmap",
      "Pictures (SVG, PNG) of the attention written by `attn translate --attention`: heatmaps, a grid "
      "of every head of a layer, or the paper's lines between query and key tokens.");
  command->add_option("--attention", args->attention_path, "Attention records (JSON Lines) to draw")->required();
  command->add_option("--out", args->out_dir, "Folder for the pictures (created if missing)")->required();
  command->add_option("--line", args->lines, "Draw the record of this input line (repeatable; default: every record)")
      ->check(CLI::PositiveNumber);
  command->add_option("--kind", args->kind, "Which attention: cross, decoder_self or encoder_self")
      ->check(CLI::IsMember({"cross", "decoder_self", "encoder_self"}))
      ->capture_default_str();
  command->add_option("--layer", args->layer, "Layer (from 0), last, or all")->capture_default_str();
  command->add_option("--head", args->head,
                      "Head (from 0), mean (over the layer's heads) or all (default: mean for heatmap, all for lines; "
                      "not for grid)");
  command
      ->add_option("--style", args->style,
                   "heatmap: one matrix a picture; grid: every head of a layer and their mean; lines: the paper's "
                   "Figures 3-5, a line from each query token to each key token")
      ->check(CLI::IsMember({"heatmap", "grid", "lines"}))
      ->capture_default_str();
  command->add_option("--word", args->word, "lines only: draw only the attention of this query token (0-based)")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--cutoff", args->cutoff, "lines only: leave out weights below this (default 0.05)")
      ->check(finite_in(0, 1));
  command->add_option("--format", args->format, "svg, png or both")
      ->check(CLI::IsMember({"svg", "png", "both"}))
      ->capture_default_str();
  command->add_option("--scale", args->scale, "PNG pixels per SVG pixel")
      ->check(finite_in(0.25, 8))
      ->capture_default_str();
  command->add_option("--max-pictures", args->max_pictures, "Refuse to draw more pictures than this")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->callback([args] { run_heatmap_command(*args); });
}

}  // namespace attn::cli
