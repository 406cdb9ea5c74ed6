// `attn translate`'s loop without the binary, on a random tiny model: the chunks a stream is read
// in (worked by hand), chunked translation equal to one call of the translator, cropped inputs
// warned about by line number, n-best lines numbered by sentence, one attention record per line
// with the alignment after " ||| ", and errors that name the line. Also the whole request
// (decode/text_translation.h): files in and out, and its checks.
#include "decode/translation_stream.h"

#include <memory>
#include <sstream>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "core/error.h"
#include "data/data_test_support.h"
#include "decode/random_tiny_model.h"
#include "decode/attention_export.h"
#include "decode/text_translation.h"
#include "inspect/attention_record.h"

namespace attn {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(ReadLineChunk, ChunksOfAtMostTheGivenLinesNumberedAcrossCalls) {
  std::istringstream in("a\nb\r\nc\n\nd");
  std::size_t line_number = 0;
  std::vector<std::string> lines;
  ASSERT_TRUE(read_line_chunk(in, "in.txt", line_number, 2, lines));
  EXPECT_EQ(lines, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(line_number, 2u);
  ASSERT_TRUE(read_line_chunk(in, "in.txt", line_number, 2, lines));
  EXPECT_EQ(lines, (std::vector<std::string>{"c", ""}));
  EXPECT_EQ(line_number, 4u);
  ASSERT_TRUE(read_line_chunk(in, "in.txt", line_number, 2, lines));
  EXPECT_EQ(lines, (std::vector<std::string>{"d"}));
  EXPECT_EQ(line_number, 5u);
  EXPECT_FALSE(read_line_chunk(in, "in.txt", line_number, 2, lines));
  EXPECT_TRUE(lines.empty());
  EXPECT_EQ(line_number, 5u);
}

TEST(ReadLineChunk, InvalidUtf8NamesTheFileLineAndByte) {
  std::istringstream in("ok\nba\xff\n");
  std::size_t line_number = 0;
  std::vector<std::string> lines;
  EXPECT_EQ(testing::message_of([&] { read_line_chunk(in, "in.txt", line_number, 10, lines); }),
            "in.txt:2: invalid UTF-8 at byte 3");
}

class TranslationStreamTest : public ::testing::Test {
 protected:
  // A random tiny model over a small vocabulary.
  static void SetUpTestSuite() {
    dir_ = new std::filesystem::path(testing::fresh_temp_dir("translation_stream"));
    loaded_ = new LoadedModel(testing::random_tiny_model(*dir_, 64, 7));
  }
  static void TearDownTestSuite() {
    delete loaded_;
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }
  static BatchTranslatorOptions options(int beam = 2, int n_best = 1) {
    BatchTranslatorOptions o;
    o.search.beam_size = beam;
    o.search.n_best = n_best;
    o.search.max_length_a = 0;
    o.search.max_length_b = 6;
    return o;
  }
  // Runs the stream over `text`; returns what it wrote to its output.
  static std::string stream(const BatchTranslatorOptions& o, const std::string& text, const TranslationStreamOptions& s,
                            TranslationStreamTotals* totals = nullptr, std::string* warnings = nullptr,
                            std::string* attention = nullptr) {
    BatchTranslator translator(*loaded_->model, *loaded_->vocabulary, o);
    std::istringstream in(text);
    std::ostringstream out, warned, records;
    const TranslationStreamTotals t = translate_stream(translator, *loaded_->vocabulary, in, "in.txt", out,
                                                       attention ? &records : nullptr, warned, s);
    if (totals) *totals = t;
    if (warnings) *warnings = warned.str();
    if (attention) *attention = records.str();
    return out.str();
  }
  static std::vector<BatchTranslation> at_once(const BatchTranslatorOptions& o, const std::vector<std::string>& lines) {
    BatchTranslator translator(*loaded_->model, *loaded_->vocabulary, o);
    return translator.translate(lines);
  }
  static std::filesystem::path* dir_;
  static LoadedModel* loaded_;
};

std::filesystem::path* TranslationStreamTest::dir_ = nullptr;
LoadedModel* TranslationStreamTest::loaded_ = nullptr;

const std::vector<std::string> kLines = {"In the beginning God created the heaven and the earth.", "",
                                         "And God said, Let there be light", "light", "God"};

TEST_F(TranslationStreamTest, ChunksTranslateAsOneCallInInputOrder) {
  TranslationStreamOptions s;
  s.chunk_lines = 2;
  TranslationStreamTotals totals;
  std::string warnings;
  const std::string out = stream(options(),
                                 "In the beginning God created the heaven and the earth.\n\n"
                                 "And God said, Let there be light\nlight\nGod\n",
                                 s, &totals, &warnings);
  std::string expected;
  for (const BatchTranslation& t : at_once(options(), kLines)) expected += t.text + "\n";
  EXPECT_EQ(out, expected);
  EXPECT_EQ(lines_of(out).size(), 5u);
  EXPECT_EQ(lines_of(out)[1], "");  // the empty line
  EXPECT_EQ(totals.lines, 5u);
  EXPECT_EQ(totals.statistics.sentences, 4);  // the empty line is no sentence
  EXPECT_EQ(totals.cropped, 0u);
  EXPECT_EQ(warnings, "");
}

TEST_F(TranslationStreamTest, CroppedInputsAreNamedByLineFiveAtMost) {
  // Every line but the empty third has more than two tokens: seven are cropped to two.
  const std::vector<std::string> lines = {"And God said, Let there be light",
                                          "and there was light",
                                          "",
                                          "And God saw the light, that it was good",
                                          "and God divided the light from the darkness",
                                          "And God called the light Day",
                                          "and the darkness he called Night",
                                          "And the evening and the morning were the first day"};
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  BatchTranslatorOptions o = options();
  o.max_input_tokens = 2;
  TranslationStreamOptions s;
  s.chunk_lines = 3;
  TranslationStreamTotals totals;
  std::string warnings;
  stream(o, text, s, &totals, &warnings);
  auto tokens = [&](std::size_t i) { return std::to_string(loaded_->vocabulary->encode(lines[i]).size()); };
  for (std::size_t i : {0, 1, 3, 4, 5, 6, 7}) ASSERT_GT(loaded_->vocabulary->encode(lines[i]).size(), 2u) << i;
  EXPECT_EQ(warnings,
            "warning: in.txt:1: " + tokens(0) + " tokens, cropped to 2\n" +  //
                "warning: in.txt:2: " + tokens(1) + " tokens, cropped to 2\n" + "warning: in.txt:4: " + tokens(3) +
                " tokens, cropped to 2\n" + "warning: in.txt:5: " + tokens(4) + " tokens, cropped to 2\n" +
                "warning: in.txt:6: " + tokens(5) + " tokens, cropped to 2\n" + "warning: 2 more inputs cropped\n");
  EXPECT_EQ(totals.cropped, 7u);
  EXPECT_EQ(totals.lines, 8u);
}

TEST_F(TranslationStreamTest, NBestLinesNumberTheSentencesFromZero) {
  // One line per chunk: the numbering carries across chunks; the empty second line has no lines.
  TranslationStreamOptions s;
  s.chunk_lines = 1;
  const std::string out = stream(options(3, 3), "God\n\nlight\n", s);
  const auto reference = at_once(options(3, 3), {"God", "", "light"});
  ASSERT_FALSE(reference[0].n_best.empty());
  ASSERT_FALSE(reference[2].n_best.empty());
  std::vector<std::string> expected_prefixes;
  for (std::size_t h = 0; h < reference[0].n_best.size(); ++h)
    expected_prefixes.push_back("0 ||| " + reference[0].n_best_text[h] + " ||| ");
  for (std::size_t h = 0; h < reference[2].n_best.size(); ++h)
    expected_prefixes.push_back("2 ||| " + reference[2].n_best_text[h] + " ||| ");
  const auto lines = lines_of(out);
  ASSERT_EQ(lines.size(), expected_prefixes.size());
  for (std::size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(lines[i].rfind(expected_prefixes[i], 0), 0u) << lines[i];
}

TEST_F(TranslationStreamTest, AnAttentionRecordPerLineAndTheAlignmentAfterBars) {
  BatchTranslatorOptions o = options();
  o.export_attention = true;
  TranslationStreamOptions s;
  s.chunk_lines = 2;
  s.alignment = true;
  s.align = resolve_alignment(loaded_->model->config(), o.attention, -1, "mean", 0);
  std::string attention;
  const auto out = lines_of(stream(o, "God\n\nlight\n", s, nullptr, nullptr, &attention));
  const auto records = lines_of(attention);
  ASSERT_EQ(out.size(), 3u);
  ASSERT_EQ(records.size(), 3u);
  const std::vector<std::string> sources = {"God", "", "light"};
  for (std::size_t i = 0; i < 3; ++i) {
    const inspect::AttentionRecord record = inspect::parse_attention_record(records[i], "records", 1 + i);
    EXPECT_EQ(record.line, static_cast<std::int64_t>(i + 1));
    EXPECT_EQ(record.source, sources[i]);
    if (i == 1) continue;
    EXPECT_FALSE(record.attention.empty());
    EXPECT_EQ(out[i], record.target + " ||| " + inspect::format_pharaoh(inspect::align_record(record, s.align)));
  }
  // An empty line: no translation, a record without attention, nothing after the bars.
  EXPECT_EQ(out[1], " ||| ");
  EXPECT_TRUE(inspect::parse_attention_record(records[1], "records", 2).attention.empty());
}

TEST_F(TranslationStreamTest, InvalidUtf8StopsTheStreamAfterTheChunksWritten) {
  TranslationStreamOptions s;
  s.chunk_lines = 1;
  BatchTranslator translator(*loaded_->model, *loaded_->vocabulary, options());
  std::istringstream in("God\nba\xff\n");
  std::ostringstream out, warnings;
  EXPECT_EQ(testing::message_of(
                [&] { translate_stream(translator, *loaded_->vocabulary, in, "in.txt", out, nullptr, warnings, s); }),
            "in.txt:2: invalid UTF-8 at byte 3");
  EXPECT_EQ(out.str(), at_once(options(), {"God"})[0].text + "\n");
}

TEST_F(TranslationStreamTest, RequestsReadAndWriteFilesAndCheckTheirOptions) {
  testing::write_lines(*dir_ / "in.txt", {"God", "", "light"});
  TextTranslationRequest request;
  request.options = options();
  request.input = (*dir_ / "in.txt").string();
  request.output = (*dir_ / "out.txt").string();
  request.attention = (*dir_ / "attention.jsonl").string();
  std::istringstream unused_in;
  std::ostringstream unused_out, warnings;
  const TranslationStreamTotals totals = translate_text(*loaded_, request, unused_in, unused_out, warnings);
  EXPECT_EQ(totals.lines, 3u);
  EXPECT_EQ(unused_out.str(), "");
  const auto reference = at_once(options(), {"God", "", "light"});
  EXPECT_EQ(testing::slurp(request.output), reference[0].text + "\n\n" + reference[2].text + "\n");
  EXPECT_EQ(lines_of(testing::slurp(request.attention)).size(), 3u);

  // "-": the streams given.
  request.input = request.output = "-";
  request.attention.clear();
  std::istringstream in("light\n");
  std::ostringstream out;
  translate_text(*loaded_, request, in, out, warnings);
  EXPECT_EQ(out.str(), reference[2].text + "\n");

  TextTranslationRequest bad = request;
  bad.alignment = true;
  bad.options.search.n_best = 2;
  EXPECT_EQ(testing::message_of([&] { translate_text(*loaded_, bad, in, out, warnings); }),
            "--alignment aligns the best translation: it does not go with --n-best above 1");
  bad = request;
  bad.input = (*dir_ / "missing.txt").string();
  bad.output = (*dir_ / "never.txt").string();
  EXPECT_EQ(testing::message_of([&] { translate_text(*loaded_, bad, in, out, warnings); }),
            bad.input + ": cannot open");
  EXPECT_FALSE(std::filesystem::exists(bad.output));
}

}  // namespace
}  // namespace attn
