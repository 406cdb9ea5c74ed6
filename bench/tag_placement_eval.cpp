// How well inline tags land on the right words (issue 63's target): kAbout below says how it is
// measured (tag_placement_eval --help prints it).
//
//   build/bench/tag_placement_eval --model runs/en-es/model --source corpus/test.kjv
//     --target corpus/test.es --gold corpus/test.kjv-es.gold [--verses 1042] [--seed 1]
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bench_cli.h"
#include "core/error.h"
#include "core/text_file.h"
#include "decode/attention_records.h"
#include "decode/forced_decoding.h"
#include "decode/model_directory.h"
#include "document/document.h"
#include "document/sentence_unit.h"
#include "inspect/pharaoh.h"
#include "inspect/word_alignment.h"

namespace {

using namespace attn;
using document::Segment;
using document::Span;

const char* const kAbout = R"(tag_placement_eval: how well inline tags land on the right words (issue 63's target).
Test verses with one to three tags around source words that the corpus's gold alignment (Strong's
numbers) links, each verse's reference translation forced through the model to read its
cross-attention, the tags placed on the reference's words by attn's placement
(document/sentence_unit.h) and by the baseline that keeps each tag's relative position, and each
placed tag judged against the gold: exact (it wraps the hull of the target words the gold links to
the wrapped source words) and overlap (it wraps at least one of them). Every output is also checked
for a well-formed tree with each tag once.
Example: tag_placement_eval --model runs/en-es/model --source corpus/test.kjv --target corpus/test.es
         --gold corpus/test.kjv-es.gold)";

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open");
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

struct Word {
  std::size_t begin, end;
};
std::vector<Word> words_of(const std::string& s) {
  std::vector<Word> w;
  for (std::size_t i = 0; i < s.size();) {
    if (s[i] == ' ') {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    w.push_back({i, j});
    i = j;
  }
  return w;
}

// The target word a byte offset of the placed text falls in (counting the spaces before it).
int word_at(const std::string& text, std::size_t at) {
  int words = 0;
  bool in_word = false;
  for (std::size_t i = 0; i < at && i < text.size(); ++i) {
    if (text[i] != ' ' && !in_word) ++words;
    in_word = text[i] != ' ';
  }
  return in_word ? words - 1 : words;  // inside a word: that word; at a space: the next
}

struct Tally {
  int tags = 0, exact = 0, overlap = 0, well_formed = 0, outputs = 0;
};

void judge(const Segment& out, const std::vector<std::set<int>>& gold_targets, std::size_t spans, Tally& t,
           std::map<std::string, Tally>& by_case, const std::string& kind) {
  Tally& c = by_case[kind];
  ++t.outputs, ++c.outputs;
  bool ok = out.spans.size() == spans;
  try {
    document::check_segment(out, 0);
  } catch (const Error&) {
    ok = false;
  }
  const std::string html = document::render_segment(out, document::Escape::html);
  for (std::size_t k = 0; k < spans; ++k) {
    const std::string open = "<t" + std::to_string(k) + ">", close = "</t" + std::to_string(k) + ">";
    std::size_t n = 0;
    for (auto p = html.find(open); p != std::string::npos; p = html.find(open, p + 1)) ++n;
    ok = ok && n == 1 && html.find(close) != std::string::npos && html.find(close) > html.find(open);
  }
  t.well_formed += ok, c.well_formed += ok;
  for (std::size_t k = 0; k < out.spans.size() && k < spans; ++k) {
    const Span& s = out.spans[k];
    // Which source span this is: by its markup.
    const std::size_t which = static_cast<std::size_t>(std::stoi(s.open.substr(2)));
    const std::set<int>& g = gold_targets[which];
    ++t.tags, ++c.tags;
    if (s.begin >= s.end || g.empty()) continue;
    const int first = word_at(out.text, s.begin), last = word_at(out.text, s.end - 1);
    const bool exact = first == *g.begin() && last == *g.rbegin();
    bool overlap = false;
    for (int w = first; w <= last; ++w) overlap |= g.count(w) > 0;
    t.exact += exact, c.exact += exact;
    t.overlap += overlap, c.overlap += overlap;
  }
}

void print(const std::string& name, const Tally& t) {
  std::printf("| %s | %d | %.1f%% | %.1f%% | %.1f%% |\n", name.c_str(), t.tags, 100.0 * t.well_formed / t.outputs,
              100.0 * t.exact / t.tags, 100.0 * t.overlap / t.tags);
}

int run(const std::string& model_dir, const std::string& source, const std::string& target, const std::string& gold,
        int verses, int seed) {
  LoadedModel loaded = load_model_directory(model_dir, "fp32");
  const auto src = lines_of(source), tgt = lines_of(target);
  const auto links = inspect::read_pharaoh_file(gold);
  if (src.size() != tgt.size() || src.size() != links.size())
    throw Error("the source, target and gold differ in lines");
  std::mt19937 rng(static_cast<unsigned>(seed));
  const ModelConfig& config = loaded.model->config();
  AttentionSelection selection;
  selection.layers = {inspect::default_alignment_layer(config.decoder_layers)};
  inspect::AlignmentOptions align;
  align.layer = selection.layers[0];

  Tally attn_total, base_total;
  std::map<std::string, Tally> attn_case, base_case;
  const std::size_t n = std::min<std::size_t>(src.size(), static_cast<std::size_t>(verses));
  for (std::size_t v = 0; v < n; ++v) {
    const std::vector<Word> sw = words_of(src[v]);
    std::map<int, std::set<int>> linked;  // source word -> gold target words (sure and possible)
    for (const auto& l : links[v].possible) linked[l.source].insert(l.target);
    std::vector<int> candidates;
    for (const auto& [s, t] : linked)
      if (s < static_cast<int>(sw.size())) candidates.push_back(s);
    if (candidates.empty()) continue;
    // The tags: [first word, last word, parent], by case.
    struct Tag {
      int first, last, parent;
    };
    std::vector<Tag> tags;
    std::string kind;
    const auto pick = [&] { return candidates[rng() % candidates.size()]; };
    const auto linked_pair = [&]() -> int {  // k with k and k + 1 both linked, or -1
      std::vector<int> ks;
      for (int k : candidates)
        if (linked.count(k + 1)) ks.push_back(k);
      return ks.empty() ? -1 : ks[rng() % ks.size()];
    };
    switch (v % 4) {
      case 0:
        kind = "one tag";
        tags.push_back({pick(), -1, -1});
        tags.back().last = tags.back().first;
        break;
      case 1: {
        kind = "adjacent tags";
        const int k = linked_pair();
        if (k < 0) {
          kind = "one tag", tags.push_back({pick(), -1, -1}), tags.back().last = tags.back().first;
        } else {
          tags.push_back({k, k, -1});
          tags.push_back({k + 1, k + 1, -1});
        }
        break;
      }
      case 2: {
        kind = "nested tags";
        const int k = pick();
        const int a = std::max(0, k - 1), b = std::min(static_cast<int>(sw.size()) - 1, k + 1);
        tags.push_back({a, b, -1});
        tags.push_back({k, k, 0});
        break;
      }
      default: {
        kind = "three tags";
        std::vector<int> c = candidates;
        std::shuffle(c.begin(), c.end(), rng);
        c.resize(std::min<std::size_t>(3, c.size()));
        std::sort(c.begin(), c.end());
        for (int k : c) tags.push_back({k, k, -1});
        if (tags.size() < 2) kind = "one tag";
      }
    }
    Segment seg;
    seg.text = src[v];
    std::vector<std::set<int>> gold_targets;
    for (std::size_t k = 0; k < tags.size(); ++k) {
      Span s;
      s.kind = Span::Kind::element;
      s.begin = sw[static_cast<std::size_t>(tags[k].first)].begin;
      s.end = sw[static_cast<std::size_t>(tags[k].last)].end;
      s.open = "<t" + std::to_string(k) + ">";
      s.close = "</t" + std::to_string(k) + ">";
      s.parent = tags[k].parent;
      seg.spans.push_back(s);
      std::set<int> g;
      for (int w = tags[k].first; w <= tags[k].last; ++w)
        if (linked.count(w)) g.insert(linked[w].begin(), linked[w].end());
      gold_targets.push_back(g);
    }
    std::vector<int> inner(seg.spans.size());
    for (std::size_t k = 0; k < inner.size(); ++k) inner[k] = static_cast<int>(k);
    const document::SentenceUnit unit = document::prepare_unit(seg, {0, seg.text.size()}, inner, true);
    // The reference forced through the model, its cross-attention read as word links.
    const auto sid = loaded.vocabulary->encode(unit.model_text), tid = loaded.vocabulary->encode(tgt[v]);
    auto forced = force_decode(*loaded.model, {sid}, {tid}, 1, &selection);
    const auto record =
        forced_decoding_record(*loaded.vocabulary, 1, unit.model_text, tgt[v], sid, tid, std::move(forced[0]));
    document::SentenceTranslation t{tgt[v], {}, false};
    for (const auto& l : inspect::align_record(record, align)) t.links.push_back({l.source, l.target});
    judge(document::place_unit(unit, t), gold_targets, seg.spans.size(), attn_total, attn_case, kind);
    document::SentenceTranslation no_links{tgt[v], {}, false};
    judge(document::place_unit(unit, no_links), gold_targets, seg.spans.size(), base_total, base_case, kind);
  }
  std::printf(
      "| placement | tags | outputs well-formed, each tag once | exact span | overlap |\n|---|---:|---:|---:|---:|\n");
  print("attn (alignment from cross-attention)", attn_total);
  for (const auto& [k, t] : attn_case) print("  " + k, t);
  print("baseline (relative position)", base_total);
  for (const auto& [k, t] : base_case) print("  " + k, t);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{kAbout, "tag_placement_eval"};
  std::string model_dir, source, target, gold;
  int verses = 1 << 30, seed = 1;
  app.add_option("--model", model_dir, "the model directory")->required();
  app.add_option("--source", source, "the test source, one verse a line")->required();
  app.add_option("--target", target, "its reference translation")->required();
  app.add_option("--gold", gold, "the gold alignment of source and target (Pharaoh format)")->required();
  app.add_option("--verses", verses, "at most this many verses (default: all)")->check(attn::bench::at_least(1));
  app.add_option("--seed", seed, "the seed of the random choice of tags")->capture_default_str();
  return attn::bench::run_main(app, argc, argv, [&] { return run(model_dir, source, target, gold, verses, seed); });
}
