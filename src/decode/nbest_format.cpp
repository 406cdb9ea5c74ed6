#include "decode/nbest_format.h"

#include <sstream>

namespace attn {

std::string format_nbest(std::size_t sentence, const std::vector<std::string>& texts,
                         const std::vector<Hypothesis>& hypotheses) {
  // A stream's default rendering of the score (six significant digits), as Moses' tools read it.
  std::ostringstream out;
  for (std::size_t h = 0; h < hypotheses.size(); ++h)
    out << sentence << " ||| " << texts[h] << " ||| " << hypotheses[h].score << "\n";
  return out.str();
}

}  // namespace attn
