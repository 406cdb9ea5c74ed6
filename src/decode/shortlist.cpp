#include "decode/shortlist.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string_view>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/sha256.h"
#include "core/special_tokens.h"
#include "core/text_file.h"
#include "inspect/ibm_model1.h"

namespace attn {
namespace {

constexpr std::string_view kMagic = "attn shortlist 1";

std::vector<std::string> as_words(const std::vector<std::int32_t>& ids) {
  std::vector<std::string> words;
  words.reserve(ids.size());
  for (std::int32_t id : ids) words.push_back(std::to_string(id));
  return words;
}

// The words of a line, split at single spaces.
std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  while (!line.empty()) {
    const auto space = line.find(' ');
    out.push_back(line.substr(0, space));
    if (space == std::string_view::npos) break;
    line.remove_prefix(space + 1);
  }
  return out;
}

template <typename T>
bool parse_number(std::string_view text, T& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

std::string quoted(std::string_view text) {
  std::string out(1, '"');
  out.append(text);
  out.push_back('"');
  return out;
}

}  // namespace

std::string vocabulary_fingerprint(const data::Vocabulary& vocabulary) {
  Sha256 hash;
  for (std::int32_t id = 0; id < vocabulary.size(); ++id) hash.update(vocabulary.piece(id)).update("\n", 1);
  return to_hex(hash.finish());
}

namespace {

void check_ids(const std::vector<std::vector<std::int32_t>>& lines, std::int32_t size, const char* side) {
  for (const auto& line : lines)
    for (std::int32_t id : line)
      if (id < 0 || id >= size)
        throw Error(std::string("shortlist: ") + side + " id " + std::to_string(id) + " outside the vocabulary");
}

}  // namespace

void check_shortlist_options(const ShortlistOptions& options) {
  if (options.per_source < 1 || options.frequent < 0 || options.iterations < 0)
    throw Error("shortlist: per_source must be >= 1, frequent and iterations >= 0");
}

Shortlist Shortlist::from_table(const data::Vocabulary& vocabulary,
                                const std::vector<std::vector<std::int32_t>>& target, LexicalTable table,
                                const ShortlistOptions& options) {
  check_shortlist_options(options);
  if (options.method == ShortlistMethod::attention && options.attention_layer < 0)
    throw Error("shortlist: a table from attention names the layer it read (attention_layer >= 0)");
  const std::int32_t size = vocabulary.size();
  if (table.size() != static_cast<std::size_t>(size))
    throw Error("shortlist: a lexical table of " + std::to_string(table.size()) +
                " source pieces for a vocabulary of " + std::to_string(size));
  check_ids(target, size, "target");
  Shortlist s;
  s.options_ = options;
  s.vocabulary_fingerprint_ = vocabulary_fingerprint(vocabulary);

  std::vector<std::int64_t> counts(static_cast<std::size_t>(size), 0);
  for (const auto& line : target)
    for (std::int32_t id : line) ++counts[static_cast<std::size_t>(id)];
  std::vector<std::int32_t> by_count;
  for (std::int32_t id = 0; id < size; ++id)
    if (counts[static_cast<std::size_t>(id)] > 0) by_count.push_back(id);
  std::stable_sort(by_count.begin(), by_count.end(), [&](std::int32_t a, std::int32_t b) {
    return counts[static_cast<std::size_t>(a)] > counts[static_cast<std::size_t>(b)];
  });
  by_count.resize(std::min<std::size_t>(by_count.size(), static_cast<std::size_t>(options.frequent)));
  s.frequent_ = std::move(by_count);

  for (auto& list : table) {
    for (const auto& c : list)
      if (c.target < 0 || c.target >= size || !(c.probability > 0 && c.probability <= 1))
        throw Error("shortlist: a lexical table entry outside the vocabulary or not a probability in (0, 1]");
    std::sort(list.begin(), list.end(), [](const ShortlistCandidate& a, const ShortlistCandidate& b) {
      return a.probability != b.probability ? a.probability > b.probability : a.target < b.target;
    });
    if (list.size() > static_cast<std::size_t>(options.per_source))
      list.resize(static_cast<std::size_t>(options.per_source));
  }
  s.candidates_ = std::move(table);
  return s;
}

Shortlist Shortlist::build(const data::Vocabulary& vocabulary, const std::vector<std::vector<std::int32_t>>& source,
                           const std::vector<std::vector<std::int32_t>>& target, const ShortlistOptions& options) {
  if (source.size() != target.size())
    throw Error("shortlist: " + std::to_string(source.size()) + " source lines but " + std::to_string(target.size()) +
                " target lines");
  check_shortlist_options(options);
  const std::int32_t size = vocabulary.size();
  check_ids(source, size, "source");
  check_ids(target, size, "target");
  std::vector<std::vector<std::string>> source_words, target_words;
  source_words.reserve(source.size());
  target_words.reserve(target.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    source_words.push_back(as_words(source[i]));
    target_words.push_back(as_words(target[i]));
  }
  LexicalTable table(static_cast<std::size_t>(size));
  const auto model = inspect::IbmModel1::train(source_words, target_words, {options.iterations});
  model.for_each_translation([&](const std::string& e, const std::string& f, double t) {
    const auto p = static_cast<float>(t);  // a t below float's range is no candidate
    if (p > 0) table[static_cast<std::size_t>(std::stoi(e))].push_back({std::stoi(f), p});
  });
  ShortlistOptions ibm1 = options;
  ibm1.method = ShortlistMethod::ibm1;
  return from_table(vocabulary, target, std::move(table), ibm1);
}

TokenisedPairs read_parallel_text(const data::Vocabulary& vocabulary, const std::filesystem::path& source,
                                  const std::filesystem::path& target) {
  std::vector<std::string> source_lines = read_text_lines(source), target_lines = read_text_lines(target);
  if (source_lines.size() != target_lines.size())
    throw Error(source.string() + " has " + std::to_string(source_lines.size()) + " lines but " + target.string() +
                " has " + std::to_string(target_lines.size()) + ": a parallel text has one line per sentence pair");
  std::vector<std::string> kept_source, kept_target;
  for (std::size_t i = 0; i < source_lines.size(); ++i)
    if (!source_lines[i].empty() && !target_lines[i].empty()) {
      kept_source.push_back(std::move(source_lines[i]));
      kept_target.push_back(std::move(target_lines[i]));
    }
  if (kept_source.empty()) throw Error(source.string() + " / " + target.string() + ": no sentence pair to learn from");
  return {vocabulary.encode_lines(kept_source), vocabulary.encode_lines(kept_target)};
}

Shortlist build_shortlist(const data::Vocabulary& vocabulary, const std::filesystem::path& source,
                          const std::filesystem::path& target, const ShortlistOptions& options) {
  const TokenisedPairs pairs = read_parallel_text(vocabulary, source, target);
  return Shortlist::build(vocabulary, pairs.source, pairs.target, options);
}

const std::vector<ShortlistCandidate>& Shortlist::candidates(std::int32_t source) const {
  ATTN_CHECK(source >= 0 && source < vocabulary_size(), "shortlist: source id outside the vocabulary");
  return candidates_[static_cast<std::size_t>(source)];
}

std::vector<std::int32_t> Shortlist::select(const std::vector<std::vector<std::int32_t>>& sources, int k,
                                            int width_multiple) const {
  k = std::clamp(k, 0, options_.per_source);
  std::vector<char> in(candidates_.size(), 0);
  std::size_t count = 0;
  const auto take = [&](std::int32_t id) {
    char& flag = in[static_cast<std::size_t>(id)];
    count += flag == 0;
    flag = 1;
  };
  for (std::int32_t id : {kPadId, kUnkId, kBosId, kEosId})
    if (id < vocabulary_size()) take(id);
  for (std::int32_t id : frequent_) take(id);
  for (const auto& line : sources)
    for (std::int32_t piece : line) {
      const auto& list = candidates(piece);
      for (std::size_t j = 0; j < std::min(list.size(), static_cast<std::size_t>(k)); ++j) take(list[j].target);
    }
  if (width_multiple > 1) {
    const std::size_t multiple = static_cast<std::size_t>(width_multiple);
    const std::size_t width = std::min(in.size(), (count + multiple - 1) / multiple * multiple);
    for (std::size_t j = static_cast<std::size_t>(k); j < static_cast<std::size_t>(options_.per_source); ++j) {
      bool any = false;
      for (const auto& line : sources)
        for (std::int32_t piece : line) {
          const auto& list = candidates(piece);
          if (j >= list.size() || count >= width) continue;
          any = true;
          take(list[j].target);
        }
      if (!any || count >= width) break;
    }
    for (std::size_t id = 0; id < in.size() && count < width; ++id) take(static_cast<std::int32_t>(id));
  }
  std::vector<std::int32_t> ids;
  ids.reserve(count);
  for (std::size_t id = 0; id < in.size(); ++id)
    if (in[id]) ids.push_back(static_cast<std::int32_t>(id));
  return ids;
}

void Shortlist::save(const std::filesystem::path& path) const {
  std::ostringstream out;
  out << kMagic << "\n"
      << "vocabulary " << vocabulary_fingerprint_ << " " << candidates_.size() << "\n"
      << "per_source " << options_.per_source << " frequent " << options_.frequent;
  if (options_.method == ShortlistMethod::attention)
    out << " attention_layer " << options_.attention_layer << "\n";
  else
    out << " iterations " << options_.iterations << "\n";
  out << "frequent";
  for (std::int32_t id : frequent_) out << " " << id;
  out << "\n";
  char number[32];
  for (std::size_t e = 0; e < candidates_.size(); ++e) {
    if (candidates_[e].empty()) continue;
    out << e;
    for (const auto& c : candidates_[e]) {
      std::snprintf(number, sizeof number, "%.6g", static_cast<double>(c.probability));
      out << " " << c.target << ":" << number;
    }
    out << "\n";
  }
  std::string text = out.str();
  text += "sha256 " + sha256_hex(text) + "\n";
  write_file_atomic(path, text);
}

Shortlist Shortlist::load(const std::filesystem::path& path, const data::Vocabulary& vocabulary) {
  const std::string name = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_in(name, "cannot open");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.compare(0, kMagic.size(), kMagic) != 0 || text.size() <= kMagic.size() || text[kMagic.size()] != '\n')
    throw_in(name, "not an attn shortlist (its first line is not \"" + std::string(kMagic) + "\")");
  // The last line holds the checksum of everything before it.
  if (text.back() != '\n') throw_in(name, "truncated: no checksum line at the end");
  const auto last = text.rfind('\n', text.size() - 2);
  if (last == std::string::npos) throw_in(name, "truncated: no checksum line at the end");
  const std::string_view body(text.data(), last + 1);
  const std::string_view sum_line(text.data() + last + 1, text.size() - last - 2);
  if (sum_line.substr(0, 7) != "sha256 ") throw_in(name, "truncated: no checksum line at the end");
  if (sum_line.substr(7) != sha256_hex(body))
    throw_in(name, "corrupted: the contents do not match the SHA-256 checksum of its last line");

  Shortlist s;
  std::size_t line_number = 0, at = 0;
  std::string_view line;
  const auto next = [&] {
    const auto end = body.find('\n', at);
    if (end == std::string_view::npos) return false;
    line = body.substr(at, end - at);
    at = end + 1;
    ++line_number;
    return true;
  };
  const auto bad = [&](const std::string& problem) {
    throw Error(name + ":" + std::to_string(line_number) + ": " + problem);
  };
  next();  // the magic line
  std::int64_t size = 0;
  if (!next()) bad("missing the vocabulary line");
  auto f = fields(line);
  if (f.size() != 3 || f[0] != "vocabulary" || !parse_number(f[2], size) || size < 4 || size > (1 << 24))
    bad("expected \"vocabulary FINGERPRINT SIZE\"");
  s.vocabulary_fingerprint_ = std::string(f[1]);
  const std::string expected = vocabulary_fingerprint(vocabulary);
  if (s.vocabulary_fingerprint_ != expected || size != vocabulary.size())
    throw_in(name, "built for another vocabulary (" + std::to_string(size) + " pieces, fingerprint " +
                       s.vocabulary_fingerprint_.substr(0, 16) + "...) than the model's (" +
                       std::to_string(vocabulary.size()) + " pieces, " + expected.substr(0, 16) +
                       "...): build it again with `attn shortlist build --model` for this model");
  if (!next()) bad("missing the options line");
  f = fields(line);
  if (f.size() == 6 && f[4] == "attention_layer") {
    s.options_.method = ShortlistMethod::attention;
    if (!parse_number(f[5], s.options_.attention_layer) || s.options_.attention_layer < 0) f.clear();
  } else if (f.size() == 6 && f[4] == "iterations") {
    if (!parse_number(f[5], s.options_.iterations) || s.options_.iterations < 0) f.clear();
  } else {
    f.clear();
  }
  if (f.size() != 6 || f[0] != "per_source" || !parse_number(f[1], s.options_.per_source) || f[2] != "frequent" ||
      !parse_number(f[3], s.options_.frequent) || s.options_.per_source < 1 || s.options_.frequent < 0)
    bad("expected \"per_source N frequent N iterations N\" or \"per_source N frequent N attention_layer L\"");
  const auto id_in_range = [&](std::string_view text, std::int32_t& id) {
    if (!parse_number(text, id) || id < 0 || id >= size) bad(quoted(text) + " is not a piece id");
  };
  if (!next()) bad("missing the frequent line");
  f = fields(line);
  if (f.empty() || f[0] != "frequent") bad("expected \"frequent ID...\"");
  if (f.size() - 1 > static_cast<std::size_t>(s.options_.frequent))
    bad("more frequent pieces than the options line's " + std::to_string(s.options_.frequent));
  for (std::size_t i = 1; i < f.size(); ++i) id_in_range(f[i], s.frequent_.emplace_back());
  s.candidates_.assign(static_cast<std::size_t>(size), {});
  std::int64_t previous = -1;
  while (next()) {
    if (line.empty()) bad("a blank line (each source piece's line holds its id and candidates)");
    f = fields(line);
    std::int32_t e = 0;
    id_in_range(f[0], e);
    if (e <= previous) bad("source ids must ascend, each once");
    previous = e;
    if (f.size() - 1 > static_cast<std::size_t>(s.options_.per_source))
      bad("more candidates than per_source " + std::to_string(s.options_.per_source));
    auto& list = s.candidates_[static_cast<std::size_t>(e)];
    for (std::size_t i = 1; i < f.size(); ++i) {
      const auto colon = f[i].find(':');
      ShortlistCandidate c;
      if (colon == std::string_view::npos) bad("expected TARGET:PROBABILITY, got " + quoted(f[i]));
      id_in_range(f[i].substr(0, colon), c.target);
      if (!parse_number(f[i].substr(colon + 1), c.probability) || !(c.probability > 0 && c.probability <= 1))
        bad(quoted(f[i].substr(colon + 1)) + " is not a probability in (0, 1]");
      list.push_back(c);
    }
  }
  return s;
}

}  // namespace attn
