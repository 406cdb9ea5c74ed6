#include "decode/attention_export.h"

#include <algorithm>
#include <sstream>

#include "core/error.h"
#include "core/special_tokens.h"
#include "data/vocabulary.h"

namespace attn {

std::string cache_key(const AttentionSelection& selection) {
  // Every member, by position: a member added to AttentionSelection stops this from compiling.
  const auto& [cross, decoder_self, encoder_self, layers, heads] = selection;
  std::ostringstream k;
  k << cross << decoder_self << encoder_self << " layers";
  for (int l : layers) k << ' ' << l;
  k << " heads";
  for (int h : heads) k << ' ' << h;
  return k.str();
}

inspect::AttentionKind attention_kind(nn::AttentionSite site) {
  switch (site) {
    case nn::AttentionSite::cross:
      return inspect::AttentionKind::cross;
    case nn::AttentionSite::decoder_self:
      return inspect::AttentionKind::decoder_self;
    case nn::AttentionSite::encoder_self:
      return inspect::AttentionKind::encoder_self;
  }
  return inspect::AttentionKind::cross;
}

bool AttentionSelection::wants(nn::AttentionSite site, int layer) const {
  const bool kind = site == nn::AttentionSite::cross          ? cross
                    : site == nn::AttentionSite::decoder_self ? decoder_self
                                                              : encoder_self;
  return kind && (layers.empty() || std::find(layers.begin(), layers.end(), layer) != layers.end());
}

void AttentionSelection::check(const ModelConfig& c) {
  if (!cross && !decoder_self && !encoder_self) throw Error("--attention-kinds: no kind of attention chosen");
  for (auto* list : {&layers, &heads}) {
    std::sort(list->begin(), list->end());
    list->erase(std::unique(list->begin(), list->end()), list->end());
  }
  // A layer number applies to every chosen kind: it must exist in each stack they come from.
  const bool decoder = cross || decoder_self;
  const int stack = decoder && encoder_self ? std::min(c.decoder_layers, c.encoder_layers)
                    : decoder               ? c.decoder_layers
                                            : c.encoder_layers;
  const std::string which = decoder && encoder_self ? "both stacks have"
                            : decoder               ? "the decoder has"
                                                    : "the encoder has";
  for (int l : layers)
    if (l < 0 || l >= stack)
      throw Error("--attention-layers: the model has no layer " + std::to_string(l) + " for the chosen kinds (" +
                  which + " " + std::to_string(stack) + ": 0-" + std::to_string(stack - 1) + ")");
  for (int h : heads)
    if (h < 0 || h >= c.heads)
      throw Error("--attention-heads: the model has no head " + std::to_string(h) + " (it has " +
                  std::to_string(c.heads) + ": 0-" + std::to_string(c.heads - 1) + ")");
}

std::vector<int> AttentionSelection::chosen_heads(int heads_in_model) const {
  if (!heads.empty()) return heads;
  std::vector<int> all(static_cast<std::size_t>(heads_in_model));
  for (int h = 0; h < heads_in_model; ++h) all[h] = h;
  return all;
}

namespace {
std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) parts.push_back(part);
  return parts;
}
}  // namespace

void parse_attention_kinds(const std::string& text, AttentionSelection& s) {
  s.cross = s.decoder_self = s.encoder_self = false;
  for (const std::string& part : split_commas(text)) {
    if (part == "all")
      s.cross = s.decoder_self = s.encoder_self = true;
    else if (part == "cross")
      s.cross = true;
    else if (part == "decoder_self")
      s.decoder_self = true;
    else if (part == "encoder_self")
      s.encoder_self = true;
    else
      throw Error("--attention-kinds: '" + part + "' is not one of cross, decoder_self, encoder_self, all");
  }
  if (!s.cross && !s.decoder_self && !s.encoder_self) throw Error("--attention-kinds: no kind of attention chosen");
}

std::vector<int> parse_index_list(const std::string& option, const std::string& text) {
  std::vector<int> out;
  if (text == "all") return out;
  if (text.empty() || text.back() == ',')
    throw Error(option + ": '" + text + "' is not a list of numbers from 0 (give e.g. 0,2, or all)");
  for (const std::string& part : split_commas(text)) {
    std::size_t used = 0;
    int value = -1;
    try {
      value = std::stoi(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (part.empty() || used != part.size() || value < 0)
      throw Error(option + ": '" + part + "' is not a number from 0 (give a comma-separated list, or all)");
    out.push_back(value);
  }
  return out;
}

AttentionRecorder::AttentionRecorder(Backend& backend, AttentionSelection selection, int heads)
    : backend_(backend), selection_(std::move(selection)), model_heads_(heads) {}

void AttentionRecorder::clear() {  // also begin_batch()
  tensors_.clear();
  step_ = -1;
}

void AttentionRecorder::record(nn::AttentionSite site, int layer, const nn::AttentionShape& s, const float* probs) {
  layers_seen_ = std::max(layers_seen_, layer + 1);
  if (!selection_.wants(site, layer)) return;
  Tensor& t = tensors_[{static_cast<int>(site), layer, step_}];
  t.shape = s;
  t.data.resize(static_cast<std::size_t>(s.probs_size()));
  backend_.copy_to_host(t.data.data(), probs, t.data.size() * sizeof(float));
}

const AttentionRecorder::Tensor& AttentionRecorder::tensor(nn::AttentionSite site, int layer, int step) const {
  const auto it = tensors_.find({static_cast<int>(site), layer, step});
  ATTN_CHECK(it != tensors_.end(), "attention of a step that was not recorded");
  return it->second;
}

std::vector<std::pair<nn::AttentionSite, int>> AttentionRecorder::kept() const {
  std::vector<std::pair<nn::AttentionSite, int>> out;
  for (auto site : {nn::AttentionSite::cross, nn::AttentionSite::decoder_self, nn::AttentionSite::encoder_self})
    for (int l = 0; l < layers_seen_; ++l)
      if (selection_.wants(site, l) &&
          tensors_.count({static_cast<int>(site), l, -1}) + tensors_.count({static_cast<int>(site), l, 0}) > 0)
        out.emplace_back(site, l);
  return out;
}

std::vector<inspect::AttentionMatrix> AttentionRecorder::hypothesis(int sentence, int source_length,
                                                                    const std::vector<std::int32_t>& step_rows) const {
  std::vector<inspect::AttentionMatrix> out;
  const int steps = static_cast<int>(step_rows.size());
  ATTN_CHECK(steps > 0, "attention of a hypothesis without steps (was the tap set before start()?)");
  for (const auto& [site, layer] : kept())
    for (int head : selection_.chosen_heads(model_heads_)) {
      inspect::AttentionMatrix m;
      m.kind = attention_kind(site);
      m.layer = layer;
      m.head = head;
      if (site == nn::AttentionSite::encoder_self) {
        const Tensor& t = tensor(site, layer, -1);
        ATTN_CHECK(sentence < t.shape.batch && source_length <= t.shape.keys, "encoder attention out of range");
        m.rows = m.cols = source_length;
        for (int q = 0; q < source_length; ++q) {
          const float* row = t.row(sentence, head, q);
          m.weights.insert(m.weights.end(), row, row + source_length);
        }
      } else {
        m.rows = steps;
        m.cols = site == nn::AttentionSite::cross ? source_length : steps;
        m.weights.assign(static_cast<std::size_t>(m.rows) * m.cols, 0.0f);
        for (int step = 0; step < steps; ++step) {
          const Tensor& t = tensor(site, layer, step);
          // Rows of one sentence are its queries (cross) or each row its own sequence (self).
          const int r = step_rows[step];
          ATTN_CHECK(r >= 0 && r < t.shape.batch * t.shape.queries &&
                         (site != nn::AttentionSite::cross || source_length <= t.shape.keys),
                     "attention row out of range");
          const float* row = t.row(r / t.shape.queries, head, r % t.shape.queries);
          const int keys = site == nn::AttentionSite::cross ? source_length : step + 1;
          std::copy(row, row + keys, m.weights.begin() + static_cast<std::ptrdiff_t>(step) * m.cols);
        }
      }
      out.push_back(std::move(m));
    }
  return out;
}

std::vector<inspect::AttentionMatrix> AttentionRecorder::forced(int sentence, int source_length,
                                                                int target_length) const {
  std::vector<inspect::AttentionMatrix> out;
  for (const auto& [site, layer] : kept())
    for (int head : selection_.chosen_heads(model_heads_)) {
      const Tensor& t = tensor(site, layer, -1);
      inspect::AttentionMatrix m;
      m.kind = attention_kind(site);
      m.layer = layer;
      m.head = head;
      m.rows = site == nn::AttentionSite::encoder_self ? source_length : target_length;
      m.cols = site == nn::AttentionSite::decoder_self ? target_length : source_length;
      ATTN_CHECK(sentence < t.shape.batch && m.rows <= t.shape.queries && m.cols <= t.shape.keys,
                 "forced attention out of range");
      for (int q = 0; q < m.rows; ++q) {
        const float* row = t.row(sentence, head, q);
        m.weights.insert(m.weights.end(), row, row + m.cols);
      }
      out.push_back(std::move(m));
    }
  return out;
}

inspect::AttentionRecord make_attention_record(const data::Vocabulary& vocabulary, std::int64_t line,
                                               std::string source, std::string target,
                                               const std::vector<std::int32_t>& source_ids,
                                               const std::vector<std::int32_t>& target_ids, double log_prob,
                                               double score, std::vector<inspect::AttentionMatrix> attention) {
  inspect::AttentionRecord r;
  r.line = line;
  r.source = std::move(source);
  r.target = std::move(target);
  for (std::int32_t id : source_ids) r.source_pieces.push_back(vocabulary.piece(id));
  r.source_pieces.push_back(vocabulary.piece(kEosId));
  for (std::int32_t id : target_ids) r.target_pieces.push_back(vocabulary.piece(id));
  r.target_pieces.push_back(vocabulary.piece(kEosId));
  r.log_prob = log_prob;
  r.score = score;
  r.attention = std::move(attention);
  return r;
}

inspect::AlignmentOptions resolve_alignment(const ModelConfig& config, const AttentionSelection& selection, int layer,
                                            const std::string& head, double threshold) {
  inspect::AlignmentOptions align;
  align.threshold = threshold;
  align.layer = layer < 0 ? inspect::default_alignment_layer(config.decoder_layers) : layer;
  if (align.layer >= config.decoder_layers)
    throw Error("--alignment-layer: the model has no decoder layer " + std::to_string(align.layer) + " (it has " +
                std::to_string(config.decoder_layers) + ")");
  align.head = inspect::kMeanOfHeads;
  if (head != "mean") {
    const std::vector<int> chosen = parse_index_list("--alignment-head", head);
    if (chosen.size() != 1 || chosen[0] >= config.heads)
      throw Error("--alignment-head: give one head from 0 to " + std::to_string(config.heads - 1) + ", or mean");
    align.head = chosen[0];
  }
  const auto has = [](const std::vector<int>& list, int x) {
    return list.empty() || std::find(list.begin(), list.end(), x) != list.end();
  };
  if (!selection.cross || !has(selection.layers, align.layer) ||
      (align.head == inspect::kMeanOfHeads ? !selection.heads.empty() : !has(selection.heads, align.head)))
    throw Error(
        "--alignment reads cross-attention layer " + std::to_string(align.layer) + ", " +
        (align.head == inspect::kMeanOfHeads ? std::string("every head") : "head " + std::to_string(align.head)) +
        ": --attention-kinds, --attention-layers and --attention-heads must include it");
  return align;
}

}  // namespace attn
