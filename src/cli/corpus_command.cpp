// `attn corpus bible`: extract the verse-aligned English/Spanish Bible corpus from SWORD modules,
// and, where an English and a Spanish module tag words with Strong's numbers (KJV and RV1909 by
// default), the gold word alignment between them (data/strongs_alignment.h).
#include <chrono>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "data/bible_corpus.h"
#include "data/bible_corpus_report.h"
#include "data/sword_module.h"

namespace attn::cli {
namespace {

struct BibleOptions {
  std::filesystem::path out_dir;
  std::vector<std::string> modules;
  std::filesystem::path sword_path;
  std::filesystem::path scores_path;
};

void run_corpus_bible(const BibleOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<data::BibleModuleChoice> choices;
  for (const auto& text : options.modules) choices.push_back(data::parse_bible_module_choice(text));
  if (choices.empty()) choices = data::default_bible_modules();

  const data::SwordLibrary library(options.sword_path);
  const data::BibleCorpus corpus = data::build_bible_corpus(library, choices);
  data::write_bible_corpus(corpus, options.out_dir);
  if (!options.scores_path.empty()) data::write_alignment_scores(corpus, options.scores_path);

  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  std::cout << data::describe_bible_corpus(corpus) << "wrote " << options.out_dir.string() << "/{train,dev,test}.{";
  for (const auto& choice : choices) std::cout << choice.suffix << ",";
  std::cout << "ids";
  if (corpus.gold_pair) std::cout << "," << corpus.gold_pair->name << ".gold," << corpus.gold_pair->name << ".tagged";
  std::cout << "} in " << elapsed.count() << " s\n";
}

}  // namespace

void add_corpus_command(CLI::App& app) {
  auto* corpus = app.add_subcommand("corpus", "Build parallel training corpora");
  corpus->require_subcommand(1);

  auto options = std::make_shared<BibleOptions>();
  auto* bible = corpus->add_subcommand(
      "bible",
      "Extract verse-aligned Bible text (one verse per line) from installed SWORD modules: "
      "{train,dev,test}.{kjv,web,es,ids}. Verses whose modules disagree on content are dropped. Where an "
      "English and a Spanish module tag words with Strong's numbers (KJV and RV1909: the default), also the gold "
      "word alignment between them, line by line: {split}.kjv-es.gold (words sharing a Strong's number; Pharaoh "
      "format, 0-based, English first: \"i-j\" sure, a number on one word each side; \"i?j\" possible) and "
      "{split}.kjv-es.tagged (the word indices the gold can judge: \"KJV ||| Spanish\").");
  bible->add_option("--out", options->out_dir, "Folder for the corpus files (created if needed)")->required();
  bible
      ->add_option("--modules", options->modules,
                   "SUFFIX=MODULE pairs, the pivot first (default: kjv=engKJV2006eb,web=engWEB2015eb,es=spaRV1909eb)")
      ->delimiter(',');
  bible->add_option("--sword-path", options->sword_path,
                    "Folder holding mods.d/ and modules/ (default: libsword's search: SWORD_PATH, /usr/share/sword)");
  bible->add_option("--scores", options->scores_path,
                    "Also write the per-verse similarity scores behind the misalignment checks (TSV)");
  bible->callback([options] { run_corpus_bible(*options); });
}

}  // namespace attn::cli
