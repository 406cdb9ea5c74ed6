// `attn heatmap`: pictures of the attention that `attn translate --attention` wrote
// (docs/attention-pictures.md). Which pictures, and their names, are inspect/heatmap_plan.h's.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/atomic_file.h"
#include "core/output_folder.h"
#include "inspect/attention_record.h"
#include "inspect/heatmap_plan.h"
#include "inspect/png_render.h"

namespace attn::cli {

namespace {

namespace fs = std::filesystem;

struct HeatmapCommandArgs {
  std::string attention_path, out_dir;
  std::string kind = "cross", style = "heatmap", format = "both";
  double scale = 2.0;
  inspect::PicturePlanOptions plan;  // lines, layer, head, word, cutoff, max_pictures
};

void run_heatmap_command(const HeatmapCommandArgs& args) {
  inspect::PicturePlanOptions plan = args.plan;
  plan.origin = args.attention_path;
  plan.kind = inspect::parse_attention_kind(args.kind);
  plan.style = inspect::parse_picture_style(args.style);
  const std::vector<inspect::AttentionRecord> records = inspect::read_attention_records(args.attention_path);
  const std::vector<inspect::Picture> pictures = inspect::plan_pictures(records, plan);
  const fs::path dir(args.out_dir);
  make_output_folder(dir);
  std::size_t files = 0;
  for (const inspect::Picture& p : pictures) {
    const std::string text = inspect::draw_picture(p, plan);
    for (const std::string format : {"svg", "png"}) {
      if (args.format != format && args.format != "both") continue;
      const fs::path file = dir / (p.stem + "." + format);
      if (format == "svg") write_file_atomic(file, text);
      if (format == "png") inspect::write_png(file, text, args.scale);
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
  command
      ->add_option("--line", args->plan.lines, "Draw the record of this input line (repeatable; default: every record)")
      ->check(CLI::PositiveNumber);
  command->add_option("--kind", args->kind, "Which attention: cross, decoder_self or encoder_self")
      ->check(CLI::IsMember({"cross", "decoder_self", "encoder_self"}))
      ->capture_default_str();
  command->add_option("--layer", args->plan.layer, "Layer (from 0), last, or all")->capture_default_str();
  command->add_option("--head", args->plan.head,
                      "Head (from 0), mean (over the layer's heads) or all (default: mean for heatmap, all for lines; "
                      "not for grid)");
  command
      ->add_option("--style", args->style,
                   "heatmap: one matrix a picture; grid: every head of a layer and their mean; lines: the paper's "
                   "Figures 3-5, a line from each query token to each key token")
      ->check(CLI::IsMember({"heatmap", "grid", "lines"}))
      ->capture_default_str();
  command->add_option("--word", args->plan.word, "lines only: draw only the attention of this query token (0-based)")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--cutoff", args->plan.cutoff, "lines only: leave out weights below this (default 0.05)")
      ->check(finite_in(0, 1));
  command->add_option("--format", args->format, "svg, png or both")
      ->check(CLI::IsMember({"svg", "png", "both"}))
      ->capture_default_str();
  command->add_option("--scale", args->scale, "PNG pixels per SVG pixel")
      ->check(finite_in(0.25, 8))
      ->capture_default_str();
  command->add_option("--max-pictures", args->plan.max_pictures, "Refuse to draw more pictures than this")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->callback([args] { run_heatmap_command(*args); });
}

}  // namespace attn::cli
