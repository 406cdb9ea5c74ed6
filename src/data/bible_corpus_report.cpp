#include "data/bible_corpus_report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "core/number_format.h"
#include "core/atomic_file.h"

namespace attn::data {
namespace {

std::size_t count_words(std::string_view text) {
  return text.empty() ? 0 : static_cast<std::size_t>(std::count(text.begin(), text.end(), ' ')) + 1;
}

std::string percent(std::size_t part, std::size_t whole) {
  return format_fixed(whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole), 1) + "%";
}

// One line per split: how much of it the Strong's gold covers.
void describe_gold(const BibleCorpus& corpus, std::ostringstream& out) {
  const BibleGoldPair& pair = *corpus.gold_pair;
  const std::string& source = corpus.modules[pair.source].choice.suffix;
  const std::string& target = corpus.modules[pair.target].choice.suffix;
  out << "gold word alignment " << pair.name << " by Strong's numbers:\n";
  for (const CorpusSplit split : {CorpusSplit::train, CorpusSplit::dev, CorpusSplit::test}) {
    std::size_t verses = 0, linked = 0, links = 0, sure = 0, source_words = 0, target_words = 0;
    std::size_t source_tagged = 0, target_tagged = 0;
    for (const BibleVerse& verse : corpus.verses) {
      if (verse.split != split) continue;
      ++verses;
      linked += verse.gold.links.empty() ? 0 : 1;
      links += verse.gold.links.size();
      sure += verse.gold.sure_count();
      source_words += count_words(verse.texts[pair.source]);
      target_words += count_words(verse.texts[pair.target]);
      source_tagged += verse.gold.tagged_source.size();
      target_tagged += verse.gold.tagged_target.size();
    }
    out << "  " << split_name(split) << ": " << linked << " of " << verses << " verses with links, " << sure
        << " sure and " << links << " possible links (" << links - sure << " possible only), words tagged: " << source
        << " " << percent(source_tagged, source_words) << ", " << target << " " << percent(target_tagged, target_words)
        << "\n";
  }
}

}  // namespace

std::string describe_bible_corpus(const BibleCorpus& corpus) {
  std::ostringstream out;
  out << "modules (the first is the pivot):\n";
  for (const auto& m : corpus.modules) {
    out << "  " << m.choice.suffix << " = " << m.choice.module << " (" << m.abbreviation << ", " << m.language << ", "
        << m.versification << " versification): " << m.verses << " verses with text\n";
  }
  const std::string pivot = corpus.modules.empty() ? "" : corpus.modules.front().abbreviation;
  out << "joined on the " << corpus.pivot_verses << " " << pivot << " verse ids: " << corpus.joined
      << " have text in every module\n";
  out << "skipped " << corpus.skipped << " verses missing or empty in some module:";
  for (const auto& m : corpus.modules) {
    out << " " << m.choice.suffix << " " << m.missing + m.empty << " (" << m.missing << " missing, " << m.empty
        << " empty)" << (&m == &corpus.modules.back() ? "" : ",");
  }
  out << "\n";
  out << "dropped " << corpus.dropped_total() << " verses as misaligned" << (corpus.dropped.empty() ? "" : ":");
  for (const auto& d : corpus.dropped) {
    out << " " << d.verses << " " << d.reason << (&d == &corpus.dropped.back() ? "" : ",");
  }
  out << "\n";
  out << "kept " << corpus.verses.size() << " verses: train " << corpus.count(CorpusSplit::train) << ", dev "
      << corpus.count(CorpusSplit::dev) << ", test " << corpus.count(CorpusSplit::test) << "\n";
  out << "words and characters kept:\n";
  for (const auto& m : corpus.modules) {
    out << "  " << m.choice.suffix << " (" << m.language << "): " << m.kept_words << " words, " << m.kept_characters
        << " characters\n";
  }
  if (corpus.gold_pair) describe_gold(corpus, out);
  return out.str();
}

void write_alignment_scores(const BibleCorpus& corpus, const std::filesystem::path& path) {
  std::ostringstream out;
  out << "osis_id\tpair\tpivot_features\tother_features\tjudged_by_features\tsimilarity\tneighbour_similarity\t"
         "relative_length_ratio\tverdict\n";
  for (const auto& alignment : corpus.alignments) {
    const std::string pair = alignment.pivot + "/" + alignment.other;
    for (std::size_t i = 0; i < alignment.osis_ids.size(); ++i) {
      const VerseJudgement& j = alignment.judgements[i];
      out << alignment.osis_ids[i] << '\t' << pair << '\t' << j.pivot_features << '\t' << j.other_features << '\t'
          << (j.judged_by_features ? "yes" : "no") << '\t' << format_fixed(j.similarity, 3) << '\t'
          << format_fixed(j.neighbour_similarity, 3) << '\t' << format_fixed(j.relative_length_ratio, 3) << '\t'
          << misalignment_name(j.verdict) << '\n';
    }
  }
  write_file_atomic(path, out.str());
}

}  // namespace attn::data
