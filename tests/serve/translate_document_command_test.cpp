// `attn translate` with documents, as a user runs it, on the word-reversal model (serve_test.cpp):
// each sentence must come back as `attn translate` translates it alone, in the document's format and
// layout, read back by other parsers (Python's html.parser, python-docx, odfpy); lines stay lines.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/run_attn.h"
#include "common/temp_dir.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using testing::run_attn;

const std::string kModel = std::string(ATTN_SERVE_MODEL_DIR) + "/model";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class TranslateDocument : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::fresh_temp_dir("translate_document"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string line(const std::string& text) {
    std::ofstream(dir_ / "line.txt") << text << "\n";
    const auto r = run_attn("translate -q -m " + kModel + " -i " + (dir_ / "line.txt").string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::string out = r.output;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }
  std::string python(const std::string& code) {
    std::ofstream(dir_ / "code.py") << code;
    const std::string cmd = "cd " + dir_.string() + " && /usr/bin/python3 code.py > py.out 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << slurp(dir_ / "py.out");
    return slurp(dir_ / "py.out");
  }
  fs::path dir_;
};

TEST_F(TranslateDocument, MarkdownKeepsItsSyntax) {
  std::ofstream(dir_ / "in.md") << "# alpha beta gamma delta\n\n- kappa lambda sigma omega\n\n```\nriver stone\n```\n";
  const auto r =
      run_attn("translate -q -m " + kModel + " -i " + (dir_ / "in.md").string() + " -o " + (dir_ / "out.md").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(slurp(dir_ / "out.md"), "# " + line("alpha beta gamma delta") + "\n\n- " +
                                        line("kappa lambda sigma omega") + "\n\n```\nriver stone\n```\n");
}

TEST_F(TranslateDocument, OdtParagraphsAndSpans) {
  python(R"(
from odf.opendocument import OpenDocumentText
from odf.style import Style, TextProperties
from odf.text import P, Span
doc = OpenDocumentText()
bold = Style(name="B", family="text"); bold.addElement(TextProperties(fontweight="bold"))
doc.automaticstyles.addElement(bold)
p = P(text="alpha "); s = Span(stylename=bold, text="beta"); p.addElement(s); p.addText(" gamma delta")
doc.text.addElement(p)
doc.text.addElement(P(text="kappa lambda sigma omega"))
doc.save("in.odt")
)");
  const auto r = run_attn("translate -q -m " + kModel + " -i " + (dir_ / "in.odt").string() + " -o " +
                          (dir_ / "out.odt").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string read = python(R"(
from odf.opendocument import load
from odf import teletype
from odf.text import P, Span
d = load("out.odt")
for p in d.getElementsByType(P):
    print(teletype.extractText(p) + " | spans: " + " ".join(teletype.extractText(s) for s in p.getElementsByType(Span)))
)");
  EXPECT_NE(read.find(line("alpha beta gamma delta") + " | spans: beta"), std::string::npos) << read;
  EXPECT_NE(read.find(line("kappa lambda sigma omega") + " | spans: \n"), std::string::npos) << read;
}

TEST_F(TranslateDocument, LinesStayLinesAndDocumentsRefuseLineOptions) {
  std::ofstream(dir_ / "in.txt") << "alpha beta\n\ngamma delta\n";
  // No format: one sentence per line, the blank line a blank line, as always.
  auto r = run_attn("translate -q -m " + kModel + " -i " + (dir_ / "in.txt").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, line("alpha beta") + "\n\n" + line("gamma delta") + "\n");
  r = run_attn("translate -q -m " + kModel + " --format text --n-best 2 -i " + (dir_ / "in.txt").string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--n-best, --alignment and --attention work one line at a time"), std::string::npos)
      << r.output;
  // A file that is not what the format says: named, refused, no output written.
  r = run_attn("translate -q -m " + kModel + " --format docx -i " + (dir_ / "in.txt").string() + " -o " +
               (dir_ / "out.docx").string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find((dir_ / "in.txt").string()), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "out.docx"));
  std::ofstream(dir_ / "junk.html", std::ios::binary) << std::string("<p>a\0b</p>", 10);
  r = run_attn("translate -q -m " + kModel + " -i " + (dir_ / "junk.html").string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("junk.html"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace attn
