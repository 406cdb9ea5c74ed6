// The whole extraction from the installed SWORD modules. One extraction takes a few seconds, so the
// checks on its result share one test rather than each extracting again.
#include "data/bible_corpus.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/run_attn.h"
#include "common/temp_dir.h"
#include "core/error.h"
#include "core/text_file.h"
#include "data/bible_corpus_report.h"

namespace attn::data {
namespace {

const std::vector<std::string> kFileSuffixes = {"kjv", "web", "es", "ids"};
const std::vector<std::string> kSplitStems = {"train", "dev", "test"};

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Every line of every split, by file name: "train.kjv" -> lines.
std::map<std::string, std::vector<std::string>> read_corpus(const std::filesystem::path& dir) {
  std::map<std::string, std::vector<std::string>> files;
  for (const auto& stem : kSplitStems) {
    for (const auto& suffix : kFileSuffixes) files[stem + "." + suffix] = read_text_lines(dir / (stem + "." + suffix));
  }
  return files;
}

// The line of each file of a split that holds the verse, or empty strings if the verse is not there.
std::map<std::string, std::string> find_verse(const std::map<std::string, std::vector<std::string>>& files,
                                              const std::string& osis_id) {
  for (const auto& stem : kSplitStems) {
    const auto& ids = files.at(stem + ".ids");
    const auto found = std::find(ids.begin(), ids.end(), osis_id);
    if (found == ids.end()) continue;
    std::map<std::string, std::string> verse;
    for (const auto& suffix : kFileSuffixes) verse[suffix] = files.at(stem + "." + suffix)[found - ids.begin()];
    return verse;
  }
  return {};
}

void expect_parallel_files(const std::map<std::string, std::vector<std::string>>& files) {
  for (const auto& stem : kSplitStems) {
    const std::size_t lines = files.at(stem + ".ids").size();
    for (const auto& suffix : kFileSuffixes)
      EXPECT_EQ(files.at(stem + "." + suffix).size(), lines) << stem << "." << suffix;
  }
}

// Whether the line holds something like "&amp;" or "&#233;".
bool has_entity(const std::string& line) {
  for (std::size_t amp = line.find('&'); amp != std::string::npos; amp = line.find('&', amp + 1)) {
    std::size_t end = amp + 1;
    while (end < line.size() && (std::isalnum(static_cast<unsigned char>(line[end])) || line[end] == '#')) ++end;
    if (end > amp + 1 && end < line.size() && line[end] == ';') return true;
  }
  return false;
}

void expect_clean_text(const std::map<std::string, std::vector<std::string>>& files) {
  for (const auto& [name, lines] : files) {
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const std::string& line = lines[i];
      const std::string where = name + ":" + std::to_string(i + 1) + ": " + line;
      ASSERT_FALSE(line.empty()) << where;
      EXPECT_EQ(line.find_first_of("<>"), std::string::npos) << where;
      EXPECT_FALSE(has_entity(line)) << where;
      EXPECT_EQ(line.find("¶"), std::string::npos) << where;
      EXPECT_EQ(line.find('\\'), std::string::npos) << where;
      EXPECT_EQ(line.find("  "), std::string::npos) << where;
      EXPECT_NE(line.front(), ' ') << where;
      EXPECT_NE(line.back(), ' ') << where;
    }
  }
}

void expect_split_rule(const BibleCorpus& corpus, const std::map<std::string, std::vector<std::string>>& files) {
  std::set<std::string> seen;
  for (const auto& stem : kSplitStems) {
    for (const auto& id : files.at(stem + ".ids")) {
      EXPECT_TRUE(seen.insert(id).second) << id << " is in two splits";
      EXPECT_EQ(split_name(split_of_verse(id)), stem) << id;
    }
  }
  const double expected = static_cast<double>(corpus.verses.size()) / 30;
  for (const CorpusSplit split : {CorpusSplit::dev, CorpusSplit::test}) {
    EXPECT_GT(corpus.count(split), 0.85 * expected) << split_name(split);
    EXPECT_LT(corpus.count(split), 1.15 * expected) << split_name(split);
  }
  EXPECT_EQ(corpus.count(CorpusSplit::train) + corpus.count(CorpusSplit::dev) + corpus.count(CorpusSplit::test),
            corpus.verses.size());
}

const std::vector<std::string> kGoldSuffixes = {"kjv-es.gold", "kjv-es.tagged"};

std::vector<std::string> split_on(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator)) parts.push_back(part);
  return parts;
}

// Indices written as "3 7 9": each must be a number below `words`, ascending.
void expect_indices(const std::string& list, std::size_t words, const std::string& where) {
  std::size_t previous = 0;
  bool first = true;
  for (const auto& index : split_on(list, ' ')) {
    ASSERT_FALSE(index.empty()) << where;
    ASSERT_TRUE(std::all_of(index.begin(), index.end(), [](char c) { return c >= '0' && c <= '9'; })) << where;
    const std::size_t value = std::stoul(index);
    EXPECT_LT(value, words) << where;
    EXPECT_TRUE(first || value > previous) << where;
    previous = value;
    first = false;
  }
}

// The gold and tagged files: as many lines as the text, every index inside its verse, every linked
// word tagged and every tagged word linked, and a link on most verses.
void expect_gold_files(const std::filesystem::path& dir, const std::map<std::string, std::vector<std::string>>& files) {
  for (const auto& stem : kSplitStems) {
    const auto gold = read_text_lines(dir / (stem + ".kjv-es.gold"));
    const auto tagged = read_text_lines(dir / (stem + ".kjv-es.tagged"));
    const auto& kjv = files.at(stem + ".kjv");
    const auto& es = files.at(stem + ".es");
    ASSERT_EQ(gold.size(), kjv.size()) << stem;
    ASSERT_EQ(tagged.size(), kjv.size()) << stem;
    std::size_t linked = 0;
    for (std::size_t v = 0; v < kjv.size(); ++v) {
      const std::string where = stem + " line " + std::to_string(v + 1) + ": " + gold[v] + " / " + tagged[v];
      const std::size_t kjv_words = split_on(kjv[v], ' ').size();
      const std::size_t es_words = split_on(es[v], ' ').size();
      const std::size_t bar = tagged[v].find(" ||| ");
      ASSERT_NE(bar, std::string::npos) << where;
      expect_indices(tagged[v].substr(0, bar), kjv_words, where);
      expect_indices(tagged[v].substr(bar + 5), es_words, where);
      const auto tagged_kjv = split_on(tagged[v].substr(0, bar), ' ');
      const auto tagged_es = split_on(tagged[v].substr(bar + 5), ' ');
      std::set<std::string> linked_kjv, linked_es;
      for (const auto& link : split_on(gold[v], ' ')) {
        const std::size_t mark = link.find_first_of("-?");
        ASSERT_NE(mark, std::string::npos) << where;
        expect_indices(link.substr(0, mark), kjv_words, where);
        expect_indices(link.substr(mark + 1), es_words, where);
        linked_kjv.insert(link.substr(0, mark));
        linked_es.insert(link.substr(mark + 1));
      }
      EXPECT_EQ(linked_kjv, std::set<std::string>(tagged_kjv.begin(), tagged_kjv.end())) << where;
      EXPECT_EQ(linked_es, std::set<std::string>(tagged_es.begin(), tagged_es.end())) << where;
      linked += gold[v].empty() ? 0 : 1;
    }
    // Both modules tag nearly every verse; a verse with no shared number would hardly survive the
    // Strong's alignment check that kept it.
    EXPECT_GT(linked, kjv.size() * 95 / 100) << stem;
  }
}

// The gold and tagged lines of a verse.
std::pair<std::string, std::string> find_gold(const std::filesystem::path& dir,
                                              const std::map<std::string, std::vector<std::string>>& files,
                                              const std::string& osis_id) {
  for (const auto& stem : kSplitStems) {
    const auto& ids = files.at(stem + ".ids");
    const auto found = std::find(ids.begin(), ids.end(), osis_id);
    if (found == ids.end()) continue;
    const auto line = static_cast<std::size_t>(found - ids.begin());
    return {read_text_lines(dir / (stem + ".kjv-es.gold")).at(line),
            read_text_lines(dir / (stem + ".kjv-es.tagged")).at(line)};
  }
  return {};
}

TEST(BibleCorpus, ParsesModuleChoices) {
  const BibleModuleChoice choice = parse_bible_module_choice("es=spaRV1909eb");
  EXPECT_EQ(choice.suffix, "es");
  EXPECT_EQ(choice.module, "spaRV1909eb");
  EXPECT_EQ(parse_bible_module_choice("engKJV2006eb").suffix, "engkjv2006eb");
  EXPECT_THROW(parse_bible_module_choice("es="), Error);
  EXPECT_THROW(parse_bible_module_choice("=spaRV1909eb"), Error);
  EXPECT_THROW(parse_bible_module_choice("../x=spaRV1909eb"), Error);
  EXPECT_THROW(parse_bible_module_choice("ids=spaRV1909eb"), Error);
  EXPECT_EQ(default_bible_modules().front().module, "engKJV2006eb");
}

// Runs `attn corpus bible` into out_dir; returns what it printed.
std::string run_command_line(const std::filesystem::path& out_dir, const std::filesystem::path& log) {
  EXPECT_EQ(testing::run_attn("corpus bible --out " + out_dir.string() + " > " + log.string() + " 2>&1").exit_code, 0)
      << slurp(log);
  return slurp(log);
}

TEST(BibleCorpus, ExtractionIsCleanAlignedSplitAndRepeatable) {
  const BibleCorpus corpus = build_bible_corpus(SwordLibrary(), default_bible_modules());
  const auto dir = testing::fresh_temp_dir("bible_corpus");
  write_bible_corpus(corpus, dir / "library");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir / "library"), {}), 18) << "only the corpus files";
  const auto files = read_corpus(dir / "library");

  // A second run, through the command line, writes the same bytes.
  const std::string printed = run_command_line(dir / "cli", dir / "cli.log");
  for (const auto& [name, lines] : files) EXPECT_EQ(slurp(dir / "cli" / name), slurp(dir / "library" / name)) << name;
  for (const auto& stem : kSplitStems) {
    for (const auto& suffix : kGoldSuffixes) {
      const std::string name = stem + "." + suffix;
      EXPECT_EQ(slurp(dir / "cli" / name), slurp(dir / "library" / name)) << name;
    }
  }
  EXPECT_NE(printed.find(describe_bible_corpus(corpus)), std::string::npos) << printed;
  EXPECT_NE(printed.find("gold word alignment kjv-es"), std::string::npos) << printed;
  expect_gold_files(dir / "cli", files);

  expect_parallel_files(files);
  expect_clean_text(files);
  expect_split_rule(corpus, files);

  // About 30.7k verses survive; a few hundred are skipped or dropped.
  EXPECT_EQ(corpus.pivot_verses, 31102u);
  EXPECT_GT(corpus.verses.size(), 30500u);
  EXPECT_LT(corpus.verses.size(), 31000u);
  EXPECT_EQ(corpus.joined, corpus.verses.size() + corpus.dropped_total());
  EXPECT_EQ(corpus.pivot_verses, corpus.joined + corpus.skipped);
  EXPECT_GT(corpus.dropped_total(), 150u);
  EXPECT_LT(corpus.dropped_total(), 400u);

  // Hand-checked lines.
  const auto genesis = find_verse(files, "Gen.1.1");
  EXPECT_EQ(genesis.at("kjv"), "In the beginning God created the heaven and the earth.");
  EXPECT_EQ(genesis.at("web"), "In the beginning, God created the heavens and the earth.");
  EXPECT_EQ(genesis.at("es"), "EN el principio crió Dios los cielos y la tierra.");
  // Its gold line, worked out by hand in strongs_alignment_test.cpp.
  const auto genesis_gold = find_gold(dir / "cli", files, "Gen.1.1");
  EXPECT_EQ(genesis_gold.first, "2?0 2?1 2?2 3-4 4-3 6?5 6?6 9?7 9?8 9?9");
  EXPECT_EQ(genesis_gold.second, "2 3 4 6 9 ||| 0 1 2 3 4 5 6 7 8 9");
  EXPECT_EQ(find_verse(files, "1Thess.1.4").at("web"), "We know, brothers loved by God, that you are chosen,");

  // RV1909 numbers Jonah's fish 2:1 (its 1:17 is empty), its prayer 2:2, and so on: no verse of
  // the chapter may be paired by id, and the fish must never meet another Spanish verse.
  EXPECT_TRUE(find_verse(files, "Jonah.1.17").empty());
  for (int verse = 1; verse <= 10; ++verse) {
    EXPECT_TRUE(find_verse(files, "Jonah.2." + std::to_string(verse)).empty()) << "Jonah.2." << verse;
  }
  // The same for RV1909's other renumbered chapters, sampled, and WEB's moved verses.
  for (const char* id : {"Num.13.5", "Num.30.1", "1Sam.24.1", "Job.39.1", "Job.40.10", "Hos.12.1", "Matt.23.13",
                         "Matt.23.14", "Rom.14.23", "Rom.16.25", "Rom.16.26", "Rom.16.27"}) {
    EXPECT_TRUE(find_verse(files, id).empty()) << id;
  }
  for (const auto& stem : kSplitStems) {
    const auto& kjv = files.at(stem + ".kjv");
    for (std::size_t i = 0; i < kjv.size(); ++i) {
      if (kjv[i].find("prepared a great fish") != std::string::npos) {
        EXPECT_NE(files.at(stem + ".es")[i].find("gran pez"), std::string::npos) << kjv[i];
      }
    }
  }

  // The scores behind the verdicts: one line per compared verse and pair.
  write_alignment_scores(corpus, dir / "scores.tsv");
  const auto scores = read_text_lines(dir / "scores.tsv");
  std::size_t compared = 0;
  for (const auto& alignment : corpus.alignments) compared += alignment.osis_ids.size();
  EXPECT_EQ(scores.size(), compared + 1);
  EXPECT_TRUE(scores.front().starts_with("osis_id\tpair\t")) << scores.front();
  const auto jonah = std::find_if(scores.begin(), scores.end(),
                                  [](const std::string& line) { return line.starts_with("Jonah.2.2\tKJV/RV1909\t"); });
  ASSERT_NE(jonah, scores.end());
  EXPECT_TRUE(jonah->ends_with("\tmismatch")) << *jonah;

  const std::string report = describe_bible_corpus(corpus);
  EXPECT_NE(report.find("KJV/RV1909 Strong's mismatch"), std::string::npos) << report;
  EXPECT_NE(report.find("kept " + std::to_string(corpus.verses.size()) + " verses"), std::string::npos) << report;
}

TEST(BibleCorpus, MissingModuleStopsBeforeWritingAnything) {
  const auto dir = testing::fresh_temp_dir("bible_missing");
  EXPECT_NE(testing::run_attn("corpus bible --out " + (dir / "out").string() +
                              " --modules kjv=notInstalledKJV,es=spaRV1909eb > " + (dir / "log").string() + " 2>&1")
                .exit_code,
            0);
  const std::string log = slurp(dir / "log");
  EXPECT_NE(log.find("notInstalledKJV"), std::string::npos) << log;
  EXPECT_FALSE(std::filesystem::exists(dir / "out"));
}

}  // namespace
}  // namespace attn::data
