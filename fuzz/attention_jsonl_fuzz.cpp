// libFuzzer target: the attention records `attn heatmap --attention FILE` and `attn align
// --attention FILE` read (inspect/attention_record.h, docs/attention-format.md), one JSON object
// per line. The input is the file.
//
// Checked besides memory errors: every matrix holds rows × cols weights, and a record written back
// with to_json_line reads back as the same line (the writer's shortest round-trip decimals).
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "fuzz_support.h"
#include "inspect/attention_record.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path =
      attn::fuzz::write_scratch_file("attention.jsonl", {reinterpret_cast<const char*>(data), size});
  std::vector<attn::inspect::AttentionRecord> records;
  try {
    records = attn::inspect::read_attention_records(path);
  } catch (const attn::Error&) {
    return 0;  // bad input, refused with a message
  }
  for (const auto& record : records) {
    for (const auto& m : record.attention)
      FUZZ_CHECK(m.rows >= 0 && m.cols >= 0 && m.weights.size() == static_cast<std::size_t>(m.rows) * m.cols,
                 "a matrix's weights do not fill its shape");
    const std::string line = attn::inspect::to_json_line(record);
    std::string again;
    try {
      again = attn::inspect::to_json_line(attn::inspect::parse_attention_record(line, "again", 1));
    } catch (const attn::Error& e) {
      FUZZ_CHECK(false, std::string("a record written back is refused: ") + e.what() + "\n" + line);
    }
    FUZZ_CHECK(again == line, "a record written back reads back differently:\n" + line + "\n" + again);
  }
  return 0;
}
