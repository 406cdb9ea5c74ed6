#pragma once
// Word alignments as text: the Pharaoh/Moses "i-j" format (sure links) with "i?j" for possible
// links, and the ".tagged" files that list which words a gold standard tags.
#include <compare>
#include <cstddef>
#include <string>
#include <vector>

namespace attn::inspect {

// A link between source word `source` and target word `target` (both 0-based).
struct Link {
  int source = 0, target = 0;
  auto operator<=>(const Link&) const = default;
};
using Alignment = std::vector<Link>;  // one sentence, sorted by (source, target), no repeats

// Sorts and removes repeats.
void normalize(Alignment& alignment);

// "i-j" links, sorted, separated by single spaces ("" for no links): the Pharaoh/Moses format that
// fast_align, fairseq and Marian print (0-based, source first).
std::string format_pharaoh(const Alignment& alignment);

// A gold alignment: sure links S and possible links P (S ⊆ P).
struct GoldAlignment {
  Alignment sure, possible;
};

// Parses a Pharaoh line where "i-j" is a sure link and "i?j" a possible one (P gets both kinds).
// Throws Error("file:line: ...") naming the bad token.
GoldAlignment parse_pharaoh_line(const std::string& text, const std::string& file, std::size_t line);
std::vector<GoldAlignment> read_pharaoh_file(const std::string& file);

// The words that carry a gold tag, per side (a ".tagged" line: "0 1 4 ||| 0 2").
struct TaggedWords {
  std::vector<int> source, target;  // sorted
};
TaggedWords parse_tagged_line(const std::string& text, const std::string& file, std::size_t line);
std::vector<TaggedWords> read_tagged_file(const std::string& file);

}  // namespace attn::inspect
