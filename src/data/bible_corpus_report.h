#pragma once
// What `attn corpus bible` tells about the corpus it built: the statistics printed at the end of a
// run, and the verse-by-verse similarity scores behind the misalignment checks.
#include <filesystem>
#include <string>

#include "data/bible_corpus.h"

namespace attn::data {

// Verses per module, joined, skipped (missing/empty) by module, dropped as misaligned by reason,
// kept per split, words/characters per module, and per split the Strong's gold alignment's verses
// with links, sure and possible links (possible counts every link, sure ones included) and the
// share of words tagged, where the corpus has a gold pair. Several lines, each ending in '\n'.
std::string describe_bible_corpus(const BibleCorpus& corpus);

// One tab-separated line per compared verse and module pair: id, pair, distinct features on each side,
// whether they sufficed to judge, own Dice, best neighbour Dice, relative length ratio, verdict.
// Written atomically.
void write_alignment_scores(const BibleCorpus& corpus, const std::filesystem::path& path);

}  // namespace attn::data
