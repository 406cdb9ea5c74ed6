// How well detect_language (document/language_detection.h) names the language of texts whose
// language is known: whole lines, and fragments of 1, 2 and 3 consecutive words of them.
//
//   language_detection_eval --file corpus/test.kjv:en --file corpus/test.web:en --file corpus/test.es:es
//       --allowed en,es
//
// How it counts is kAbout below (language_detection_eval --help prints it).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "bench_cli.h"
#include "document/language_detection.h"

namespace {

const char* const kAbout =
    R"(language_detection_eval: how well detect_language (document/language_detection.h) names the
language of texts whose language is known: whole lines, and fragments of 1, 2 and 3 consecutive words
of them.
Each file holds one text per line (empty lines are skipped); after the last ':' of --file comes the
language of every line, spelled as in --allowed. From each line of n words (split at white space)
come, for k = 1, 2, 3 where n >= k: its first k words, and its k middle words (from word (n-k)/2)
where they are not the first ones. An answer is correct when detect_language's first language is the
line's; no answer (an empty result) counts as wrong. Prints, per file and over all files, one row per
kind of text: how many, the share correct, the share without answer, and the mean confidence of the
correct answers and of the wrong ones (answers naming another language).
Example: language_detection_eval --file corpus/test.kjv:en --file corpus/test.es:es --allowed en,es)";

constexpr int kKinds = 4;  // whole lines, then fragments of 1, 2 and 3 words
const char* const kKindNames[kKinds] = {"whole line", "1 word", "2 words", "3 words"};

struct Tally {
  long texts = 0, correct = 0, unanswered = 0;
  double confidence_correct = 0, confidence_wrong = 0;

  void add(const std::vector<attn::document::DetectedLanguage>& result, const std::string& truth) {
    ++texts;
    if (result.empty()) {
      ++unanswered;
    } else if (result.front().language == truth) {
      ++correct;
      confidence_correct += result.front().confidence;
    } else {
      confidence_wrong += result.front().confidence;
    }
  }
  void add(const Tally& o) {
    texts += o.texts;
    correct += o.correct;
    unanswered += o.unanswered;
    confidence_correct += o.confidence_correct;
    confidence_wrong += o.confidence_wrong;
  }
};

struct FileSpec {
  std::string path, language;
};

std::vector<std::string> split_words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::string join(const std::vector<std::string>& words, std::size_t begin, std::size_t count) {
  std::string out;
  for (std::size_t i = begin; i < begin + count; ++i) out += (i > begin ? " " : "") + words[i];
  return out;
}

std::string percent(long part, long whole) {
  if (whole == 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", 100.0 * part / whole);
  return buf;
}

std::string mean(double sum, long n) {
  if (n == 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", sum / n);
  return buf;
}

int name_width = 7;  // the widest --file path, for the first column

void print_rows(const std::string& name, const std::string& language, const Tally (&tallies)[kKinds]) {
  for (int k = 0; k < kKinds; ++k) {
    const Tally& t = tallies[k];
    const long wrong = t.texts - t.correct - t.unanswered;
    std::printf("%-*s %-6s %-10s %8ld %9s %9s %9s %9s\n", name_width, name.c_str(), language.c_str(), kKindNames[k],
                t.texts, percent(t.correct, t.texts).c_str(), percent(t.unanswered, t.texts).c_str(),
                mean(t.confidence_correct, t.correct).c_str(), mean(t.confidence_wrong, wrong).c_str());
  }
}

// A whole line detected wrongly, as --show-wrong prints it: file:line, the answer (or "-"), the text.
void show_wrong(const FileSpec& f, long line_number, const std::vector<attn::document::DetectedLanguage>& result,
                const std::string& line) {
  std::string answer = "-";
  if (!result.empty()) answer = result.front().language + " " + mean(result.front().confidence, 1);
  std::fprintf(stderr, "wrong: %s:%ld: %s: %s\n", f.path.c_str(), line_number, answer.c_str(), line.c_str());
}

int run(const std::vector<std::string>& file_args, const std::vector<std::string>& allowed_args, bool wrong_lines) {
  std::vector<std::string> allowed;
  for (const std::string& code : allowed_args)
    if (!code.empty()) allowed.push_back(code);
  if (allowed.empty()) throw CLI::ValidationError("--allowed", "no language given");
  std::vector<FileSpec> files;
  for (const std::string& value : file_args) {
    const std::size_t colon = value.rfind(':');
    files.push_back({value.substr(0, colon), value.substr(colon + 1)});
  }
  for (const FileSpec& f : files) {
    if (!std::ifstream(f.path, std::ios::binary)) {
      std::fprintf(stderr, "language_detection_eval: %s: cannot open\n", f.path.c_str());
      return 2;
    }
    name_width = std::max(name_width, static_cast<int>(f.path.size()));
  }
  std::printf("%-*s %-6s %-10s %8s %9s %9s %9s %9s\n", name_width, "file", "lang", "text", "texts", "correct",
              "no answer", "conf ok", "conf wrong");
  Tally overall[kKinds];
  const auto start = std::chrono::steady_clock::now();
  long calls = 0;
  for (const FileSpec& f : files) {
    std::ifstream in(f.path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "language_detection_eval: %s: cannot open\n", f.path.c_str());
      return 2;
    }
    Tally tallies[kKinds];
    long line_number = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_number;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      const std::vector<std::string> words = split_words(line);
      if (words.empty()) continue;
      const auto whole = attn::document::detect_language(line, allowed);
      tallies[0].add(whole, f.language);
      if (wrong_lines && (whole.empty() || whole.front().language != f.language))
        show_wrong(f, line_number, whole, line);
      ++calls;
      for (std::size_t k = 1; k < kKinds; ++k) {
        if (words.size() < k) continue;
        const std::size_t middle = (words.size() - k) / 2;
        for (std::size_t begin : {std::size_t{0}, middle}) {
          tallies[k].add(attn::document::detect_language(join(words, begin, k), allowed), f.language);
          ++calls;
          if (middle == 0) break;  // the middle words are the first ones
        }
      }
    }
    print_rows(f.path, f.language, tallies);
    for (int k = 0; k < kKinds; ++k) overall[k].add(tallies[k]);
  }
  print_rows("overall", "", overall);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%ld detections in %.2f s (%.1f us each)\n", calls, seconds, calls ? 1e6 * seconds / calls : 0.0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{kAbout, "language_detection_eval"};
  std::vector<std::string> files, allowed;
  app.add_option("--file", files, "a file of texts and their language (repeat it for more files)")
      ->required()
      ->expected(1)
      ->take_all()
      ->check(CLI::Validator(
          [](std::string& value) -> std::string {
            const std::size_t colon = value.rfind(':');
            if (colon == std::string::npos || colon == 0 || colon + 1 == value.size())
              return "expected PATH:LANG, got '" + value + "'";
            return "";
          },
          "PATH:LANG"));
  app.add_option("--allowed", allowed, "the languages detect_language may answer, LANG,LANG,...")
      ->required()
      ->delimiter(',')
      ->take_all();
  bool wrong_lines = false;
  app.add_flag("--show-wrong", wrong_lines,
               "list each whole line detected wrongly or not at all on stderr (file:line: answer confidence: text)");
  return attn::bench::run_main(app, argc, argv, [&] { return run(files, allowed, wrong_lines); });
}
