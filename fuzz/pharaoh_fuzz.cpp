// libFuzzer target: the gold alignment files `attn align --gold FILE --gold-tagged FILE` reads
// (inspect/pharaoh.h): a Pharaoh file ("i-j" sure, "i?j" possible links) and a ".tagged" file
// ("0 1 4 ||| 0 2"). Input: the gold file, byte 0xFF, the tagged file (fuzz_support.h).
//
// Checked besides memory errors: every gold line's links are sorted without repeats, non-negative,
// and its sure links are possible links too (S ⊆ P); the sure links written in the Pharaoh format
// read back as the same links; tagged word lists are sorted and non-negative.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "fuzz_support.h"
#include "inspect/pharaoh.h"

namespace {

void check_sorted(const attn::inspect::Alignment& links) {
  FUZZ_CHECK(
      std::is_sorted(links.begin(), links.end()) && std::adjacent_find(links.begin(), links.end()) == links.end(),
      attn::inspect::format_pharaoh(links));
  for (const auto& l : links) FUZZ_CHECK(l.source >= 0 && l.target >= 0, attn::inspect::format_pharaoh(links));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = attn::fuzz::split_parts({reinterpret_cast<const char*>(data), size});
  const std::string gold = attn::fuzz::write_scratch_file("gold.txt", parts[0]);
  const std::string tagged = attn::fuzz::write_scratch_file("gold.tagged", parts.size() > 1 ? parts[1] : "");
  try {
    for (const auto& line : attn::inspect::read_pharaoh_file(gold)) {
      check_sorted(line.sure);
      check_sorted(line.possible);
      FUZZ_CHECK(std::includes(line.possible.begin(), line.possible.end(), line.sure.begin(), line.sure.end()),
                 "S is not within P: " + attn::inspect::format_pharaoh(line.sure));
      const std::string text = attn::inspect::format_pharaoh(line.sure);
      const auto again = attn::inspect::parse_pharaoh_line(text, "again", 1);
      FUZZ_CHECK(again.sure == line.sure && again.possible == line.sure, "did not read back: " + text);
    }
  } catch (const attn::Error&) {
  }
  try {
    for (const auto& line : attn::inspect::read_tagged_file(tagged))
      for (const auto* side : {&line.source, &line.target}) {
        FUZZ_CHECK(std::is_sorted(side->begin(), side->end()), "tagged words not sorted");
        for (int w : *side) FUZZ_CHECK(w >= 0, "a negative tagged word");
      }
  } catch (const attn::Error&) {
  }
  return 0;
}
