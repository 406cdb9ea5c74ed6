// The public C++ API (include/attn/) against the command line on the same model and input: the
// command line is checked against exhaustive search, PyTorch and sacreBLEU by the floors' tests, so
// what the API returns must be what it prints. The model is the service tests' word-reversal
// model (the ServeTestModel fixture).
#include <attn/attn.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "common/run_attn.h"
#include "common/search_option_cases.h"
#include "common/temp_dir.h"
#include "train/train_test_support.h"

namespace attn {
namespace {

const std::string kModelDir = std::string(ATTN_SERVE_MODEL_DIR) + "/model";
const std::string kDevSource = std::string(ATTN_SERVE_MODEL_DIR) + "/dev.src";

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

int config_heads() { return nlohmann::json::parse(std::ifstream(kModelDir + "/config.json")).at("heads").get<int>(); }

// The dev sentences and a few that exercise the edges: an empty line and a long one.
std::vector<std::string> inputs() {
  std::vector<std::string> lines = read_lines(kDevSource);
  lines.resize(std::min<std::size_t>(lines.size(), 24));
  lines.push_back("");
  lines.push_back("alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega river stone light");
  return lines;
}

std::string write_inputs(const std::filesystem::path& dir, const std::vector<std::string>& lines) {
  const std::string path = (dir / "input.txt").string();
  std::ofstream out(path);
  for (const auto& l : lines) out << l << "\n";
  return path;
}

std::string command_output(const std::string& arguments) {
  const testing::RunResult r = testing::run_attn(arguments);
  EXPECT_EQ(r.exit_code, 0) << arguments << "\n" << r.output;
  return r.output;
}

TEST(Api, ModelDescribesItself) {
  const Model model(kModelDir);
  EXPECT_EQ(model.directory(), kModelDir);
  EXPECT_EQ(model.precision(), "fp32");
  const nlohmann::json config = nlohmann::json::parse(std::ifstream(kModelDir + "/config.json"));
  EXPECT_EQ(model.vocabulary_size(), config.at("vocab_size").get<int>());
  EXPECT_EQ(model.max_input_tokens(), config.at("max_positions").get<int>() - 1);
  EXPECT_GT(model.parameters(), 0);
  const std::vector<std::string> pieces = model.encode("alpha beta");
  ASSERT_FALSE(pieces.empty());
  EXPECT_EQ(model.decode(pieces), "alpha beta");
  EXPECT_EQ(Model(kModelDir, {"int8"}).precision(), "int8");
}

TEST(Api, TranslationsAreTheCommandLines) {
  const auto dir = testing::fresh_temp_dir("api_translate");
  const std::vector<std::string> lines = inputs();
  const std::string input = write_inputs(dir, lines);
  for (int beam : {1, 4}) {
    SCOPED_TRACE("beam " + std::to_string(beam));
    const std::vector<std::string> expected = split_lines(
        command_output("translate -q -m " + kModelDir + " -i " + input + " -o - -b " + std::to_string(beam)));
    TranslationOptions options;
    options.search.beam_size = beam;
    Translator translator(Model(kModelDir), options);
    const auto results = translator.translate(lines);
    ASSERT_EQ(results.size(), lines.size());
    ASSERT_EQ(expected.size(), lines.size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
      EXPECT_EQ(results[i].text, expected[i]) << "line " << i + 1;
      ASSERT_EQ(results[i].n_best.size(), lines[i].empty() ? 0u : 1u);
      if (lines[i].empty()) continue;
      // The pieces are the model's own: they decode to the text, and the log-probability and the
      // score are related by the length penalty over the pieces and </s>.
      const Model model(kModelDir);
      EXPECT_EQ(model.decode(results[i].tokens), results[i].text);
      const double lp = std::pow((5.0 + static_cast<double>(results[i].tokens.size() + 1)) / 6.0, 0.6);
      EXPECT_NEAR(results[i].score, results[i].log_prob / lp, 1e-4 * std::abs(results[i].score) + 1e-6);
      EXPECT_EQ(results[i].source_tokens, model.encode(lines[i]));
    }
  }
}

TEST(Api, NBestIsTheCommandLinesInOrder) {
  const auto dir = testing::fresh_temp_dir("api_nbest");
  const std::vector<std::string> lines = inputs();
  const std::string input = write_inputs(dir, lines);
  // Moses n-best: "index ||| text ||| score".
  const std::vector<std::string> expected =
      split_lines(command_output("translate -q -m " + kModelDir + " -i " + input + " -o - --n-best 3"));
  TranslationOptions options;
  options.search.n_best = 3;
  Translator translator(Model(kModelDir), options);
  const auto results = translator.translate(lines);
  std::size_t row = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!lines[i].empty()) {
      ASSERT_EQ(results[i].n_best.size(), 3u) << "line " << i + 1;
    }
    for (const ScoredTranslation& h : results[i].n_best) {
      ASSERT_LT(row, expected.size());
      const std::string& line = expected[row++];
      const std::size_t a = line.find(" ||| "), b = line.rfind(" ||| ");
      EXPECT_EQ(std::stoul(line.substr(0, a)), i);
      EXPECT_EQ(line.substr(a + 5, b - a - 5), h.text);
      EXPECT_NEAR(std::stod(line.substr(b + 5)), h.score, 1e-5 * std::abs(h.score) + 1e-6);
    }
    EXPECT_EQ(results[i].text, results[i].n_best.empty() ? "" : results[i].n_best.front().text);
  }
  EXPECT_EQ(row, expected.size());
}

TEST(Api, AttentionAndAlignmentAreTheCommandLines) {
  const auto dir = testing::fresh_temp_dir("api_attention");
  std::vector<std::string> lines = inputs();
  lines.resize(6);
  const std::string input = write_inputs(dir, lines);
  const std::string records = (dir / "attention.jsonl").string();
  const std::vector<std::string> with_links =
      split_lines(command_output("translate -q -m " + kModelDir + " -i " + input + " -o - --alignment --attention " +
                                 records + " --attention-kinds cross,encoder_self --attention-layers 1"));
  TranslationOptions options;
  options.return_attention = true;
  options.attention_kinds = {"cross", "encoder_self"};
  options.attention_layers = {1};  // the layer --alignment reads, every head
  options.return_alignment = true;
  Translator translator(Model(kModelDir), options);
  const auto results = translator.translate(lines);
  const std::vector<std::string> json_lines = read_lines(records);
  ASSERT_EQ(json_lines.size(), lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    SCOPED_TRACE("line " + std::to_string(i + 1));
    const nlohmann::json record = nlohmann::json::parse(json_lines[i]);
    const auto& r = results[i];
    ASSERT_EQ(r.attention.size(), 2u);
    EXPECT_EQ(r.attention[0].kind, "cross");
    EXPECT_EQ(r.attention[1].kind, "encoder_self");
    std::size_t matched = 0;
    for (const auto& m : record.at("attention")) {
      const Attention& a = m.at("kind") == "cross" ? r.attention[0] : r.attention[1];
      const auto layer = std::find(a.layers.begin(), a.layers.end(), m.at("layer").get<int>()) - a.layers.begin();
      const auto head = std::find(a.heads.begin(), a.heads.end(), m.at("head").get<int>()) - a.heads.begin();
      ASSERT_LT(static_cast<std::size_t>(layer), a.layers.size());
      ASSERT_LT(static_cast<std::size_t>(head), a.heads.size());
      const auto& rows = m.at("weights");
      ASSERT_EQ(static_cast<int>(rows.size()), a.rows);
      for (int q = 0; q < a.rows; ++q) {
        ASSERT_EQ(static_cast<int>(rows[q].size()), a.cols);
        for (int k = 0; k < a.cols; ++k) EXPECT_EQ(a.at(layer, head, q, k), rows[q][k].get<float>());
      }
      ++matched;
    }
    EXPECT_EQ(matched, 2 * r.attention[0].heads.size());  // 2 kinds x 1 layer x every head
    EXPECT_EQ(r.attention[0].heads.size(), static_cast<std::size_t>(config_heads()));
    EXPECT_EQ(r.attention[0].rows, static_cast<int>(r.tokens.size()) + 1);
    EXPECT_EQ(r.attention[0].cols, static_cast<int>(r.source_tokens.size()) + 1);
    // " ||| 0-3 1-2 ..." after the text.
    std::string links;
    for (const WordLink& l : r.alignment)
      links += (links.empty() ? "" : " ") + std::to_string(l.source) + "-" + std::to_string(l.target);
    EXPECT_EQ(with_links[i], r.text + " ||| " + links);
    EXPECT_FALSE(r.alignment.empty());
  }
}

TEST(Api, ScoresAreTheCommandLines) {
  const auto dir = testing::fresh_temp_dir("api_score");
  const std::vector<std::string> sources = read_lines(kDevSource);
  std::vector<std::string> targets;
  for (const std::string& s : sources) targets.push_back(s);  // scored as given: not reversed
  const std::string source_file = (dir / "src.txt").string(), target_file = (dir / "tgt.txt").string();
  write_inputs(dir, sources);
  std::filesystem::rename(dir / "input.txt", source_file);
  write_inputs(dir, targets);
  std::filesystem::rename(dir / "input.txt", target_file);
  // "line\tlog_prob\ttokens\tppl", log_prob to 4 decimals, ppl to 3. Both sides batch 7 pairs at a
  // time, so they pad alike and run the same products: equal up to the printing's rounding.
  // (run_attn mixes in stderr's corpus line: the rows are those that start with their number.)
  std::vector<std::string> rows;
  for (const std::string& row : split_lines(command_output("score -m " + kModelDir + " -s " + source_file + " -t " +
                                                           target_file + " --batch-sentences 7")))
    if (!row.empty() && (std::isdigit(static_cast<unsigned char>(row[0])) || row.rfind("line\t", 0) == 0))
      rows.push_back(row);
  const std::vector<PairScore> scores = score(Model(kModelDir), sources, targets, 7);
  ASSERT_EQ(rows.size(), sources.size() + 1);
  for (std::size_t i = 0; i < sources.size(); ++i) {
    std::istringstream row(rows[i + 1]);
    std::size_t line;
    double log_prob, ppl;
    int tokens;
    row >> line >> log_prob >> tokens >> ppl;
    EXPECT_EQ(line, i + 1);
    EXPECT_NEAR(scores[i].log_prob, log_prob, 5e-5);
    EXPECT_EQ(scores[i].tokens, tokens);
    EXPECT_NEAR(scores[i].perplexity, ppl, 5e-4 + 1e-6 * ppl);
  }
}

TEST(Api, MetricsAreTheCommandLines) {
  const auto dir = testing::fresh_temp_dir("api_metrics");
  const std::vector<std::string> hyps{"the cat sat on the mat", "a dog , barking", "nothing in common"};
  const std::vector<std::string> ref1{"the cat sat on a mat", "a dog barking", "something else entirely"};
  const std::vector<std::string> ref2{"there is a cat on the mat", "", "nothing common"};
  auto write = [&](const std::string& name, const std::vector<std::string>& lines) {
    std::ofstream out(dir / name);
    for (const auto& l : lines) out << l << "\n";
    return (dir / name).string();
  };
  const std::string h = write("h", hyps), r1 = write("r1", ref1), r2 = write("r2", ref2);
  // `attn bleu` prints both scores, then both signatures.
  const std::vector<std::string> out =
      split_lines(command_output("bleu " + h + " " + r1 + " " + r2 + " --width 2 --metrics bleu,chrf"));
  ASSERT_EQ(out.size(), 4u);
  const MetricScore b = bleu(hyps, {ref1, ref2});
  const MetricScore c = chrf(hyps, {ref1, ref2});
  EXPECT_EQ(b.text, out[0]);
  EXPECT_EQ(c.text, out[1]);
  EXPECT_EQ("BLEU signature: " + b.signature, out[2]);
  EXPECT_EQ("chrF2 signature: " + c.signature, out[3]);
  EXPECT_NEAR(b.score, std::stod(out[0].substr(7)), 0.005);
  EXPECT_THROW(bleu(hyps, {{"only one"}}), Error);
  EXPECT_THROW(bleu(hyps, {ref1}, {false, "intl"}), Error);
}

TEST(Api, TwoThreadsTranslateAsOneAtATime) {
  const Model model(kModelDir);
  const std::vector<std::string> lines = inputs();
  TranslationOptions options;
  options.threads = 1;
  std::vector<TranslationResult> alone = Translator(model, options).translate(lines);
  std::vector<TranslationResult> first, second;
  std::thread a([&] { first = Translator(model, options).translate(lines); });
  std::thread b([&] { second = Translator(model, options).translate(lines); });
  a.join();
  b.join();
  ASSERT_EQ(first.size(), lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(first[i].text, alone[i].text);
    EXPECT_EQ(second[i].text, alone[i].text);
    EXPECT_EQ(first[i].log_prob, alone[i].log_prob);
    EXPECT_EQ(second[i].log_prob, alone[i].log_prob);
  }
}

// An Error mentioning `part`, of the kind bindings translate (Python: ValueError, ...).
void expect_error(const std::function<void()>& f, const std::string& part,
                  ErrorKind kind = ErrorKind::invalid_argument) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one mentioning '" << part << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(kind)) << e.what();
  }
}

// The option sets every face is tried with (tests/common/search_option_cases.h): a Translator is
// made, and translates, exactly with those the table accepts; the others are refused with the
// table's message, as invalid arguments.
TEST(Api, SearchOptionsAreAcceptedAndRefusedAsOnEveryFace) {
  const Model model(kModelDir);
  for (const testing::SearchOptionCase& c : testing::search_option_cases()) {
    SCOPED_TRACE(c.name);
    TranslationOptions o;
    o.search = c.options;
    if (c.error.empty()) {
      Translator translator(model, o);
      const std::vector<TranslationResult> results = translator.translate({"alpha beta gamma"});
      ASSERT_EQ(results.size(), 1u);
      EXPECT_FALSE(results[0].n_best.empty());
      EXPECT_LE(results[0].n_best.size(), static_cast<std::size_t>(c.options.n_best));
      continue;
    }
    try {
      Translator translator(model, o);
      ADD_FAILURE() << "accepted; expected: " << c.error;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), c.error);
      EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(ErrorKind::invalid_argument));
    }
  }
}

TEST(Api, BadInputIsAnErrorNamingTheProblem) {
  expect_error([] { Model("/nonexistent/model"); }, "/nonexistent/model: no such model folder", ErrorKind::not_found);
  expect_error([] { Model(ATTN_SERVE_MODEL_DIR); }, "model.safetensors is missing",  // a folder that is not a model
               ErrorKind::not_found);
  expect_error([] { Model(kModelDir, {"fp16"}); }, "fp16");
  const Model model(kModelDir);
  TranslationOptions o;
  o.search.beam_size = 0;
  expect_error([&] { Translator(model, o); }, "beam must be an integer from 1 to 128 (got 0)");
  o = {};
  o.search.n_best = 5;
  expect_error([&] { Translator(model, o); }, "n_best must be an integer from 1 to the beam, 4 (got 5)");
  o = {};
  o.return_attention = true;
  o.attention_kinds = {"sideways"};
  expect_error([&] { Translator(model, o); }, "sideways");
  o = {};
  o.return_attention = true;
  o.attention_layers = {99};
  expect_error([&] { Translator(model, o); }, "99");
  Translator translator(model);
  expect_error([&] { translator.translate({"fine", "bad \xff byte"}); }, "text 1: invalid UTF-8 at byte 5");
  expect_error([&] { score(model, {"a"}, {"b", "c"}); }, "1 sources but 2 targets");
}

// Training in the calling process: the records the callback sees are train.jsonl's, a false from
// the callback stops with a checkpoint, and a resume continues to the end.
TEST(Api, TrainReportsProgressAndStopsWhenAsked) {
  const auto dir = testing::fresh_temp_dir("api_train");
  const auto task = testing::make_reverse_task(dir, 400, 20);
  TrainOptions o = testing::reverse_task_options(task, dir / "run");
  nlohmann::json j = options_to_json(o);
  j["max_steps"] = 40;
  j["log_every"] = 10;
  j["valid_every"] = 20;
  j["threads"] = 1;
  std::vector<TrainingEvent> events;
  const TrainingSummary stopped = train(
      j.dump(),
      [&](const TrainingEvent& e) {
        events.push_back(e);
        return e.step < 20;
      },
      false, true);
  EXPECT_EQ(stopped.stop_reason, "interrupted");
  EXPECT_EQ(stopped.steps, 20);
  const std::vector<std::string> log = read_lines((dir / "run" / "train.jsonl").string());
  ASSERT_EQ(events.size(), log.size());
  for (std::size_t i = 0; i < log.size(); ++i) {
    EXPECT_EQ(events[i].json, log[i]);
    const nlohmann::json record = nlohmann::json::parse(log[i]);
    EXPECT_EQ(events[i].type, record.at("type"));
    EXPECT_EQ(events[i].step, record.at("step").get<std::int64_t>());
    if (events[i].type == "train") {
      EXPECT_EQ(events[i].loss, record.at("loss").get<double>());
      EXPECT_EQ(events[i].learning_rate, record.at("lr").get<double>());
    } else {
      EXPECT_EQ(events[i].loss, record.at("cross_entropy").get<double>());
    }
  }
  ASSERT_GE(events.size(), 3u);  // train 10, train 20, valid 20
  std::vector<std::string> checkpoints;
  for (const auto& f : std::filesystem::directory_iterator(dir / "run" / "checkpoints"))
    checkpoints.push_back(f.path().filename().string());
  EXPECT_EQ(checkpoints, std::vector<std::string>{"step-00000020.safetensors"});

  std::int64_t last = 0;
  const TrainingSummary done = train(
      j.dump(),
      [&](const TrainingEvent& e) {
        last = e.step;
        return true;
      },
      true, true);
  EXPECT_EQ(done.stop_reason, "max_steps");
  EXPECT_EQ(done.steps, 40);
  EXPECT_EQ(last, 40);
  EXPECT_TRUE(std::filesystem::exists(done.model_directory + "/model.safetensors"));
  EXPECT_EQ(Translator(Model(done.model_directory)).translate({"alpha beta"}).size(), 1u);

  expect_error([&] { train(R"({"max_stepz": 3})"); }, "max_stepz");
  expect_error([&] { train("[1, 2"); }, "options: not JSON");
  nlohmann::json bad = j;
  bad["warmup_steps"] = "many";
  expect_error([&] { train(bad.dump()); }, "warmup_steps");
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// Documents from the library: what `attn translate --format` writes, byte for byte.
TEST(Api, DocumentsAreTheCommandLines) {
  const auto dir = testing::fresh_temp_dir("api_documents");
  const std::string page = "<p>alpha <b>beta</b> gamma delta</p>\n<p>kappa lambda sigma omega</p>\n";
  std::ofstream(dir / "page.html") << page;
  const Model model(kModelDir);
  Translator translator(model);
  const DocumentTranslation t = translator.translate_document(page, {"html", ""});
  EXPECT_EQ(t.data, command_output("translate -q -m " + kModelDir + " -i " + (dir / "page.html").string()));
  EXPECT_EQ(t.sentences, 2);
  EXPECT_TRUE(t.warnings.empty());
  try {
    translator.translate_document("x", {"pdf", ""});
    ADD_FAILURE() << "a format that does not exist was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("format \"pdf\""), std::string::npos) << e.what();
  }
  EXPECT_THROW(translator.translate_document("\xC3\x28", {"text", ""}), Error);
  const auto found = detect_language("In the beginning God created the heaven and the earth.", {"en", "es"});
  ASSERT_FALSE(found.empty());
  EXPECT_EQ(found[0].language, "en");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace attn
