// Attention records: the JSON line written and read back bit for bit, and every kind of bad input
// refused with an error naming the file, the line and the key.
#include "inspect/attention_record.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "common/temp_dir.h"
#include "core/error.h"

namespace attn::inspect {
namespace {

// 2 source pieces, 3 target pieces: cross is 3 × 2, decoder_self 3 × 3, encoder_self 2 × 2.
const std::string kLine =
    R"({"line":3,"source":"say \"hi\"","target":"¿Qué?","source_pieces":["▁Hi","</s>"],)"
    R"("target_pieces":["▁¿","Qué","</s>"],"log_prob":-1.25,"score":-0.5,"attention":[)"
    R"({"kind":"cross","layer":0,"head":1,"weights":[[0,1],[1e-30,1],[0.1,0.9]]},)"
    R"({"kind":"decoder_self","layer":1,"head":0,"weights":[[1,0,0],[0.5,0.5,0],[0.25,0.25,0.5]]},)"
    R"({"kind":"encoder_self","layer":0,"head":0,"weights":[[0.75,0.25],[0.5,0.5]]}]})";

std::string replaced(const std::string& from, const std::string& to) {
  std::string text = kLine;
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

// Parses `json` as line 7 of "f.jsonl" and returns the error message ("" if it parsed).
std::string error_of(const std::string& json) {
  try {
    parse_attention_record(json, "f.jsonl", 7);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::uint32_t bits(float x) { return std::bit_cast<std::uint32_t>(x); }

TEST(AttentionRecord, ParsesEveryField) {
  const AttentionRecord record = parse_attention_record(kLine, "f.jsonl", 1);
  EXPECT_EQ(record.line, 3);
  EXPECT_EQ(record.source, "say \"hi\"");
  EXPECT_EQ(record.target, "¿Qué?");
  EXPECT_EQ(record.source_pieces, (std::vector<std::string>{"▁Hi", "</s>"}));
  EXPECT_EQ(record.target_pieces, (std::vector<std::string>{"▁¿", "Qué", "</s>"}));
  EXPECT_EQ(record.log_prob, -1.25);
  EXPECT_EQ(record.score, -0.5);
  ASSERT_EQ(record.attention.size(), 3u);
  const AttentionMatrix* cross = record.find(AttentionKind::cross, 0, 1);
  ASSERT_NE(cross, nullptr);
  EXPECT_EQ(cross->rows, 3);
  EXPECT_EQ(cross->cols, 2);
  EXPECT_EQ(bits(cross->at(0, 0)), bits(0.0f));
  EXPECT_EQ(bits(cross->at(0, 1)), bits(1.0f));
  EXPECT_EQ(bits(cross->at(1, 0)), bits(1e-30f));
  EXPECT_EQ(bits(cross->at(2, 0)), bits(0.1f));
  EXPECT_EQ(bits(cross->at(2, 1)), bits(0.9f));
  const AttentionMatrix* self = record.find(AttentionKind::decoder_self, 1, 0);
  ASSERT_NE(self, nullptr);
  EXPECT_EQ(self->rows, 3);
  EXPECT_EQ(self->cols, 3);
  EXPECT_EQ(self->at(2, 2), 0.5f);
  EXPECT_EQ(record.find(AttentionKind::encoder_self, 0, 0)->at(0, 1), 0.25f);
  EXPECT_EQ(record.find(AttentionKind::cross, 0, 0), nullptr);
}

// The hand-written line is exactly what the writer produces: key order, shortest floats (whole
// numbers as 0.0 and 1.0), UTF-8 as is.
TEST(AttentionRecord, WritesTheSameLineBack) {
  const std::string written =
      R"({"line":3,"source":"say \"hi\"","target":"¿Qué?","source_pieces":["▁Hi","</s>"],)"
      R"("target_pieces":["▁¿","Qué","</s>"],"log_prob":-1.25,"score":-0.5,"attention":[)"
      R"({"kind":"cross","layer":0,"head":1,"weights":[[0.0,1.0],[1e-30,1.0],[0.1,0.9]]},)"
      R"({"kind":"decoder_self","layer":1,"head":0,"weights":[[1.0,0.0,0.0],[0.5,0.5,0.0],[0.25,0.25,0.5]]},)"
      R"({"kind":"encoder_self","layer":0,"head":0,"weights":[[0.75,0.25],[0.5,0.5]]}]})";
  EXPECT_EQ(to_json_line(parse_attention_record(kLine, "f.jsonl", 1)), written);
}

TEST(AttentionRecord, RoundTripsFloatsBitExactly) {
  AttentionRecord record;
  record.source_pieces = {"</s>"};
  record.target_pieces = {"a", "b", "c", "d", "e", "f", "</s>"};
  AttentionMatrix matrix;
  matrix.rows = 7;
  matrix.cols = 1;
  matrix.weights = {0.0f,
                    1.0f,
                    1e-30f,
                    0.1f,
                    1.0f / 3.0f,
                    std::bit_cast<float>(std::uint32_t{1}),
                    std::bit_cast<float>(std::uint32_t{0x3f7fffff})};  // smallest subnormal, 1 - 2^-24
  record.attention.push_back(matrix);
  const std::string line = to_json_line(record);
  const std::string shortest = "[[0.0],[1.0],[1e-30],[0.1],[0.33333334],[1e-45],[0.99999994]]";
  EXPECT_NE(line.find(shortest), std::string::npos) << line;
  const AttentionRecord back = parse_attention_record(line, "f.jsonl", 1);
  ASSERT_EQ(back.attention.size(), 1u);
  for (int r = 0; r < 7; ++r) EXPECT_EQ(bits(back.attention[0].at(r, 0)), bits(matrix.weights[r])) << r;
  // Embedded in a reply built with plain nlohmann::json (attn serve), the weights keep that text.
  const nlohmann::json reply{{"attention", nlohmann::json(to_json(record))}};
  EXPECT_NE(reply.dump().find(shortest), std::string::npos) << reply.dump();
}

TEST(AttentionRecord, RefusesToWriteInvalidUtf8OrNonFiniteNumbers) {
  AttentionRecord record;
  record.source = "bad \xff byte";
  EXPECT_THROW(to_json_line(record), Error);
  record.source = "ok";
  record.log_prob = -std::numeric_limits<double>::infinity();
  EXPECT_THROW(to_json_line(record), Error);
}

TEST(AttentionRecord, NotJson) {
  EXPECT_NE(error_of("{\"line\": 3,").find("f.jsonl:7: not JSON"), std::string::npos);
  EXPECT_NE(error_of("[1, 2]").find("f.jsonl:7: a record must be a JSON object"), std::string::npos);
  // nlohmann throws out_of_range, not parse_error, for a number beyond double (found by fuzzing).
  EXPECT_NE(error_of("{\"line\": 1e999}").find("f.jsonl:7: not JSON: number overflow parsing '1e999'"),
            std::string::npos);
}

TEST(AttentionRecord, MissingKeys) {
  EXPECT_EQ(error_of(replaced(R"("log_prob":-1.25,)", "")), "f.jsonl:7: missing key \"log_prob\"");
  EXPECT_EQ(error_of(replaced(R"("head":1,)", "")), "f.jsonl:7: missing key \"head\" in \"attention\"[0]");
  EXPECT_EQ(error_of(replaced(R"(,"weights":[[0.75,0.25],[0.5,0.5]])", "")),
            "f.jsonl:7: missing key \"weights\" in \"attention\"[2]");
}

TEST(AttentionRecord, MistypedKeys) {
  EXPECT_EQ(error_of(replaced(R"("line":3)", R"("line":3.5)")),
            "f.jsonl:7: key \"line\" must be an integer, not number");
  EXPECT_EQ(error_of(replaced(R"("score":-0.5)", R"("score":"-0.5")")),
            "f.jsonl:7: key \"score\" must be a number, not string");
  EXPECT_EQ(error_of(replaced(R"("target":"¿Qué?")", R"("target":null)")),
            "f.jsonl:7: key \"target\" must be a string, not null");
  EXPECT_NE(error_of(replaced(R"(["▁Hi","</s>"])", R"(["▁Hi",5])")).find("f.jsonl:7: key \"source_pieces\""),
            std::string::npos);
  EXPECT_EQ(error_of(replaced(R"("layer":1)", R"("layer":-1)")),
            "f.jsonl:7: key \"layer\" must be a non-negative int in \"attention\"[1]");
  EXPECT_NE(error_of(replaced(R"([0.5,0.5,0])", R"([0.5,"x",0])")).find("f.jsonl:7: key \"weights\""),
            std::string::npos);
}

TEST(AttentionRecord, UnknownKind) {
  const std::string message = error_of(replaced(R"("kind":"cross")", R"("kind":"crosss")"));
  EXPECT_NE(message.find("f.jsonl:7: key \"kind\" in \"attention\"[0]"), std::string::npos) << message;
  EXPECT_NE(message.find("known: cross, decoder_self, encoder_self"), std::string::npos) << message;
}

TEST(AttentionRecord, ShapesMustMatchThePieces) {
  // cross with 2 rows instead of 3 (target pieces).
  EXPECT_EQ(error_of(replaced(R"([[0,1],[1e-30,1],[0.1,0.9]])", R"([[0,1],[1e-30,1]])")),
            "f.jsonl:7: key \"weights\" in \"attention\"[0] has 2 rows (cross is target_pieces × source_pieces "
            "= 3 × 2)");
  // decoder_self row with 2 columns instead of 3 (target pieces).
  EXPECT_EQ(error_of(replaced(R"([0.5,0.5,0])", R"([0.5,0.5])")),
            "f.jsonl:7: key \"weights\" in \"attention\"[1] row 1 has 2 columns (decoder_self is target_pieces × "
            "target_pieces = 3 × 3)");
  // encoder_self with 3 rows instead of 2 (source pieces).
  EXPECT_NE(error_of(replaced(R"([[0.75,0.25],[0.5,0.5]])", R"([[0.75,0.25],[0.5,0.5],[1,0]])"))
                .find("f.jsonl:7: key \"weights\" in \"attention\"[2] has 3 rows (encoder_self"),
            std::string::npos);
}

TEST(AttentionRecord, WeightsMustBeFiniteFloats) {
  EXPECT_EQ(error_of(replaced(R"([0.75,0.25])", R"([0.75,1e39])")),
            "f.jsonl:7: key \"weights\" in \"attention\"[2] row 0 column 1 is not a finite float");
}

TEST(AttentionRecord, RepeatedMatrix) {
  const std::string again = R"({"kind":"cross","layer":0,"head":1,"weights":[[0,1],[1,0],[1,0]]},)";
  EXPECT_EQ(error_of(replaced(R"({"kind":"encoder_self")", again + R"({"kind":"encoder_self")")),
            "f.jsonl:7: key \"attention\"[2] repeats cross layer 0 head 1");
}

class AttentionRecordFile : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = attn::testing::fresh_temp_dir("attention_record"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& text) {
    const std::string path = (dir_ / "a.jsonl").string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(AttentionRecordFile, ReadsEveryLine) {
  const std::string path = write(kLine + "\n" + replaced(R"("line":3)", R"("line":4)") + "\n");
  const std::vector<AttentionRecord> records = read_attention_records(path);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].line, 3);
  EXPECT_EQ(records[1].line, 4);
}

TEST_F(AttentionRecordFile, EmptyLineIsAnError) {
  const std::string path = write(kLine + "\n\n" + kLine + "\n");
  try {
    read_attention_records(path);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ":2: empty line", 0), 0u) << e.what();
  }
}

TEST_F(AttentionRecordFile, ErrorsNameTheLine) {
  const std::string path = write(kLine + "\n" + replaced(R"("source":)", R"("sauce":)") + "\n");
  try {
    read_attention_records(path);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), path + ":2: missing key \"source\"");
  }
}

TEST_F(AttentionRecordFile, UnreadableFile) {
  EXPECT_THROW(read_attention_records((dir_ / "missing.jsonl").string()), Error);
}

}  // namespace
}  // namespace attn::inspect
