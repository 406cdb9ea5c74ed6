#include "data/bible_corpus.h"

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <unordered_map>

#include "core/atomic_file.h"
#include "core/error.h"
#include "data/osis_text.h"

namespace attn::data {
namespace {

constexpr std::array kSplits = {CorpusSplit::train, CorpusSplit::dev, CorpusSplit::test};

// A module's verses, cleaned, looked up by OSIS id.
struct ModuleVerses {
  SwordBible bible;  // markup dropped once parsed
  std::vector<OsisVerse> parsed;
  std::unordered_map<std::string, std::size_t> index_of_id;

  const OsisVerse* find(const std::string& osis_id) const {
    const auto found = index_of_id.find(osis_id);
    return found == index_of_id.end() ? nullptr : &parsed[found->second];
  }
};

std::size_t count_words(std::string_view text) {
  return text.empty() ? 0 : static_cast<std::size_t>(std::count(text.begin(), text.end(), ' ')) + 1;
}

// The gold alignment indexes words by their place in the text: one entry per word, always.
void check_word_numbers(const OsisVerse& verse, const std::string& module, const std::string& osis_id) {
  if (verse.word_strong_numbers.size() != count_words(verse.text)) {
    throw Error(module + " " + osis_id + ": " + std::to_string(verse.word_strong_numbers.size()) +
                " per-word Strong's entries for " + std::to_string(count_words(verse.text)) + " words");
  }
}

bool has_strong_numbers(const ModuleVerses& module) {
  return std::any_of(module.parsed.begin(), module.parsed.end(),
                     [](const OsisVerse& v) { return !v.strong_numbers.empty(); });
}

// The first English and the first Spanish module with Strong's tags, if there are both.
std::optional<BibleGoldPair> find_gold_pair(const std::vector<ModuleVerses>& modules,
                                            const std::vector<BibleModuleChoice>& choices) {
  std::optional<std::size_t> english, spanish;
  for (std::size_t m = 0; m < modules.size(); ++m) {
    const std::string& language = modules[m].bible.language;
    if (language == "en" && !english && has_strong_numbers(modules[m])) english = m;
    if (language == "es" && !spanish && has_strong_numbers(modules[m])) spanish = m;
  }
  if (!english || !spanish) return std::nullopt;
  return BibleGoldPair{*english, *spanish, choices[*english].suffix + "-" + choices[*spanish].suffix};
}

ModuleVerses read_module(const SwordLibrary& library, const std::string& name) {
  ModuleVerses module{library.read_bible(name), {}, {}};
  module.parsed.reserve(module.bible.verses.size());
  for (std::size_t i = 0; i < module.bible.verses.size(); ++i) {
    SwordVerse& verse = module.bible.verses[i];
    module.parsed.push_back(parse_osis_verse(verse.markup));
    check_word_numbers(module.parsed.back(), name, verse.osis_id);
    module.index_of_id.emplace(verse.osis_id, i);
    verse.markup = std::string();
  }
  return module;
}

std::size_t count_characters(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

VerseFeatures features_of(const OsisVerse& verse, VerseFeatureKind kind) {
  return kind == VerseFeatureKind::words ? word_features(verse.text) : strong_number_features(verse.strong_numbers);
}

// Compares one module with the pivot over every verse both have text for.
BibleAlignment align_with_pivot(const ModuleVerses& pivot, const ModuleVerses& other) {
  BibleAlignment alignment;
  alignment.pivot = pivot.bible.abbreviation;
  alignment.other = other.bible.abbreviation;
  alignment.features =
      pivot.bible.language == other.bible.language ? VerseFeatureKind::words : VerseFeatureKind::strong_numbers;
  std::vector<AlignedVerse> verses;
  for (std::size_t i = 0; i < pivot.bible.verses.size(); ++i) {
    const OsisVerse& mine = pivot.parsed[i];
    const OsisVerse* theirs = other.find(pivot.bible.verses[i].osis_id);
    if (mine.text.empty() || !theirs || theirs->text.empty()) continue;
    verses.push_back({pivot.bible.verses[i].osis_id, features_of(mine, alignment.features),
                      features_of(*theirs, alignment.features), count_characters(mine.text),
                      count_characters(theirs->text)});
    alignment.osis_ids.push_back(pivot.bible.verses[i].osis_id);
  }
  alignment.judgements = judge_alignment(verses, alignment_thresholds(alignment.features));
  return alignment;
}

std::string drop_reason(const BibleAlignment& alignment, Misalignment kind) {
  std::string reason = alignment.pivot + "/" + alignment.other + " ";
  if (kind == Misalignment::low_similarity) {
    reason += alignment.features == VerseFeatureKind::words ? "word " : "Strong's ";
  }
  return reason + std::string(misalignment_name(kind));
}

void count_drop(std::vector<BibleDropCount>& dropped, const std::string& reason) {
  auto found = std::find_if(dropped.begin(), dropped.end(), [&](const auto& d) { return d.reason == reason; });
  if (found == dropped.end()) found = dropped.insert(dropped.end(), {reason, 0});
  ++found->verses;
}

bool is_plain_suffix(std::string_view suffix) {
  return !suffix.empty() && suffix != "ids" && std::all_of(suffix.begin(), suffix.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

}  // namespace

std::vector<BibleModuleChoice> default_bible_modules() {
  return {{"kjv", "engKJV2006eb"}, {"web", "engWEB2015eb"}, {"es", "spaRV1909eb"}};
}

BibleModuleChoice parse_bible_module_choice(std::string_view text) {
  const std::size_t equals = text.find('=');
  BibleModuleChoice choice;
  if (equals == std::string_view::npos) {
    choice.module = std::string(text);
    std::transform(text.begin(), text.end(), std::back_inserter(choice.suffix),
                   [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; });
  } else {
    choice.suffix = std::string(text.substr(0, equals));
    choice.module = std::string(text.substr(equals + 1));
  }
  if (choice.module.empty() || !is_plain_suffix(choice.suffix)) {
    throw Error("bad module choice \"" + std::string(text) +
                "\": expected SUFFIX=MODULE such as kjv=engKJV2006eb, with a suffix of letters, digits, _ or - "
                "(and not \"ids\")");
  }
  return choice;
}

std::size_t BibleCorpus::dropped_total() const {
  std::size_t total = 0;
  for (const auto& d : dropped) total += d.verses;
  return total;
}

std::size_t BibleCorpus::count(CorpusSplit split) const {
  return static_cast<std::size_t>(
      std::count_if(verses.begin(), verses.end(), [&](const BibleVerse& v) { return v.split == split; }));
}

BibleCorpus build_bible_corpus(const SwordLibrary& library, const std::vector<BibleModuleChoice>& choices) {
  if (choices.empty()) throw Error("no modules to build the Bible corpus from");
  for (std::size_t i = 0; i < choices.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (choices[i].suffix == choices[j].suffix) throw Error("two modules share the file suffix " + choices[i].suffix);
    }
  }
  std::vector<ModuleVerses> modules;
  for (const auto& choice : choices) modules.push_back(read_module(library, choice.module));
  const ModuleVerses& pivot = modules.front();

  BibleCorpus corpus;
  corpus.gold_pair = find_gold_pair(modules, choices);
  for (std::size_t m = 0; m < modules.size(); ++m) {
    const SwordBible& bible = modules[m].bible;
    BibleModuleStatistics statistics{choices[m], bible.abbreviation, bible.language, bible.versification};
    statistics.verses = static_cast<std::size_t>(std::count_if(modules[m].parsed.begin(), modules[m].parsed.end(),
                                                               [](const OsisVerse& v) { return !v.text.empty(); }));
    corpus.modules.push_back(std::move(statistics));
  }
  for (std::size_t m = 1; m < modules.size(); ++m) corpus.alignments.push_back(align_with_pivot(pivot, modules[m]));
  // Where each alignment judged each pivot id, to look verdicts up while joining.
  std::vector<std::unordered_map<std::string_view, const VerseJudgement*>> verdicts(corpus.alignments.size());
  for (std::size_t a = 0; a < corpus.alignments.size(); ++a) {
    const BibleAlignment& alignment = corpus.alignments[a];
    for (std::size_t i = 0; i < alignment.osis_ids.size(); ++i) {
      verdicts[a].emplace(alignment.osis_ids[i], &alignment.judgements[i]);
    }
  }

  corpus.pivot_verses = pivot.bible.verses.size();
  for (const SwordVerse& pivot_verse : pivot.bible.verses) {
    BibleVerse verse{pivot_verse.osis_id, split_of_verse(pivot_verse.osis_id), {}, {}};
    std::vector<const OsisVerse*> parsed;
    for (std::size_t m = 0; m < modules.size(); ++m) {
      const OsisVerse* found = modules[m].find(pivot_verse.osis_id);
      parsed.push_back(found);
      if (!found) {
        ++corpus.modules[m].missing;
      } else if (found->text.empty()) {
        ++corpus.modules[m].empty;
      } else {
        verse.texts.push_back(found->text);
      }
    }
    if (verse.texts.size() != modules.size()) {
      ++corpus.skipped;
      continue;
    }
    ++corpus.joined;
    std::optional<std::string> drop;
    for (std::size_t a = 0; a < corpus.alignments.size() && !drop; ++a) {
      const VerseJudgement* judgement = verdicts[a].at(pivot_verse.osis_id);
      if (judgement->verdict != Misalignment::none) drop = drop_reason(corpus.alignments[a], judgement->verdict);
    }
    if (drop) {
      count_drop(corpus.dropped, *drop);
      continue;
    }
    if (corpus.gold_pair) {
      verse.gold = align_by_strong_numbers(parsed[corpus.gold_pair->source]->word_strong_numbers,
                                           parsed[corpus.gold_pair->target]->word_strong_numbers);
    }
    for (std::size_t m = 0; m < modules.size(); ++m) {
      corpus.modules[m].kept_words += count_words(verse.texts[m]);
      corpus.modules[m].kept_characters += count_characters(verse.texts[m]);
    }
    corpus.verses.push_back(std::move(verse));
  }
  std::stable_sort(corpus.dropped.begin(), corpus.dropped.end(),
                   [](const BibleDropCount& a, const BibleDropCount& b) { return a.verses > b.verses; });
  return corpus;
}

void write_bible_corpus(const BibleCorpus& corpus, const std::filesystem::path& out_dir) {
  std::filesystem::create_directories(out_dir);
  // files[split][m] for module m, then the ids, then the gold and the tagged words if there is a
  // gold pair.
  const std::size_t ids = corpus.modules.size();
  std::vector<std::vector<std::unique_ptr<AtomicFileWriter>>> files(kSplits.size());
  for (CorpusSplit split : kSplits) {
    auto& writers = files[static_cast<std::size_t>(split)];
    const std::string stem(split_name(split));
    for (const auto& module : corpus.modules) {
      writers.push_back(std::make_unique<AtomicFileWriter>(out_dir / (stem + "." + module.choice.suffix)));
    }
    writers.push_back(std::make_unique<AtomicFileWriter>(out_dir / (stem + ".ids")));
    if (corpus.gold_pair) {
      const std::string pair = stem + "." + corpus.gold_pair->name;
      writers.push_back(std::make_unique<AtomicFileWriter>(out_dir / (pair + ".gold")));
      writers.push_back(std::make_unique<AtomicFileWriter>(out_dir / (pair + ".tagged")));
    }
  }
  for (const BibleVerse& verse : corpus.verses) {
    auto& writers = files[static_cast<std::size_t>(verse.split)];
    for (std::size_t m = 0; m < verse.texts.size(); ++m) writers[m]->stream() << verse.texts[m] << '\n';
    writers[ids]->stream() << verse.osis_id << '\n';
    if (corpus.gold_pair) {
      writers[ids + 1]->stream() << gold_line(verse.gold) << '\n';
      writers[ids + 2]->stream() << tagged_line(verse.gold) << '\n';
    }
  }
  for (auto& writers : files) {
    for (auto& writer : writers) writer->commit();
  }
}

}  // namespace attn::data
