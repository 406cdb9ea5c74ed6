// `attn serve` over HTTP, on 127.0.0.1 and a free port, serving the reversal model that
// serve_test_model trained (the ServeTestModel fixture). Translations are checked against the
// command line (`attn translate`, `attn score`), which the decode tests check against exhaustive
// search and the PyTorch reference; shapes against LibreTranslate's documented API.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "common/run_attn.h"
#include "common/temp_dir.h"
#include "serve/server_process.h"

namespace attn::serve {
namespace {

using nlohmann::json;
using testing::ServerProcess;

const std::string kModelDir = std::string(ATTN_SERVE_MODEL_DIR) + "/model";
const std::string kDevSource = std::string(ATTN_SERVE_MODEL_DIR) + "/dev.src";
const std::string kModel = "xx-yy=" + kModelDir;

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

struct Reply {
  int status = 0;
  json body;
  std::string text;
};

Reply post(int port, const std::string& path, const std::string& body, const std::string& type = "application/json",
           const httplib::Headers& headers = {}) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(120, 0);
  const auto res = client.Post(path.c_str(), headers, body, type.c_str());
  Reply r;
  if (!res) return r;
  r.status = res->status;
  r.text = res->body;
  r.body = json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  return r;
}

Reply get(int port, const std::string& path) {
  httplib::Client client("127.0.0.1", port);
  const auto res = client.Get(path.c_str());
  Reply r;
  if (!res) return r;
  r.status = res->status;
  r.text = res->body;
  r.body = json::parse(res->body, nullptr, false);
  return r;
}

// Polls /metrics until it has `line` as a whole line, for at most `seconds`: a test waits for a
// state, then asserts it was reached (not for a time after which it hopes it was).
bool metrics_reach(int port, const std::string& line, double seconds = 20) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  do {
    if (get(port, "/metrics").text.find("\n" + line + "\n") != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  } while (std::chrono::steady_clock::now() < until);
  return false;
}

// The server still answers: a translation and /health.
void expect_serving(int port) {
  const Reply r = post(port, "/translate", R"({"q":"alpha beta gamma delta","source":"xx","target":"yy"})");
  EXPECT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(get(port, "/health").status, 200);
}

// attn translate on the same lines, from the command line.
std::vector<std::string> translate_offline(const std::vector<std::string>& lines, const std::string& options = "") {
  const auto dir = attn::testing::fresh_temp_dir("serve_offline");
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  std::ofstream(dir / "in.txt") << text;
  const auto run = attn::testing::run_attn("translate -q -m " + kModelDir + " -i " + (dir / "in.txt").string() +
                                           " -o " + (dir / "out.txt").string() + " " + options);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  auto out = read_lines((dir / "out.txt").string());
  std::filesystem::remove_all(dir);
  return out;
}

class Serve : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new ServerProcess({"--model", kModel}); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  int port() const { return server_->port(); }
  static ServerProcess* server_;
};
ServerProcess* Serve::server_ = nullptr;

TEST_F(Serve, LibreTranslateShapes) {
  // What attn translate makes of these lines (the model reverses word order, mostly).
  const std::vector<std::string> lines{"alpha beta gamma delta", "river stone light omega", "sigma kappa zeta theta"};
  const auto offline = translate_offline(lines);
  ASSERT_EQ(offline.size(), 3u);
  // q a string: translatedText a string.
  Reply r = post(port(), "/translate", R"({"q":"alpha beta gamma delta","source":"xx","target":"yy"})");
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body, json({{"translatedText", offline[0]}})) << r.text;
  // q an array: an array in the same order.
  r = post(port(), "/translate",
           R"({"q":["river stone light omega","sigma kappa zeta theta"],"source":"xx","target":"yy"})");
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body, json({{"translatedText", {offline[1], offline[2]}}})) << r.text;
  // A form, as curl -d and LibreTranslate's own page send; and a multipart form.
  r = post(port(), "/translate", "q=alpha%20beta%20gamma%20delta&source=xx&target=yy",
           "application/x-www-form-urlencoded");
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["translatedText"], offline[0]);
  {
    httplib::Client client("127.0.0.1", port());
    const auto res = client.Post(
        "/translate",
        httplib::MultipartFormDataItems{{"q", lines[0], "", ""}, {"source", "xx", "", ""}, {"target", "yy", "", ""}});
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << res->body;
    EXPECT_EQ(json::parse(res->body)["translatedText"], offline[0]);
  }
  // Several lines in one text: each line translated, newlines kept.
  r = post(port(), "/translate",
           R"({"q":"alpha beta gamma delta\nriver stone light omega","source":"xx","target":"yy"})");
  EXPECT_EQ(r.body["translatedText"], offline[0] + "\n" + offline[1]) << r.text;
  // alternatives: hypotheses 2..N+1 of a beam of N+1, as attn translate --n-best gives them ("i |||
  // text ||| score"), in order, less those that read as the translation or an earlier one.
  r = post(port(), "/translate", R"({"q":"alpha beta gamma delta","source":"xx","target":"yy","alternatives":3})");
  ASSERT_EQ(r.status, 200) << r.text;
  const auto n_best = translate_offline({lines[0]}, "--beam 4 --n-best 4");
  ASSERT_EQ(n_best.size(), 4u);
  json expected = json::array();
  for (std::size_t i = 1; i < n_best.size(); ++i) {
    const std::size_t a = n_best[i].find(" ||| "), b = n_best[i].rfind(" ||| ");
    const std::string text = n_best[i].substr(a + 5, b - a - 5);
    if (text != offline[0] && std::find(expected.begin(), expected.end(), text) == expected.end())
      expected.push_back(text);
  }
  ASSERT_FALSE(expected.empty()) << "the beam found nothing but the translation: the check would be empty";
  EXPECT_EQ(r.body["translatedText"], offline[0]);
  EXPECT_EQ(r.body["alternatives"], expected) << r.text;
  // /languages: every code with its targets.
  r = get(port(), "/languages");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body,
            json::parse(R"([{"code":"xx","name":"xx","targets":["yy"]},{"code":"yy","name":"yy","targets":[]}])"));
}

TEST_F(Serve, ConcurrentRequestsTranslateAsTheCommandLineDoes) {
  const auto lines = read_lines(kDevSource);
  ASSERT_GE(lines.size(), 20u);
  const auto expected = translate_offline(lines);
  ASSERT_EQ(expected.size(), lines.size());
  // One request per sentence, 8 at a time: the server batches them as they come.
  std::vector<std::string> got(lines.size());
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 8; ++c)
    clients.emplace_back([&] {
      for (std::size_t i; (i = next++) < lines.size();) {
        const Reply r = post(port(), "/v1/translate", json({{"q", lines[i]}}).dump());
        got[i] = r.status == 200 ? r.body["translations"][0]["text"].get<std::string>() : "HTTP " + r.text;
      }
    });
  for (auto& t : clients) t.join();
  for (std::size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(got[i], expected[i]) << lines[i];
  // All in one request, greedy: the same as attn translate --beam 1.
  const auto greedy = translate_offline(lines, "--beam 1");
  const Reply r = post(port(), "/v1/translate", json({{"q", lines}, {"beam", 1}}).dump());
  ASSERT_EQ(r.status, 200) << r.text;
  for (std::size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(r.body["translations"][i]["text"], greedy[i]);
}

TEST_F(Serve, NBestAttentionAndAlignmentAsTheCommandLineGivesThem) {
  const std::vector<std::string> lines{"alpha beta gamma delta epsilon", "river stone light"};
  // attn translate --n-best 3: "i ||| text ||| score".
  const auto n_best = translate_offline(lines, "--n-best 3");
  Reply r = post(port(), "/v1/translate", json({{"q", lines}, {"n_best", 3}}).dump());
  ASSERT_EQ(r.status, 200) << r.text;
  std::size_t row = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const json& list = r.body["translations"][i]["n_best"];
    ASSERT_EQ(list.size(), 3u);
    for (const json& h : list) {
      ASSERT_LT(row, n_best.size());
      const std::string& line = n_best[row++];
      const auto a = line.find(" ||| "), b = line.rfind(" ||| ");
      EXPECT_EQ(line.substr(0, a), std::to_string(i));
      EXPECT_EQ(h["text"], line.substr(a + 5, b - a - 5));
      EXPECT_NEAR(h["score"].get<double>(), std::stod(line.substr(b + 5)), 1e-4);
      EXPECT_LE(h["score"].get<double>(), list[0]["score"].get<double>());
    }
  }
  // attention + alignment: the record and links that attn translate --attention --alignment write.
  const auto dir = attn::testing::fresh_temp_dir("serve_attention");
  std::ofstream(dir / "in.txt") << lines[0] << "\n" << lines[1] << "\n";
  const auto run =
      attn::testing::run_attn("translate -q -m " + kModelDir + " -i " + (dir / "in.txt").string() + " -o " +
                              (dir / "out.txt").string() + " --alignment --attention " + (dir / "att.jsonl").string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto out = read_lines((dir / "out.txt").string());
  const auto records = read_lines((dir / "att.jsonl").string());
  r = post(port(), "/v1/translate", json({{"q", lines}, {"attention", true}, {"alignment", true}}).dump());
  ASSERT_EQ(r.status, 200) << r.text;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const json& t = r.body["translations"][i];
    EXPECT_EQ(t["text"].get<std::string>() + " ||| " + t["alignment"].get<std::string>(), out[i]);
    const json expected = json::parse(records[i]);
    const json& got = t["attention"];
    EXPECT_EQ(got["source_pieces"], expected["source_pieces"]);
    EXPECT_EQ(got["target_pieces"], expected["target_pieces"]);
    ASSERT_EQ(got["attention"].size(), expected["attention"].size());
    for (std::size_t m = 0; m < expected["attention"].size(); ++m) {
      const json &a = got["attention"][m], &b = expected["attention"][m];
      EXPECT_EQ(a["layer"], b["layer"]);
      EXPECT_EQ(a["head"], b["head"]);
      for (std::size_t q = 0; q < b["weights"].size(); ++q)
        for (std::size_t k = 0; k < b["weights"][q].size(); ++k)
          EXPECT_NEAR(a["weights"][q][k].get<double>(), b["weights"][q][k].get<double>(), 1e-5);
    }
    // Words of the alignment: "▁"-started pieces.
    std::istringstream words(lines[i]);
    std::size_t n = 0;
    for (std::string w; words >> w;) ++n;
    EXPECT_EQ(t["source_words"].size(), n);
  }
  std::filesystem::remove_all(dir);
}

// Word alignment with a threshold (every source word with at least that weight) is the same three
// ways: attn translate --alignment-threshold, attn align --threshold on the exported records, and
// the service's alignment.threshold; and the threshold changes the links (not argmax's).
TEST_F(Serve, ThresholdAlignmentAgreesAcrossTheCommandLineAttnAlignAndTheService) {
  const auto lines = read_lines(kDevSource);
  const auto dir = attn::testing::fresh_temp_dir("serve_threshold");
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  std::ofstream(dir / "in.txt") << text;
  const std::string translate = "translate -q -m " + kModelDir + " -i " + (dir / "in.txt").string() + " --alignment";
  const std::string threshold = "0.15";
  auto run = attn::testing::run_attn(translate + " -o " + (dir / "argmax.txt").string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  run = attn::testing::run_attn(translate + " -o " + (dir / "out.txt").string() + " --alignment-threshold " +
                                threshold + " --attention " + (dir / "att.jsonl").string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  run = attn::testing::run_attn("align --attention " + (dir / "att.jsonl").string() + " --threshold " + threshold +
                                " -o " + (dir / "align.txt").string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto out = read_lines((dir / "out.txt").string()), argmax = read_lines((dir / "argmax.txt").string());
  const auto aligned = read_lines((dir / "align.txt").string());
  ASSERT_EQ(out.size(), lines.size());
  ASSERT_EQ(aligned.size(), lines.size());
  const Reply r =
      post(port(), "/v1/translate", json({{"q", lines}, {"alignment", {{"threshold", std::stod(threshold)}}}}).dump());
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["alignment_options"]["threshold"], std::stod(threshold));
  int changed = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string links = out[i].substr(out[i].rfind(" ||| ") + 5);
    EXPECT_EQ(aligned[i], links) << lines[i];
    EXPECT_EQ(r.body["translations"][i]["alignment"], links) << lines[i];
    changed += out[i] != argmax[i];
  }
  EXPECT_GT(changed, 0) << "the threshold gave argmax's links for every sentence: the check would not see it";
  std::filesystem::remove_all(dir);
}

// Forty option sets (each set gets its own decoder, 32 kept at a time), each against attn translate
// with the same options: the n-best lists (texts and
// scores; the score depends on alpha, log-probability / length penalty, even where the text does not).
TEST_F(Serve, ManyDifferentOptions) {
  const std::string line = "alpha beta gamma delta epsilon";
  for (int i = 0; i < 40; ++i) {
    const double alpha = 0.05 * i;
    const int beam = 1 + i % 5;
    const Reply r =
        post(port(), "/v1/translate", json({{"q", line}, {"alpha", alpha}, {"beam", beam}, {"n_best", beam}}).dump());
    ASSERT_EQ(r.status, 200) << r.text;
    char options[64];
    std::snprintf(options, sizeof options, "--alpha %.2f --beam %d --n-best %d", alpha, beam, beam);
    const auto offline = translate_offline({line}, options);  // "0 ||| text ||| score" when beam > 1
    const json& list = r.body["translations"][0]["n_best"];
    ASSERT_EQ(list.size(), offline.size()) << options << "\n" << r.text;
    if (beam == 1) {
      EXPECT_EQ(list[0]["text"], offline[0]) << options;
      continue;
    }
    for (std::size_t h = 0; h < offline.size(); ++h) {
      const std::size_t a = offline[h].find(" ||| "), b = offline[h].rfind(" ||| ");
      ASSERT_NE(a, b) << offline[h];
      EXPECT_EQ(list[h]["text"], offline[h].substr(a + 5, b - a - 5)) << options << " hypothesis " << h;
      const double score = std::stod(offline[h].substr(b + 5));
      EXPECT_NEAR(list[h]["score"].get<double>(), score, 1e-5 * std::abs(score) + 1e-6) << options << " " << h;
    }
  }
}

TEST_F(Serve, ScoresAsTheCommandLineDoes) {
  const auto dir = attn::testing::fresh_temp_dir("serve_score");
  std::ofstream(dir / "src.txt") << "alpha beta gamma\nriver stone\n";
  std::ofstream(dir / "tgt.txt") << "gamma beta alpha\nriver stone\n";
  const auto run = attn::testing::run_attn("score -m " + kModelDir + " -s " + (dir / "src.txt").string() + " -t " +
                                           (dir / "tgt.txt").string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::vector<std::string> rows;  // "line log_prob tokens ppl" (the header and the corpus line dropped)
  for (const auto& row : split_lines(run.output))
    if (!row.empty() && std::isdigit(static_cast<unsigned char>(row[0]))) rows.push_back(row);
  ASSERT_EQ(rows.size(), 2u) << run.output;
  const Reply r = post(port(), "/v1/score",
                       R"({"pairs":[{"source":"alpha beta gamma","target":"gamma beta alpha"},)"
                       R"({"source":"river stone","target":"river stone"}]})");
  ASSERT_EQ(r.status, 200) << r.text;
  for (std::size_t i = 0; i < 2; ++i) {
    std::istringstream row(rows[i]);
    double line, log_prob, tokens;
    row >> line >> log_prob >> tokens;
    EXPECT_NEAR(r.body["scores"][i]["log_prob"].get<double>(), log_prob, 1e-3);
    EXPECT_EQ(r.body["scores"][i]["target_tokens"].get<double>(), tokens);
  }
  // The reversal is far more likely than the copy.
  EXPECT_GT(r.body["scores"][0]["log_prob"].get<double>(), r.body["scores"][1]["log_prob"].get<double>());
  std::filesystem::remove_all(dir);
}

TEST_F(Serve, ModelsHealthAndThePage) {
  Reply r = get(port(), "/v1/models");
  ASSERT_EQ(r.status, 200);
  ASSERT_EQ(r.body["models"].size(), 1u);
  EXPECT_EQ(r.body["models"][0]["id"], "xx-yy");
  EXPECT_EQ(r.body["models"][0]["config"]["d_model"], 64);
  r = get(port(), "/health");
  EXPECT_EQ(r.body["status"], "ok");
  r = get(port(), "/");
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.text.find("<html"), std::string::npos);
  // Nothing fetched from elsewhere: no absolute URL in a src or href.
  EXPECT_EQ(r.text.find("src=\"http"), std::string::npos);
  EXPECT_EQ(r.text.find("href=\"http"), std::string::npos);
}

// Every bad request: the right status, a JSON error naming the problem, and the server serving on.
TEST_F(Serve, BadRequestsGetClearErrors) {
  struct Case {
    std::string path, body, type;
    int status;
    std::string message;  // a part of the error
  };
  const std::string big(1 << 21, 'a');
  const std::vector<Case> cases{
      {"/translate", R"({"q":"alpha","source":"xx")", "application/json", 400, "Invalid JSON format"},
      {"/translate", R"(["alpha"])", "application/json", 400, "Invalid JSON format"},
      {"/translate", R"({"source":"xx","target":"yy"})", "application/json", 400,
       "Invalid request: missing q parameter"},
      {"/translate", R"({"q":"alpha","target":"yy"})", "application/json", 400,
       "Invalid request: missing source parameter"},
      {"/translate", R"({"q":"alpha","source":"xx"})", "application/json", 400,
       "Invalid request: missing target parameter"},
      {"/translate", R"({"q":5,"source":"xx","target":"yy"})", "application/json", 400,
       "q must be a string or an array"},
      {"/translate", R"({"q":["a",5],"source":"xx","target":"yy"})", "application/json", 400, "q[1] is not a string"},
      {"/translate", R"({"q":"a","source":"xx","target":"fr"})", "application/json", 400, "fr is not supported"},
      {"/translate", R"({"q":"a","source":"yy","target":"xx"})", "application/json", 400,
       "xx (xx) is not available as a target language from yy (yy)"},
      // "auto" on a text in none of the served languages (xx): what it looks like, named.
      {"/translate", R"({"q":"In the beginning God created the heaven and the earth.","source":"auto","target":"yy"})",
       "application/json", 400, "looks like English (en), which is not served into yy (sources: xx)"},
      {"/translate", R"({"q":"a","source":"xx","target":"yy","format":"pdf"})", "application/json", 400,
       "pdf format is not supported"},
      {"/translate", "{\"q\":\"alpha \xff\",\"source\":\"xx\",\"target\":\"yy\"}", "application/json", 400,
       "not valid UTF-8 (byte 13)"},
      {"/translate", "q=alpha%FF&source=xx&target=yy", "application/x-www-form-urlencoded", 400,
       "q is not valid UTF-8"},
      {"/translate", "{\"q\":\"" + big + "\",\"source\":\"xx\",\"target\":\"yy\"}", "application/json", 413,
       "larger than 1048576 bytes"},
      {"/translate", json({{"q", std::vector<std::string>(129, "a")}, {"source", "xx"}, {"target", "yy"}}).dump(),
       "application/json", 400, "Invalid request: request (129) exceeds text limit (128)"},
      {"/translate", json({{"q", std::string(5001, 'a')}, {"source", "xx"}, {"target", "yy"}}).dump(),
       "application/json", 400, "Invalid request: request (5001) exceeds text limit (5000)"},
      {"/v1/translate", R"({"q":"a","beam":0})", "application/json", 400,
       "beam must be an integer from 1 to 128 (got 0)"},
      {"/v1/translate", R"({"q":"a","beam":129})", "application/json", 400,
       "beam must be an integer from 1 to 128 (got 129)"},
      {"/v1/translate", R"({"q":"a","beam":2,"n_best":3})", "application/json", 400,
       "n_best must be an integer from 1 to the beam, 2 (got 3)"},
      {"/v1/translate", R"({"q":"a","beam":1e999})", "application/json", 400, "the body is not JSON"},
      {"/v1/translate", R"({"q":"a","beam":)" + std::string(40, '[') + std::string(40, ']') + "}", "application/json",
       400, "nested deeper than 32 levels"},
      {"/translate", R"({"q":"a","source":"xx","target":)" + std::string(100000, '[') + std::string(100000, ']') + "}",
       "application/json", 400, "nested deeper than 32 levels"},
      {"/v1/translate", R"({"q":"a","alpha":"x"})", "application/json", 400, "alpha must be a number"},
      {"/v1/translate", R"({"q":"a","bean":4})", "application/json", 400, "unknown key \"bean\""},
      {"/v1/translate", R"({"q":"a","model":"xx-zz"})", "application/json", 404, "No model xx-zz"},
      {"/v1/translate", R"({"q":"a","attention":{"layers":[7]}})", "application/json", 400, "layer 7"},
      {"/v1/translate", R"({"q":"a","alignment":{"head":9}})", "application/json", 400, "alignment"},
      {"/v1/translate", R"({"q":"a\nb"})", "application/json", 400, "several lines"},
      {"/v1/translate", "not json", "text/plain", 400, "the body is not JSON"},
      {"/v1/score", R"({"pairs":[{"source":"a"}]})", "application/json", 400, "pairs[0] must be"},
      {"/nowhere", "{}", "application/json", 404, "no such path /nowhere"},
  };
  // A body without a Content-Length (chunked), or compressed: its size is not known before reading.
  for (const auto& [headers, status] : std::vector<std::pair<std::string, int>>{
           {"Transfer-Encoding: chunked\r\n", 411}, {"Content-Encoding: gzip\r\nContent-Length: 4\r\n", 415}}) {
    testing::RawConnection c(port());
    c.send("POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + headers + "\r\n");
    const std::string answer = c.receive(5);
    EXPECT_EQ(answer.rfind("HTTP/1.1 " + std::to_string(status), 0), 0u) << answer;
    EXPECT_NE(answer.find("{\"error\":"), std::string::npos) << answer;
  }
  for (const Case& c : cases) {
    const Reply r = post(port(), c.path, c.body, c.type);
    EXPECT_EQ(r.status, c.status) << c.path << " " << c.body.substr(0, 80) << " -> " << r.text.substr(0, 200);
    ASSERT_TRUE(r.body.is_object() && r.body.contains("error")) << r.text.substr(0, 200);
    EXPECT_NE(r.body["error"].get<std::string>().find(c.message), std::string::npos)
        << "expected '" << c.message << "' in: " << r.body["error"];
  }
  expect_serving(port());
}

TEST_F(Serve, ClientsThatMisbehaveDoNotStopTheServer) {
  {  // A body shorter than its Content-Length, then gone.
    testing::RawConnection c(port());
    ASSERT_TRUE(c.connected());
    c.send(
        "POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"q\":");
  }
  {  // A whole request, gone before the answer.
    testing::RawConnection c(port());
    const std::string body = R"({"q":"alpha beta gamma delta","source":"xx","target":"yy"})";
    c.send("POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body);
  }
  {  // Not HTTP at all.
    testing::RawConnection c(port());
    c.send("\x16\x03\x01 hello?\r\n\r\n");
    const std::string answer = c.receive(5);
    // A malformed request is an error no handler answered: a 400, its body JSON like every other
    // error (src/serve/http_server.cpp, the error handler), {"error": "Bad Request"}.
    EXPECT_EQ(answer.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << answer;
    EXPECT_NE(answer.find("\r\n\r\n{\"error\":\"Bad Request\"}"), std::string::npos) << answer;
  }
  expect_serving(port());
}

// Many connections opened and never completed: the server answers others meanwhile, while they
// are still open (a server that let them hold its threads would answer only once the read
// timeout had closed them: a state, not a time, tells the two apart).
TEST(ServeLimits, IdleConnectionsDoNotHoldUpOthers) {
  ServerProcess server({"--model", kModel, "--read-timeout", "120", "--http-threads", "48"});
  std::vector<std::unique_ptr<testing::RawConnection>> idle;
  for (int i = 0; i < 40; ++i) {
    idle.push_back(std::make_unique<testing::RawConnection>(server.port()));
    ASSERT_TRUE(idle.back()->connected());
    idle.back()->send("POST /translate HTTP/1.1\r\nHost: x\r\n");
  }
  expect_serving(server.port());
  int untouched = 0;
  for (auto& c : idle) untouched += c->untouched();
  EXPECT_EQ(untouched, 40) << "the answer came only after the server had given up idle connections";
  idle.clear();
  expect_serving(server.port());
  EXPECT_EQ(server.stop(), 0);
}

TEST(ServeLimits, ApiKeys) {
  ServerProcess server({"--model", kModel, "--api-key", "s3cret"});
  const std::string q = R"("q":"alpha beta gamma delta","source":"xx","target":"yy")";
  Reply r = post(server.port(), "/translate", "{" + q + "}");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body["error"], "Please contact the server operator to get an API key");
  r = post(server.port(), "/translate", "{" + q + R"(,"api_key":"wrong"})");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.body["error"], "Invalid API key");
  r = post(server.port(), "/translate", "{" + q + R"(,"api_key":"s3cret"})");
  EXPECT_EQ(r.status, 200) << r.text;
  r = post(server.port(), "/v1/translate", R"({"q":"alpha"})", "application/json",
           {{"Authorization", "Bearer s3cret"}});
  EXPECT_EQ(r.status, 200) << r.text;
  r = post(server.port(), "/v1/translate", R"({"q":"alpha"})", "application/json", {{"Authorization", "Bearer nope"}});
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(get(server.port(), "/languages").status, 200);  // no key needed to look
  r = get(server.port(), "/frontend/settings");
  EXPECT_EQ(r.body["keyRequired"], true);
  EXPECT_EQ(r.body["charLimit"], 5000);
  EXPECT_EQ(r.body["language"]["source"]["code"], "xx");
  EXPECT_EQ(server.stop(SIGINT), 0);  // Ctrl-C stops it as SIGTERM does
}

// Every keyed endpoint × every place a key travels × every kind of wrong key: only the exact
// keys of the file open the door (a prefix, a longer key, a key of the right length, a commented
// line do not), the file's comments, blank lines and CRLF endings are not keys, and /metrics
// counts the refusals by path and status.
TEST(ServeLimits, ApiKeyMatrix) {
  const auto dir = attn::testing::fresh_temp_dir("serve_keys");
  {
    std::ofstream file(dir / "keys.txt", std::ios::binary);
    file << "# the operators' keys\r\nfirst-key-1234\r\n\r\n#commented-key\r\nsecond-key-77\nthird-key";
  }
  ServerProcess server({"--model", kModel, "--api-key-file", (dir / "keys.txt").string()});
  const int port = server.port();
  using Send = std::function<Reply(const std::string* key)>;  // nullptr: no key at all
  const std::string libre = R"("q":"alpha beta gamma","source":"xx","target":"yy")";
  const std::string v1 = R"("q":"alpha beta")";
  const std::string pairs = R"("pairs":[{"source":"alpha beta","target":"beta alpha"}])";
  const auto json_field = [](const std::string& fields, const std::string* key) {
    return "{" + fields + (key ? ",\"api_key\":" + json(*key).dump() : "") + "}";
  };
  const auto header = [](const char* name, const std::string* key, const std::string& prefix = "") {
    return key ? httplib::Headers{{name, prefix + *key}} : httplib::Headers{};
  };
  struct Where {
    std::string name, path;
    Send send;
  };
  const std::vector<Where> wheres{
      {"JSON api_key", "/translate",
       [&](const std::string* key) { return post(port, "/translate", json_field(libre, key)); }},
      {"form api_key", "/translate",
       [&](const std::string* key) {
         std::string body = "q=alpha+beta+gamma&source=xx&target=yy";
         if (key) body += "&api_key=" + httplib::detail::encode_query_param(*key);
         return post(port, "/translate", body, "application/x-www-form-urlencoded");
       }},
      {"multipart api_key", "/translate",
       [&](const std::string* key) {
         httplib::MultipartFormDataItems items{
             {"q", "alpha beta gamma", "", ""}, {"source", "xx", "", ""}, {"target", "yy", "", ""}};
         if (key) items.push_back({"api_key", *key, "", ""});
         httplib::Client client("127.0.0.1", port);
         const auto res = client.Post("/translate", items);
         Reply r;
         if (res) r = {res->status, json::parse(res->body, nullptr, false), res->body};
         return r;
       }},
      {"Bearer", "/translate",
       [&](const std::string* key) {
         return post(port, "/translate", json_field(libre, nullptr), "application/json",
                     header("Authorization", key, "Bearer "));
       }},
      {"X-API-Key", "/translate",
       [&](const std::string* key) {
         return post(port, "/translate", json_field(libre, nullptr), "application/json", header("X-API-Key", key));
       }},
      {"JSON api_key", "/v1/translate",
       [&](const std::string* key) { return post(port, "/v1/translate", json_field(v1, key)); }},
      {"Bearer", "/v1/translate",
       [&](const std::string* key) {
         return post(port, "/v1/translate", json_field(v1, nullptr), "application/json",
                     header("Authorization", key, "Bearer "));
       }},
      {"X-API-Key", "/v1/translate",
       [&](const std::string* key) {
         return post(port, "/v1/translate", json_field(v1, nullptr), "application/json", header("X-API-Key", key));
       }},
      {"JSON api_key", "/v1/score",
       [&](const std::string* key) { return post(port, "/v1/score", json_field(pairs, key)); }},
      {"Bearer", "/v1/score",
       [&](const std::string* key) {
         return post(port, "/v1/score", json_field(pairs, nullptr), "application/json",
                     header("Authorization", key, "Bearer "));
       }},
      {"X-API-Key", "/v1/score",
       [&](const std::string* key) {
         return post(port, "/v1/score", json_field(pairs, nullptr), "application/json", header("X-API-Key", key));
       }},
  };
  struct Case {
    std::string name;
    std::optional<std::string> key;
    int status;
  };
  const std::vector<Case> cases{
      {"missing", std::nullopt, 400},
      {"wrong, same length", "first-key-1235", 403},
      {"prefix", "first-key-123", 403},
      {"longer", "first-key-12345", 403},
      {"a commented line", "#commented-key", 403},
      {"a comment", "# the operators' keys", 403},
      {"the first key with its CR", "first-key-1234\r", 403},
      {"another key's length", "second-key-7", 403},
      {"first key", "first-key-1234", 200},
      {"second key (LF line)", "second-key-77", 200},
      {"third key (no final newline)", "third-key", 200},
  };
  std::map<std::pair<std::string, int>, int> expected;  // (path, status): requests
  for (const auto& w : wheres)
    for (const auto& c : cases) {
      // A CR does not travel in a header value (httplib refuses to send it): body fields only.
      if (c.key && c.key->find('\r') != std::string::npos && w.name != "JSON api_key" && w.name != "form api_key" &&
          w.name != "multipart api_key")
        continue;
      const Reply r = w.send(c.key ? &*c.key : nullptr);
      EXPECT_EQ(r.status, c.status) << w.path << ", key in " << w.name << ", " << c.name << ": " << r.text;
      if (c.status == 400) {
        EXPECT_EQ(r.body.value("error", ""), "Please contact the server operator to get an API key") << r.text;
      }
      if (c.status == 403) {
        EXPECT_EQ(r.body.value("error", ""), "Invalid API key") << r.text;
      }
      ++expected[{w.path, r.status}];
    }
  // Looking needs no key.
  for (const char* path : {"/languages", "/v1/models", "/health", "/frontend/settings"})
    EXPECT_EQ(get(port, path).status, 200) << path;
  const std::string metrics = get(port, "/metrics").text;
  for (const auto& [at, n] : expected) {
    const std::string line = "attn_http_requests_total{path=\"" + at.first + "\",status=\"" +
                             std::to_string(at.second) + "\"} " + std::to_string(n);
    EXPECT_NE(metrics.find("\n" + line + "\n"), std::string::npos) << line << "\n" << metrics;
  }
  EXPECT_EQ(server.stop(), 0);
  std::filesystem::remove_all(dir);
}

// The samples of a Prometheus text exposition: "name{labels}" → value; every line a comment, a
// blank or a sample, every sample's family introduced by a TYPE line.
std::map<std::string, double> parse_exposition(const std::string& text) {
  std::map<std::string, double> samples;
  std::set<std::string> typed;
  for (const std::string& line : split_lines(text)) {
    if (line.empty()) continue;
    if (line.rfind("# TYPE ", 0) == 0) {
      typed.insert(line.substr(7, line.find(' ', 7) - 7));
      continue;
    }
    if (line[0] == '#') continue;
    const auto space = line.rfind(' ');
    EXPECT_NE(space, std::string::npos) << line;
    if (space == std::string::npos) continue;
    const std::string key = line.substr(0, space);
    const std::string name = key.substr(0, key.find('{'));
    std::string family = name;
    for (const char* suffix : {"_bucket", "_sum", "_count"})
      if (!typed.count(family) && family.size() > std::strlen(suffix) &&
          family.compare(family.size() - std::strlen(suffix), std::string::npos, suffix) == 0)
        family.resize(family.size() - std::strlen(suffix));
    EXPECT_TRUE(typed.count(family)) << "no TYPE line before " << line;
    std::size_t used = 0;
    const double value = std::stod(line.substr(space + 1), &used);
    EXPECT_EQ(used, line.size() - space - 1) << line;
    EXPECT_FALSE(samples.count(key)) << "twice: " << key;
    samples[key] = value;
  }
  return samples;
}

// A histogram's buckets: le bounds increasing, counts cumulative (never falling), +Inf = _count.
void expect_histogram(const std::map<std::string, double>& samples, const std::string& name) {
  std::vector<std::pair<double, double>> buckets;  // (le, count)
  const std::string prefix = name + "_bucket{le=\"";
  for (const auto& [key, value] : samples)
    if (key.rfind(prefix, 0) == 0) {
      const std::string le = key.substr(prefix.size(), key.size() - prefix.size() - 2);
      buckets.push_back({le == "+Inf" ? INFINITY : std::stod(le), value});
    }
  std::sort(buckets.begin(), buckets.end());
  ASSERT_GE(buckets.size(), 2u) << name;
  for (std::size_t i = 1; i < buckets.size(); ++i) EXPECT_LE(buckets[i - 1].second, buckets[i].second) << name;
  EXPECT_TRUE(std::isinf(buckets.back().first)) << name;
  EXPECT_EQ(buckets.back().second, samples.at(name + "_count")) << name;
}

// /metrics after a known mix of requests: every counter equals what the replies add up to.
TEST(ServeLimits, MetricsAddUpAfterAKnownMixOfRequests) {
  ServerProcess server({"--model", kModel});
  const int port = server.port();
  const auto lines = read_lines(kDevSource);
  std::map<std::pair<std::string, int>, double> requests;
  double sentences = 0, source_tokens = 0, target_tokens = 0;
  const auto v1 = [&](const json& request) {
    const Reply r = post(port, "/v1/translate", request.dump());
    ++requests[{"/v1/translate", r.status}];
    EXPECT_EQ(r.status, 200) << r.text;
    for (const auto& t : r.body["translations"]) {
      ++sentences;
      source_tokens += t["source_tokens"].get<double>();
      target_tokens += t["target_tokens"].get<double>();
    }
    return r;
  };
  const Reply first = v1({{"q", json::array({lines[0], lines[1]})}});
  v1({{"q", lines[2]}, {"beam", 1}});
  v1({{"q", json::array({lines[3], lines[4], lines[5]})}, {"beam", 2}, {"alpha", 1.0}});
  // LibreTranslate's /translate with /v1's defaults: the same translation as lines[0]'s above.
  Reply r = post(port, "/translate", json({{"q", lines[0]}, {"source", "xx"}, {"target", "yy"}}).dump());
  ++requests[{"/translate", r.status}];
  ASSERT_EQ(r.status, 200) << r.text;
  ASSERT_EQ(r.body["translatedText"], first.body["translations"][0]["text"]);
  ++sentences;
  source_tokens += first.body["translations"][0]["source_tokens"].get<double>();
  target_tokens += first.body["translations"][0]["target_tokens"].get<double>();
  // Errors, each labelled with its status; unknown paths share one label.
  r = post(port, "/v1/translate", "{not json");
  ++requests[{"/v1/translate", r.status}];
  EXPECT_EQ(r.status, 400);
  r = post(port, "/translate", R"({"q":"alpha","source":"xx","target":"zz"})");
  ++requests[{"/translate", r.status}];
  EXPECT_EQ(r.status, 400);
  r = get(port, "/no/such/page");
  ++requests[{"other", r.status}];
  EXPECT_EQ(r.status, 404);
  for (const char* path : {"/health", "/languages", "/v1/models"}) ++requests[{path, get(port, path).status}];

  const auto samples = parse_exposition(get(port, "/metrics").text);
  double total = 0;
  for (const auto& [at, n] : requests) {
    const std::string key =
        "attn_http_requests_total{path=\"" + at.first + "\",status=\"" + std::to_string(at.second) + "\"}";
    EXPECT_EQ(samples.count(key) ? samples.at(key) : -1, n) << key;
    total += n;
  }
  double counted = 0;
  for (const auto& [key, value] : samples)
    if (key.rfind("attn_http_requests_total{", 0) == 0) counted += value;
  EXPECT_EQ(counted, total) << "series no request of the mix explains";
  expect_histogram(samples, "attn_http_request_duration_seconds");
  EXPECT_EQ(samples.at("attn_http_request_duration_seconds_count"), total);
  EXPECT_EQ(samples.at("attn_translated_sentences_total{model=\"xx-yy\"}"), sentences);
  EXPECT_EQ(samples.at("attn_translated_source_tokens_total{model=\"xx-yy\"}"), source_tokens);
  EXPECT_EQ(samples.at("attn_translated_target_tokens_total{model=\"xx-yy\"}"), target_tokens);
  expect_histogram(samples, "attn_batch_sentences");
  EXPECT_EQ(samples.at("attn_batch_sentences_sum"), sentences);
  EXPECT_GE(samples.at("attn_batch_sentences_count"), 4);  // four requests, one after another
  EXPECT_LE(samples.at("attn_batch_sentences_count"), sentences);
  // Every batch counted once by why it started; one client at a time: none was full, none cut short.
  double batches = 0;
  for (const auto& [key, value] : samples)
    if (key.rfind("attn_batches_total{", 0) == 0) {
      batches += value;
      EXPECT_EQ(key, "attn_batches_total{model=\"xx-yy\",start=\"timer\"}");
    }
  EXPECT_EQ(batches, samples.at("attn_batch_sentences_count"));
  EXPECT_GT(samples.at("attn_translate_seconds_total{model=\"xx-yy\"}"), 0);
  EXPECT_EQ(samples.at("attn_queued_sentences"), 0);
  EXPECT_EQ(samples.at("attn_http_requests_in_flight"), 0);  // this scrape is not counted
  EXPECT_EQ(server.stop(), 0);
}

// A shutdown held by --drain-seconds: /health turns 503 "draining" while the port is still open,
// new work is refused with 503, and a second signal ends the wait at once.
TEST(ServeLimits, HealthSaysDrainingDuringAHeldShutdown) {
  ServerProcess server({"--model", kModel, "--drain-seconds", "300"});
  const int port = server.port();
  EXPECT_EQ(get(port, "/health").body["status"], "ok");
  server.signal(SIGTERM);
  Reply health;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  do {
    health = get(port, "/health");
    if (health.status == 503) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  } while (std::chrono::steady_clock::now() < until);
  ASSERT_EQ(health.status, 503) << "never seen draining: " << health.text;
  EXPECT_EQ(health.body["status"], "draining") << health.text;
  Reply r = post(port, "/translate", R"({"q":"alpha beta","source":"xx","target":"yy"})");
  EXPECT_EQ(r.status, 503) << r.text;
  EXPECT_EQ(r.body.value("error", ""), "The server is shutting down") << r.text;
  r = post(port, "/v1/translate", R"({"q":"alpha beta"})");
  EXPECT_EQ(r.status, 503) << r.text;
  EXPECT_EQ(get(port, "/health").status, 503);  // still listening, still draining
  const auto stopping = std::chrono::steady_clock::now();
  EXPECT_EQ(server.stop(SIGTERM), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - stopping, std::chrono::seconds(120)) << "the 300 s were waited out";
  EXPECT_EQ(get(port, "/health").status, 0);  // nobody listens any more
}

// A model served with a lexical shortlist decodes as `attn translate --shortlist` does; /v1/models
// says which; a shortlist for a model that is not served is refused, naming both.
TEST(ServeLimits, ShortlistDecodesAsTheCommandLine) {
  const auto dir = attn::testing::fresh_temp_dir("serve_shortlist");
  const std::string file = (dir / "shortlist.txt").string();
  auto lines = read_lines(kDevSource);
  lines.resize(12);
  // Every source line "translated" as "river": each piece's candidates and the frequent piece are
  // river's, so the shortlist leaves the model little but </s>, and its translations differ.
  {
    std::ofstream src(dir / "train.src"), tgt(dir / "train.tgt");
    for (const auto& line : lines) src << line << "\n", tgt << "river\n";
  }
  const auto built = attn::testing::run_attn(
      "shortlist build -m " + kModelDir + " --train-source " + (dir / "train.src").string() + " --train-target " +
      (dir / "train.tgt").string() + " -o " + file + " --per-source 2 --frequent 1");
  ASSERT_EQ(built.exit_code, 0) << built.output;
  const auto expected = translate_offline(lines, "--shortlist " + file + " --shortlist-k 2");
  EXPECT_NE(expected, translate_offline(lines)) << "the shortlist changed nothing: the test could not tell";
  ServerProcess server({"--model", kModel, "--shortlist", "xx-yy=" + file, "--shortlist-k", "2"});
  const Reply r = post(server.port(), "/v1/translate", json({{"q", lines}}).dump());
  ASSERT_EQ(r.status, 200) << r.text;
  for (std::size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(r.body["translations"][i]["text"], expected[i]) << i;
  const Reply libre =
      post(server.port(), "/translate", json({{"q", lines[0]}, {"source", "xx"}, {"target", "yy"}}).dump());
  EXPECT_EQ(libre.body["translatedText"], expected[0]) << libre.text;
  const Reply models = get(server.port(), "/v1/models");
  EXPECT_EQ(models.body["models"][0]["shortlist"], json({{"path", file}, {"k", 2}})) << models.text;
  EXPECT_EQ(server.stop(), 0);
  const auto refused = attn::testing::run_attn("serve --port 0 --model " + kModel + " --shortlist zz-yy=" + file);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("--shortlist zz-yy=" + file + ": no model zz-yy is served (served: xx-yy)"),
            std::string::npos)
      << refused.output;
  std::filesystem::remove_all(dir);
}

TEST(ServeLimits, FullQueueAndTimeLimit) {
  {
    ServerProcess server({"--model", kModel, "--max-queue", "2", "--batch-wait-ms", "10000"});
    // More sentences than the queue can ever hold: not "retry later", a bad request.
    Reply r = post(server.port(), "/translate", R"({"q":["alpha","beta","gamma"],"source":"xx","target":"yy"})");
    EXPECT_EQ(r.status, 400) << r.text;
    EXPECT_NE(r.text.find("more than the queue holds (2)"), std::string::npos) << r.text;
    // Two sentences wait 10 s for company and fill the queue: one more is told to slow down.
    Reply first;
    std::thread waiting(
        [&] { first = post(server.port(), "/translate", R"({"q":["alpha","beta"],"source":"xx","target":"yy"})"); });
    const bool full = metrics_reach(server.port(), "attn_queued_sentences 2", 9);
    if (!full) waiting.join();
    ASSERT_TRUE(full) << "the two sentences were never seen queued together";
    r = post(server.port(), "/translate", R"({"q":"gamma","source":"xx","target":"yy"})");
    EXPECT_EQ(r.status, 429) << r.text;
    EXPECT_EQ(r.body["error"].get<std::string>().rfind("Slowdown: ", 0), 0u) << r.text;
    waiting.join();
    EXPECT_EQ(first.status, 200) << first.text;
    EXPECT_EQ(post(server.port(), "/translate", R"({"q":"gamma","source":"xx","target":"yy"})").status, 200);
    EXPECT_EQ(server.stop(), 0);
  }
  {  // 10 ms to answer, but a sentence waits 200 ms for company: too late, and said so.
    ServerProcess server({"--model", kModel, "--timeout", "0.01", "--batch-wait-ms", "200"});
    const Reply r = post(server.port(), "/translate", R"({"q":"alpha beta","source":"xx","target":"yy"})");
    EXPECT_EQ(r.status, 503) << r.text;
    EXPECT_NE(r.text.find("Timed out"), std::string::npos) << r.text;
    EXPECT_EQ(get(server.port(), "/health").status, 200);
    EXPECT_EQ(server.stop(), 0);
  }
}

// A scoring request that times out while the worker runs it: 503, and the worker finishes it on
// its own copies (under AddressSanitizer, a read of the request's unwound frame would be caught).
// 2 ms to answer, and every request asks for the forced decoding of all the dev pairs with their
// attention: work the worker cannot do in 2 ms (each pair a pass through the model, whose weights
// alone take longer to read). So each of the three is a 503 "Timed out" (docs/serve.md, Limits:
// --timeout, 503), the second and third timing out queued behind the worker's work on the first.
// Then the service goes on: the queue empties (the worker finished what it began), /health is
// 200 "ok", and a request that waits for nothing (an empty text translates to nothing, at once) is
// answered 200 whatever the limit.
TEST(ServeLimits, ScoreThatTimesOutWhileRunning) {
  ServerProcess server({"--model", kModel, "--timeout", "0.002"});
  json pairs = json::array();
  for (const auto& line : read_lines(kDevSource)) pairs.push_back({{"source", line}, {"target", line}});
  for (int i = 0; i < 3; ++i) {
    const Reply r = post(server.port(), "/v1/score", json({{"pairs", pairs}, {"attention", true}}).dump());
    EXPECT_EQ(r.status, 503) << i << ": " << r.text.substr(0, 200);
    ASSERT_TRUE(r.body.is_object() && r.body.contains("error")) << r.text.substr(0, 200);
    EXPECT_EQ(r.body["error"].get<std::string>().rfind(
                  "Timed out: the request was not translated within its time limit (", 0),
              0u)
        << r.text;
  }
  EXPECT_TRUE(metrics_reach(server.port(), "attn_queued_sentences 0", 60)) << get(server.port(), "/metrics").text;
  EXPECT_TRUE(metrics_reach(server.port(), "attn_http_requests_total{path=\"/v1/score\",status=\"503\"} 3", 60))
      << get(server.port(), "/metrics").text;
  const Reply health = get(server.port(), "/health");
  EXPECT_EQ(health.status, 200) << health.text;
  EXPECT_EQ(health.body.value("status", ""), "ok") << health.text;
  const Reply empty = post(server.port(), "/v1/translate", R"({"q":[""]})");
  EXPECT_EQ(empty.status, 200) << empty.text;
  EXPECT_EQ(empty.body["translations"][0]["text"], "") << empty.text;
  EXPECT_EQ(server.stop(), 0);
}

// Sentences of concurrent requests share batches, and the counters add up to what was sent. A
// batch waits up to 10 s for company but goes as soon as it holds 8 sentences: 16 clients make
// two full batches, however slowly their requests come.
TEST(ServeLimits, BatchesConcurrentRequestsAndCountsThem) {
  ServerProcess server({"--model", kModel, "--batch-wait-ms", "10000", "--max-batch-sentences", "8"});
  const auto lines = read_lines(kDevSource);
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int c = 0; c < 16; ++c)
    clients.emplace_back([&, c] {
      ok += post(server.port(), "/translate",
                 json({{"q", lines[static_cast<std::size_t>(c)]}, {"source", "xx"}, {"target", "yy"}}).dump())
                .status == 200;
    });
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok, 16);
  const std::string metrics = get(server.port(), "/metrics").text;
  const auto value = [&](const std::string& name) {
    const auto at = metrics.find("\n" + name + " ");
    return at == std::string::npos ? -1.0 : std::stod(metrics.substr(at + name.size() + 2));
  };
  EXPECT_EQ(value("attn_translated_sentences_total{model=\"xx-yy\"}"), 16) << metrics;
  EXPECT_EQ(value("attn_batch_sentences_sum"), 16) << metrics;
  EXPECT_EQ(value("attn_batch_sentences_count"), 2) << metrics;
  EXPECT_EQ(value("attn_batch_sentences_bucket{le=\"4\"}"), 0) << metrics;
  EXPECT_EQ(value("attn_http_requests_total{path=\"/translate\",status=\"200\"}"), 16) << metrics;
  EXPECT_EQ(value("attn_queued_sentences"), 0) << metrics;
  EXPECT_EQ(server.stop(), 0);
}

// SIGTERM while requests are in flight: each is answered in full, then the server exits 0.
// SIGTERM while sentences wait for company (--batch-wait-ms 10000, the most allowed): the shutdown
// ends the wait, the batch is translated at once, every request gets its translation, and the
// process exits 0. States, not times: the sentences are seen queued before the signal, and the
// batch is seen counted as started by the shutdown (attn_batches_total{start="shutdown"}) while a
// held shutdown (--drain-seconds) still answers /metrics.
void sigterm_with_sentences_waiting(const std::vector<std::string>& extra, bool held) {
  std::vector<std::string> arguments{"--model", kModel, "--batch-wait-ms", "10000"};
  arguments.insert(arguments.end(), extra.begin(), extra.end());
  ServerProcess server(arguments);
  const auto lines = read_lines(kDevSource);
  std::vector<std::thread> clients;
  std::vector<Reply> replies(8);
  for (std::size_t c = 0; c < replies.size(); ++c)
    clients.emplace_back([&, c] {
      replies[c] =
          post(server.port(), "/translate", json({{"q", lines[c]}, {"source", "xx"}, {"target", "yy"}}).dump());
    });
  const bool queued = metrics_reach(server.port(), "attn_queued_sentences 8", 60);
  const bool in_flight = queued && metrics_reach(server.port(), "attn_http_requests_in_flight 8", 60);
  const int port = server.port();
  if (held) {
    server.signal(SIGTERM);
  } else {
    EXPECT_EQ(server.stop(SIGTERM), 0);
  }
  for (auto& t : clients) t.join();
  ASSERT_TRUE(queued) << "the 8 sentences were never seen queued: nothing was in flight";
  EXPECT_TRUE(in_flight) << "8 queued sentences, but /metrics did not count their 8 requests in flight";
  const auto expected = translate_offline(std::vector<std::string>(lines.begin(), lines.begin() + 8));
  for (std::size_t c = 0; c < replies.size(); ++c) {
    EXPECT_EQ(replies[c].status, 200) << replies[c].text;
    EXPECT_EQ(replies[c].body["translatedText"], expected[c]);
  }
  if (held) {
    const auto samples = parse_exposition(get(port, "/metrics").text);
    const std::string started_by_shutdown = "attn_batches_total{model=\"xx-yy\",start=\"shutdown\"}";
    EXPECT_EQ(samples.count(started_by_shutdown) ? samples.at(started_by_shutdown) : 0, 1)
        << "the batch did not start because of the shutdown";
    EXPECT_EQ(samples.count("attn_batches_total{model=\"xx-yy\",start=\"timer\"}"), 0u)
        << "the batch waited its 10 s out";
    EXPECT_EQ(samples.at("attn_translated_sentences_total{model=\"xx-yy\"}"), 8);
    EXPECT_EQ(server.stop(SIGTERM), 0);  // the second signal ends the held shutdown
  }
  EXPECT_EQ(get(port, "/health").status, 0);  // nobody listens any more
}

TEST(ServeLimits, SigtermFinishesWhatIsInFlight) { sigterm_with_sentences_waiting({}, false); }

TEST(ServeLimits, SigtermEndsTheBatchWait) { sigterm_with_sentences_waiting({"--drain-seconds", "300"}, true); }

}  // namespace
}  // namespace attn::serve
