#include "inspect/heatmap_plan.h"

#include <algorithm>
#include <set>

#include "core/error.h"
#include "inspect/attention_svg.h"

namespace attn::inspect {

namespace {

int parse_number(const std::string& option, const std::string& value) {
  const bool digits = std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (value.empty() || value.size() > 6 || !digits)
    throw Error(option + ": '" + value + "' is not a number" +
                (option == "--layer"  ? " (or all, last)"
                 : option == "--head" ? " (or mean, all)"
                                      : ""));
  return std::stoi(value);
}

// The records to draw: those of the asked lines (each once), or every record with matrices.
std::vector<const AttentionRecord*> choose_records(const std::vector<AttentionRecord>& records,
                                                   const PicturePlanOptions& options) {
  std::vector<const AttentionRecord*> chosen;
  if (options.lines.empty()) {
    // Empty input lines have records without matrices: nothing to draw.
    for (const auto& r : records)
      if (!r.attention.empty()) chosen.push_back(&r);
  } else {
    for (std::int64_t line : options.lines) {
      auto it = std::find_if(records.begin(), records.end(), [&](const auto& r) { return r.line == line; });
      if (it == records.end()) {
        std::string have;
        for (std::size_t i = 0; i < records.size() && i < 10; ++i)
          have += (i ? ", " : "") + std::to_string(records[i].line);
        if (records.size() > 10) have += ", ...";
        throw Error(options.origin + " has no record for line " + std::to_string(line) +
                    (records.empty() ? " (it is empty)" : " (it has lines " + have + ")"));
      }
      if (std::find(chosen.begin(), chosen.end(), &*it) == chosen.end()) chosen.push_back(&*it);
    }
  }
  if (chosen.empty()) throw Error(options.origin + ": no attention records");
  std::set<std::int64_t> seen;
  for (const AttentionRecord* r : chosen)
    if (!seen.insert(r->line).second)
      throw Error(options.origin + " has more than one record for line " + std::to_string(r->line) +
                  "; choose one with --line (pictures are named by line)");
  return chosen;
}

}  // namespace

PictureStyle parse_picture_style(const std::string& s) {
  if (s == "heatmap") return PictureStyle::heatmap;
  if (s == "grid") return PictureStyle::grid;
  if (s == "lines") return PictureStyle::lines;
  throw Error("--style: unknown style '" + s + "' (known: heatmap, grid, lines)");
}

std::vector<int> resolve_layers(const AttentionRecord& record, AttentionKind kind, const std::string& layer) {
  const std::vector<int> layers = layers_of(record, kind);
  if (layers.empty())
    throw Error("line " + std::to_string(record.line) + ": the record has no " +
                std::string(attention_kind_name(kind)) + " attention");
  if (layer == "all") return layers;
  if (layer == "last") return {layers.back()};
  return {std::stoi(layer)};  // checked to be a number by parse_number(); existence checked by select_matrix
}

std::vector<Picture> plan_pictures(const std::vector<AttentionRecord>& records, const PicturePlanOptions& options) {
  const std::vector<const AttentionRecord*> chosen = choose_records(records, options);
  const AttentionKind kind = options.kind;
  const PictureStyle style = options.style;
  if (options.layer != "all" && options.layer != "last") parse_number("--layer", options.layer);
  std::string head = options.head;
  if (style == PictureStyle::grid && !head.empty())
    throw Error("--head does not apply to --style grid (a grid shows every head and their mean)");
  if (head.empty()) head = style == PictureStyle::lines ? "all" : "mean";
  if (head != "all" && head != "mean") parse_number("--head", head);
  if (options.word >= 0 && style != PictureStyle::lines) throw Error("--word applies to --style lines only");
  if (options.cutoff && style != PictureStyle::lines) throw Error("--cutoff applies to --style lines only");

  const std::string kind_name(attention_kind_name(kind));
  std::vector<Picture> pictures;
  for (const AttentionRecord* r : chosen) {
    const std::string prefix = "line-" + std::to_string(r->line) + "." + kind_name + ".layer-";
    for (int layer : resolve_layers(*r, kind, options.layer)) {
      const std::string base = prefix + std::to_string(layer);
      std::vector<int> heads;
      if (head == "all")
        heads = heads_of(*r, kind, layer);
      else if (head == "mean")
        heads = {kMeanHead};
      else
        heads = {std::stoi(head)};
      if (heads.empty()) select_matrix(*r, kind, layer, kMeanHead);  // throws, naming the layers there are
      if (style == PictureStyle::grid) heads = heads_of(*r, kind, layer);
      int rows = 0;
      for (int h : heads) {
        const AttentionMatrix m = select_matrix(*r, kind, layer, h);
        check_drawable(*r, m);
        rows = m.rows;
      }
      if (options.word >= rows)
        throw Error("line " + std::to_string(r->line) + ": --word " + std::to_string(options.word) + ": the " +
                    kind_name + " attention has " + std::to_string(rows) + " query tokens (0-" +
                    std::to_string(rows - 1) + ")");
      auto head_part = [&](int h) { return h == kMeanHead ? std::string("mean") : std::to_string(h); };
      if (style == PictureStyle::heatmap) {
        for (int h : heads) pictures.push_back({r, layer, {h}, base + ".head-" + head_part(h)});
      } else if (style == PictureStyle::grid) {
        pictures.push_back({r, layer, {}, base + ".grid"});
      } else {
        std::string stem = base + ".lines.head-" + (head == "all" ? std::string("all") : head_part(heads[0]));
        if (options.word >= 0) stem += ".word-" + std::to_string(options.word);
        pictures.push_back({r, layer, heads, stem});
      }
    }
  }
  if (static_cast<int>(pictures.size()) > options.max_pictures)
    throw Error("this would draw " + std::to_string(pictures.size()) + " pictures, more than --max-pictures " +
                std::to_string(options.max_pictures) + "; choose fewer with --line, --layer or --head, or raise " +
                "--max-pictures");
  return pictures;
}

std::string draw_picture(const Picture& p, const PicturePlanOptions& options) {
  if (options.style == PictureStyle::heatmap)
    return heatmap_svg(*p.record, select_matrix(*p.record, options.kind, p.layer, p.heads[0]));
  if (options.style == PictureStyle::grid) return head_grid_svg(*p.record, options.kind, p.layer);
  LinesOptions lines;
  lines.heads = p.heads;
  lines.query = options.word;
  if (options.cutoff) lines.cutoff = *options.cutoff;
  return lines_svg(*p.record, options.kind, p.layer, lines);
}

}  // namespace attn::inspect
