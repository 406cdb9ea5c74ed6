#pragma once
// The verse-aligned Bible corpus: the verses of several SWORD modules joined on their OSIS ids,
// cleaned of markup (osis_text.h), with misaligned verses dropped (verse_alignment.h), split into
// train/dev/test by id (corpus_split.h), and written as one verse per line:
// {train,dev,test}.{suffix} for each module and {train,dev,test}.ids with the OSIS ids. Line i of
// every file of a split is the same verse.
//
// Where the modules include an English and a Spanish one that tag their words with Strong's
// numbers (KJV and RV1909 in the default choice; the first such module of each language is taken),
// each split also gets the gold word alignment of the pair from those numbers (strongs_alignment.h),
// line-aligned with the text: {split}.{en}-{es}.gold (Pharaoh: "i-j" sure, "i?j" possible, 0-based,
// English word first) and {split}.{en}-{es}.tagged (the words the gold can judge: "0 2 ||| 1 3"),
// "kjv-es" in the default choice.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/corpus_split.h"
#include "data/strongs_alignment.h"
#include "data/sword_module.h"
#include "data/verse_alignment.h"

namespace attn::data {

struct BibleModuleChoice {
  std::string suffix;  // file suffix: "kjv"
  std::string module;  // SWORD module name: "engKJV2006eb"
};

// kjv=engKJV2006eb, web=engWEB2015eb, es=spaRV1909eb. The first module is the pivot: its verse ids
// are the ones joined on, and every other module is checked for alignment against it.
std::vector<BibleModuleChoice> default_bible_modules();

// Reads "suffix=module"; a bare "module" gets its lowercased name as suffix. Throws Error on an
// empty part or a suffix that is not a plain file name extension.
BibleModuleChoice parse_bible_module_choice(std::string_view text);

struct BibleModuleStatistics {
  BibleModuleChoice choice;
  std::string abbreviation;         // "KJV"
  std::string language;             // "en"
  std::string versification;        // "KJV"
  std::size_t verses = 0;           // verses with text in the module, in its own versification
  std::size_t missing = 0;          // pivot ids the module's versification does not have
  std::size_t empty = 0;            // pivot ids the module has without text
  std::size_t kept_words = 0;       // in the written corpus, all splits
  std::size_t kept_characters = 0;  // Unicode code points, spaces included, line ends not
};

// How one module compared with the pivot, verse by verse.
struct BibleAlignment {
  std::string pivot;  // abbreviations, "KJV" and "RV1909"
  std::string other;
  VerseFeatureKind features = VerseFeatureKind::strong_numbers;
  std::vector<std::string> osis_ids;  // the verses both modules have text for
  std::vector<VerseJudgement> judgements;
};

struct BibleDropCount {
  std::string reason;  // "KJV/RV1909 Strong's mismatch"
  std::size_t verses = 0;
};

struct BibleVerse {
  std::string osis_id;
  CorpusSplit split = CorpusSplit::train;
  std::vector<std::string> texts;  // one per module, in the order of the choices
  StrongsAlignment gold;           // English to Spanish by Strong's numbers, where the corpus has a gold pair
};

// The two modules the Strong's gold alignment is taken between, as indices into the choices.
struct BibleGoldPair {
  std::size_t source = 0;  // English (KJV)
  std::size_t target = 0;  // Spanish (RV1909)
  std::string name;        // "kjv-es": the suffixes, for file names
};

struct BibleCorpus {
  std::vector<BibleModuleStatistics> modules;
  std::size_t pivot_verses = 0;            // ids of the pivot's versification
  std::size_t joined = 0;                  // ids every module has text for
  std::size_t skipped = 0;                 // ids some module lacks or has empty
  std::vector<BibleAlignment> alignments;  // one per module after the pivot
  std::vector<BibleDropCount> dropped;     // by reason: a verse counts for the first reason found
  std::vector<BibleVerse> verses;          // kept, in the pivot's canonical order
  std::optional<BibleGoldPair> gold_pair;  // none unless an English and a Spanish module carry Strong's tags

  std::size_t dropped_total() const;
  std::size_t count(CorpusSplit split) const;
};

// Reads, cleans, joins and checks the modules. Throws Error if a module is not installed, or if a
// verse's per-word Strong's numbers do not have one entry per word (a bug in the cleaner).
BibleCorpus build_bible_corpus(const SwordLibrary& library, const std::vector<BibleModuleChoice>& choices);

// Writes the corpus files into out_dir (created if needed). Each file is written to a temporary
// name and renamed into place only after all of them are complete, so an interrupted run leaves
// the previous files, never a half-written one.
void write_bible_corpus(const BibleCorpus& corpus, const std::filesystem::path& out_dir);

}  // namespace attn::data
