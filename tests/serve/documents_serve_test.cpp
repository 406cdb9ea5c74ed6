// Documents through the service: LibreTranslate's format "html" and paragraphs, source "auto" and
// /detect, /translate_file and /download_file with text, HTML and .docx files, /v1's formats, and
// the bad inputs. The served model is the word-reversal model (serve_test.cpp), whose translations
// of single lines `attn translate` gives (the independent truth of each sentence); what comes back
// as HTML or .docx is read by Python's own parsers (html.parser, python-docx), not by attn's.
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/run_attn.h"
#include "common/temp_dir.h"
#include "serve/server_process.h"

namespace attn::serve {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::ServerProcess;

const std::string kModelDir = std::string(ATTN_SERVE_MODEL_DIR) + "/model";

struct Reply {
  int status = 0;
  json body;
  std::string text;
  std::string disposition;
};

Reply make_reply(const httplib::Result& res) {
  Reply r;
  if (!res) return r;
  r.status = res->status;
  r.text = res->body;
  r.body = json::parse(res->body, nullptr, false);
  r.disposition = res->get_header_value("Content-Disposition");
  return r;
}

Reply post_json(int port, const std::string& path, const json& body) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(120, 0);
  return make_reply(c.Post(path.c_str(), body.dump(), "application/json"));
}

Reply upload(int port, const std::string& bytes, const std::string& filename, const std::string& source = "xx",
             const std::string& target = "yy") {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(120, 0);
  httplib::MultipartFormDataItems items{
      {"file", bytes, filename, "application/octet-stream"}, {"source", source, "", ""}, {"target", target, "", ""}};
  return make_reply(c.Post("/translate_file", items));
}

Reply get(int port, const std::string& path) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(120, 0);
  return make_reply(c.Get(path.c_str()));
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// attn translate, one line at a time: the translation of each sentence.
std::string translate_line(const std::string& line) {
  const auto dir = attn::testing::fresh_temp_dir("documents_serve_line");
  std::ofstream(dir / "in.txt") << line << "\n";
  const auto run = attn::testing::run_attn("translate -q -m " + kModelDir + " -i " + (dir / "in.txt").string() +
                                           " -o " + (dir / "out.txt").string());
  EXPECT_EQ(run.exit_code, 0) << run.output;
  std::string out = slurp(dir / "out.txt");
  fs::remove_all(dir);
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// Runs Python on `input` (a file it reads as sys.argv[1]); its stdout.
std::string python(const std::string& code, const std::string& input) {
  const auto dir = attn::testing::fresh_temp_dir("documents_serve_py");
  std::ofstream(dir / "code.py") << code;
  std::ofstream(dir / "input", std::ios::binary) << input;
  const std::string command = "/usr/bin/python3 " + (dir / "code.py").string() + " " + (dir / "input").string() +
                              " > " + (dir / "out").string() + " 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << slurp(dir / "out");
  std::string out = slurp(dir / "out");
  fs::remove_all(dir);
  return out;
}

// Python's html.parser on an HTML text: every start tag (but void ones) closed in order, and the tags
// with their text as "<tag>text</tag>" events, one a line.
const char* kHtmlCheck = R"(
import sys
from html.parser import HTMLParser
VOID = {"br", "img", "hr", "meta", "link", "input", "wbr"}
class P(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.out, self.bad = [], [], []
    def handle_starttag(self, tag, attrs):
        if tag not in VOID: self.stack.append(tag)
        self.out.append("<%s>" % tag)
    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag: self.bad.append(tag)
        else: self.stack.pop()
        self.out.append("</%s>" % tag)
    def handle_data(self, d):
        if d.strip(): self.out.append(d.strip())
p = P(); p.feed(open(sys.argv[1]).read()); p.close()
print("WELL-FORMED" if not p.bad and not p.stack else "BROKEN %s %s" % (p.bad, p.stack))
print("\n".join(p.out))
)";

class DocumentsServe : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    files_ = new fs::path(attn::testing::fresh_temp_dir("documents_serve_files"));
    server_ = new ServerProcess({"--model", "xx-yy=" + kModelDir, "--model", "en-es=" + kModelDir, "--files-dir",
                                 files_->string(), "--max-file-bytes", "200000"});
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    fs::remove_all(*files_);
    delete files_;
  }
  int port() const { return server_->port(); }
  static ServerProcess* server_;
  static fs::path* files_;
};
ServerProcess* DocumentsServe::server_ = nullptr;
fs::path* DocumentsServe::files_ = nullptr;

// Paragraphs: each one's sentences translated, blank lines and indentation as they were. Through
// LibreTranslate's route every line is a paragraph (as LibreTranslate's engine reads a text); through
// /v1's format "text" a line that goes on in lower case continues its sentence, and its line break
// comes back inside the translation of the whole sentence.
TEST_F(DocumentsServe, TextComesBackSentenceBySentenceInItsLayout) {
  const std::string a = "alpha beta gamma delta", b = "kappa lambda sigma omega", c = "river stone light theta";
  Reply r = post_json(port(), "/translate", {{"q", a + "\n\n  " + c + "\n"}, {"source", "xx"}, {"target", "yy"}});
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["translatedText"], translate_line(a) + "\n\n  " + translate_line(c) + "\n");
  r = post_json(port(), "/translate", {{"q", a + "\n" + b}, {"source", "xx"}, {"target", "yy"}});
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["translatedText"], translate_line(a) + "\n" + translate_line(b));
  r = post_json(port(), "/v1/translate", {{"model", "xx-yy"}, {"q", a + "\n" + b}, {"format", "text"}});
  ASSERT_EQ(r.status, 200) << r.text;
  std::string wrapped = r.body["translations"][0]["text"];
  ASSERT_EQ(std::count(wrapped.begin(), wrapped.end(), '\n'), 1) << wrapped;
  wrapped[wrapped.find('\n')] = ' ';
  EXPECT_EQ(wrapped, translate_line(a + " " + b));
}

// format html: well-formed as Python reads it, every tag once, the markup outside the text as it
// was; the reversal model reverses the words, and the alignment puts <b> on the word it wrapped.
TEST_F(DocumentsServe, HtmlKeepsItsMarkupAndPlacesInlineTags) {
  const std::string html =
      "<div class=\"x\"><!-- note --><p>alpha <b>beta</b> gamma delta</p>\n<p>kappa lambda sigma omega</p></div>";
  const Reply r =
      post_json(port(), "/translate", {{"q", html}, {"source", "xx"}, {"target", "yy"}, {"format", "html"}});
  ASSERT_EQ(r.status, 200) << r.text;
  const std::string out = r.body["translatedText"];
  const std::string parsed = python(kHtmlCheck, out);
  EXPECT_EQ(parsed.substr(0, 11), "WELL-FORMED") << parsed << "\n" << out;
  EXPECT_EQ(out.rfind("<div class=\"x\"><!-- note --><p>", 0), 0u) << out;
  EXPECT_NE(out.find("</p>\n<p>" + translate_line("kappa lambda sigma omega") + "</p></div>"), std::string::npos)
      << out;
  // The words of the first paragraph are those of the line's translation, "beta" in <b> alone. The
  // small model copies each word (its order may be imperfect in one build or another: a sanitizer
  // build's rounding trains a slightly different model), so the tag belongs on the one "beta" it wrote.
  const std::string first = " " + translate_line("alpha beta gamma delta") + " ";
  const size_t beta = first.find(" beta ");
  ASSERT_NE(beta, std::string::npos) << "the reversal model did not copy \"beta\": " << first;
  ASSERT_EQ(first.find(" beta ", beta + 1), std::string::npos) << "\"beta\" twice: " << first;
  const std::string tagged = first.substr(1, beta) + "<b>beta</b>" + first.substr(beta + 5, first.size() - beta - 6);
  EXPECT_NE(out.find("<p>" + tagged + "</p>"), std::string::npos) << tagged << "\n" << out;
}

TEST_F(DocumentsServe, AutoDetectsTheSourceAndDetectAnswers) {
  const std::string english = "In the beginning God created the heaven and the earth, and the earth was without form.";
  Reply r = post_json(port(), "/translate", {{"q", english}, {"source", "auto"}, {"target", "es"}});
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["detectedLanguage"]["language"], "en");
  EXPECT_GT(r.body["detectedLanguage"]["confidence"].get<double>(), 50);
  r = post_json(port(), "/detect", {{"q", english}});
  ASSERT_EQ(r.status, 200) << r.text;
  ASSERT_TRUE(r.body.is_array() && !r.body.empty()) << r.text;
  EXPECT_EQ(r.body[0]["language"], "en");
  // Several texts: an answer each.
  r = post_json(port(), "/translate", {{"q", {english, english}}, {"source", "auto"}, {"target", "es"}});
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["detectedLanguage"].size(), 2u);
  // French is served by no model here: a 400 that says what it looks like.
  r = post_json(port(), "/translate",
                {{"q", "Au commencement, Dieu créa les cieux et la terre, et la terre était informe et vide."},
                 {"source", "auto"},
                 {"target", "es"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.text.find("looks like French (fr)"), std::string::npos) << r.text;
  r = post_json(port(), "/detect", {{"q", "12345 !!!"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.text.find("Cannot detect the language"), std::string::npos) << r.text;
}

TEST_F(DocumentsServe, FilesGoInTranslatedAndComeBackForDownload) {
  const std::string a = "alpha beta gamma delta", b = "kappa lambda sigma omega";
  Reply r = upload(port(), a + "\n\n" + b + "\n", "notes.txt");
  ASSERT_EQ(r.status, 200) << r.text;
  const std::string url = r.body["translatedFileUrl"];
  const std::string prefix = "http://127.0.0.1:" + std::to_string(port()) + "/download_file/";
  ASSERT_EQ(url.rfind(prefix, 0), 0u) << url;
  Reply d = get(port(), url.substr(url.find("/download_file/")));
  ASSERT_EQ(d.status, 200) << d.text;
  EXPECT_EQ(d.text, translate_line(a) + "\n\n" + translate_line(b) + "\n");
  EXPECT_EQ(d.disposition, "attachment; filename=\"notes.txt\"");
  // Kept inside the service's folder only, under the name the service made.
  int kept = 0;
  for (const auto& e : fs::directory_iterator(*files_)) kept += e.path().filename().string().ends_with(".notes.txt");
  EXPECT_GE(kept, 1);

  // HTML, read back by Python.
  r = upload(port(), "<html><body><p>alpha <i>beta</i> gamma delta</p></body></html>", "page.html");
  ASSERT_EQ(r.status, 200) << r.text;
  d = get(port(), r.body["translatedFileUrl"].get<std::string>().substr(prefix.size() - 15));
  ASSERT_EQ(d.status, 200) << d.text;
  EXPECT_EQ(python(kHtmlCheck, d.text).substr(0, 11), "WELL-FORMED") << d.text;

  // A .docx made by python-docx, its translation read back by python-docx: the paragraph's text is
  // the line's translation, and the bold run is still bold.
  const std::string docx = python(R"(
import sys, docx, base64, io
d = docx.Document()
p = d.add_paragraph()
p.add_run("alpha ")
p.add_run("beta").bold = True
p.add_run(" gamma delta")
d.add_paragraph("kappa lambda sigma omega")
b = io.BytesIO(); d.save(b); sys.stdout.write(base64.b64encode(b.getvalue()).decode())
)",
                                  "");
  std::string bytes;
  {
    const auto dir = attn::testing::fresh_temp_dir("documents_serve_b64");
    std::ofstream(dir / "b64") << docx;
    ASSERT_EQ(std::system(("base64 -d " + (dir / "b64").string() + " > " + (dir / "docx").string()).c_str()), 0);
    bytes = slurp(dir / "docx");
    fs::remove_all(dir);
  }
  r = upload(port(), bytes, "report.docx");
  ASSERT_EQ(r.status, 200) << r.text;
  d = get(port(), r.body["translatedFileUrl"].get<std::string>().substr(prefix.size() - 15));
  ASSERT_EQ(d.status, 200) << d.text;
  const std::string read = python(R"(
import sys, docx
d = docx.Document(sys.argv[1])
for p in d.paragraphs:
    print(p.text + " | bold: " + " ".join(r.text for r in p.runs if r.bold))
)",
                                  d.text);
  EXPECT_NE(read.find(translate_line("alpha beta gamma delta") + " | bold: beta"), std::string::npos) << read;
  EXPECT_NE(read.find(translate_line("kappa lambda sigma omega") + " | bold: "), std::string::npos) << read;
}

TEST_F(DocumentsServe, BadFilesAreRefusedWithTheirProblem) {
  const auto refused = [&](const Reply& r, int status, const std::string& words) {
    EXPECT_EQ(r.status, status) << r.text;
    EXPECT_NE(r.text.find(words), std::string::npos) << r.text;
  };
  refused(upload(port(), "alpha beta", "../../etc/notes.txt"), 400, "has a path in it");
  refused(upload(port(), "alpha beta", "notes.pdf"), 400, "not a supported file");
  refused(upload(port(), "alpha beta gamma delta", "report.docx"), 400, "report.docx");
  refused(upload(port(), std::string("alpha\0beta\xFF\x01", 13), "notes.txt"), 400, "notes.txt");
  refused(upload(port(), "\xC3\x28 invalid", "notes.txt"), 400, "UTF-8");
  refused(upload(port(), std::string(300000, 'a'), "big.txt"), 413, "Too Large");
  refused(get(port(), "/download_file/0123456789abcdef0123456789abcdef.missing.txt"), 404, "no file");
  refused(get(port(), "/download_file/..%2F..%2Fetc%2Fpasswd"), 404, "");
  refused(upload(port(), "alpha beta", "notes.txt", "xx", "zz"), 400, "zz is not supported");
  httplib::Client c("127.0.0.1", port());
  refused(make_reply(c.Post("/translate_file", httplib::MultipartFormDataItems{{"source", "xx", "", ""}})), 400,
          "missing file");
  // Nothing was kept of any of them.
  for (const auto& e : fs::directory_iterator(*files_)) {
    const std::string name = e.path().filename().string();
    EXPECT_TRUE(name.ends_with(".txt") || name.ends_with(".html") || name.ends_with(".docx")) << name;
    EXPECT_FALSE(name.ends_with("big.txt") || name.ends_with(".pdf")) << name;
  }
  const Reply settings = get(port(), "/frontend/settings");
  EXPECT_EQ(settings.body["filesTranslation"], true);
  EXPECT_EQ(settings.body["supportedFilesFormat"], json({".txt", ".html", ".htm", ".md", ".docx", ".odt"}));
}

// /v1 with a format: the document's translation, and each sentence as a line with its alignment.
TEST_F(DocumentsServe, V1TranslatesDocumentsAndAnswersEachSentence) {
  const Reply r = post_json(port(), "/v1/translate",
                            {{"model", "xx-yy"},
                             {"q", "alpha beta gamma delta\n\nkappa lambda sigma omega"},
                             {"format", "text"},
                             {"alignment", true}});
  ASSERT_EQ(r.status, 200) << r.text;
  const json& t = r.body["translations"][0];
  EXPECT_EQ(t["text"], translate_line("alpha beta gamma delta") + "\n\n" + translate_line("kappa lambda sigma omega"));
  ASSERT_EQ(t["sentences"].size(), 2u) << r.text;
  EXPECT_EQ(t["sentences"][1]["source"], "kappa lambda sigma omega");
  EXPECT_EQ(t["sentences"][1]["text"], translate_line("kappa lambda sigma omega"));
  EXPECT_TRUE(t["sentences"][0]["alignment"].is_string()) << r.text;
  // Lines stay lines: a line break in a text of format "lines" is refused, as before.
  const Reply lines = post_json(port(), "/v1/translate", {{"model", "xx-yy"}, {"q", "alpha beta\ngamma"}});
  EXPECT_EQ(lines.status, 400);
  EXPECT_NE(lines.text.find("or give a format"), std::string::npos) << lines.text;
  const Reply nbest =
      post_json(port(), "/v1/translate", {{"model", "xx-yy"}, {"q", "alpha beta"}, {"format", "html"}, {"n_best", 2}});
  EXPECT_EQ(nbest.status, 400);
  EXPECT_NE(nbest.text.find("n_best must be 1"), std::string::npos) << nbest.text;
}

}  // namespace
}  // namespace attn::serve
