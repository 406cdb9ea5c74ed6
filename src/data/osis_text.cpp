#include "data/osis_text.h"

#include <utilxml.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

#include "core/utf8.h"

namespace attn::data {
namespace {

using namespace std::string_view_literals;

// Elements that only mark up words in running text; all other elements are blocks or milestones.
constexpr std::array kInlineElements = {"w"sv,       "transChange"sv, "divineName"sv, "q"sv,    "seg"sv,
                                        "foreign"sv, "name"sv,        "hi"sv,         "rdg"sv,  "catchWord"sv,
                                        "abbr"sv,    "mentioned"sv,   "date"sv,       "term"sv, "a"sv};

// Divisions that are not scripture: front and back matter a module may hang onto a verse.
constexpr std::array kNonScriptureDivisions = {
    "introduction"sv, "glossary"sv,        "front"sv,      "back"sv,           "preface"sv,
    "colophon"sv,     "titlePage"sv,       "coverPage"sv,  "index"sv,          "appendix"sv,
    "bibliography"sv, "acknowledgement"sv, "dedication"sv, "publicationData"sv};

// Spanish object pronouns that RV1909 adds to the preceding verb as a separate <transChange>
// ("sáca<transChange>lo</transChange>" is "sácalo").
constexpr std::array kEncliticPronouns = {"lo"sv, "la"sv, "le"sv, "los"sv, "las"sv, "les"sv,
                                          "me"sv, "te"sv, "se"sv, "nos"sv, "os"sv};

// Words that are not verbs: a pronoun after them stands on its own ("no lo hizo", "como lo dijo").
constexpr std::array kNonVerbsBeforePronouns = {"no"sv,   "ni"sv, "y"sv,     "e"sv,     "que"sv,
                                                "como"sv, "os"sv, "ellos"sv, "cuánto"sv};

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string_view attribute(const sword::XMLTag& tag, const char* name) {
  const char* value = tag.getAttribute(name);
  return value ? std::string_view(value) : std::string_view();
}

// Elements whose whole content is left out of the verse text.
bool hides_content(const sword::XMLTag& tag) {
  const std::string_view name = tag.getName();
  if (name == "note" || name == "speaker") return true;
  if (name == "title") return attribute(tag, "canonical") != "true";
  if (name == "div") return contains(kNonScriptureDivisions, attribute(tag, "type"));
  return false;
}

// The code point that ends the text.
char32_t last_code_point(std::string_view text) {
  std::size_t i = text.size();
  while (i > 0 && (static_cast<unsigned char>(text[i - 1]) & 0xC0) == 0x80) --i;
  return i > 0 ? decode_utf8_at(text, i - 1).code_point : 0;
}

bool is_opening_punctuation(char32_t c) {
  return c == U'(' || c == U'[' || c == U'{' || c == U'“' || c == U'‘' || c == U'¿' || c == U'¡' || c == U'«' ||
         c == U'—';
}

bool is_closing_punctuation(char32_t c) {
  return c == U'.' || c == U',' || c == U';' || c == U':' || c == U'!' || c == U'?' || c == U')' || c == U']' ||
         c == U'}' || c == U'”' || c == U'’' || c == U'»' || c == U'…' || c == U'—';
}

// The character an entity such as "&amp;" or "&#233;" stands for (entity without '&' and ';').
std::optional<char32_t> entity_value(std::string_view entity) {
  if (entity == "amp") return U'&';
  if (entity == "lt") return U'<';
  if (entity == "gt") return U'>';
  if (entity == "quot") return U'"';
  if (entity == "apos") return U'\'';
  if (entity.size() < 2 || entity[0] != '#') return std::nullopt;
  const bool hex = entity[1] == 'x' || entity[1] == 'X';
  const std::string_view digits = entity.substr(hex ? 2 : 1);
  if (digits.empty() || digits.size() > 8) return std::nullopt;
  std::uint32_t value = 0;
  for (char d : digits) {
    int v;
    if (d >= '0' && d <= '9')
      v = d - '0';
    else if (hex && d >= 'a' && d <= 'f')
      v = d - 'a' + 10;
    else if (hex && d >= 'A' && d <= 'F')
      v = d - 'A' + 10;
    else
      return std::nullopt;
    value = value * (hex ? 16 : 10) + static_cast<std::uint32_t>(v);
  }
  if (value == 0 || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return std::nullopt;
  return static_cast<char32_t>(value);
}

struct Entity {
  char32_t value;
  std::size_t length;  // of "&...;" in the text
};

// The entity that starts at text[i] (an '&'), if it is one we know.
std::optional<Entity> entity_at(std::string_view text, std::size_t i) {
  const std::size_t semicolon = text.find(';', i);
  if (semicolon == std::string_view::npos) return std::nullopt;
  const auto value = entity_value(text.substr(i + 1, semicolon - i - 1));
  if (!value) return std::nullopt;
  return Entity{*value, semicolon + 1 - i};
}

// Length of a USFM character marker such as "\nd" or "\+nd*" at text[i], or 0 if there is none.
std::size_t usfm_marker_length(std::string_view text, std::size_t i) {
  std::size_t k = i + 1;
  if (k < text.size() && text[k] == '+') ++k;
  const std::size_t letters = k;
  while (k < text.size() && text[k] >= 'a' && text[k] <= 'z') ++k;
  if (k == letters) return 0;
  while (k < text.size() && text[k] >= '0' && text[k] <= '9') ++k;
  if (k < text.size() && text[k] == '*') ++k;
  return k - i;
}

void add_strong_numbers(std::string_view lemma, std::vector<std::string>& out) {
  // lemma="strong:H0430", "strong:G1 G2" or "strong:G1 strong:G2"; other lemma kinds are ignored.
  std::size_t i = 0;
  while (i < lemma.size()) {
    while (i < lemma.size() && lemma[i] == ' ') ++i;
    std::size_t end = lemma.find(' ', i);
    if (end == std::string_view::npos) end = lemma.size();
    std::string_view token = lemma.substr(i, end - i);
    i = end;
    if (token.starts_with("strong:")) token.remove_prefix(7);
    if (token.size() < 2 || (token[0] != 'H' && token[0] != 'G')) continue;
    std::string_view digits = token.substr(1);
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    while (digits.size() > 1 && digits[0] == '0') digits.remove_prefix(1);
    out.push_back(token[0] + std::string(digits));
  }
}

class OsisReader {
 public:
  explicit OsisReader(std::string_view markup) : markup_(markup) {}

  OsisVerse read() {
    std::size_t i = 0;
    while (i < markup_.size()) {
      const std::size_t tag_end = markup_[i] == '<' ? markup_.find('>', i) : std::string_view::npos;
      if (tag_end != std::string_view::npos) {
        on_tag(std::string(markup_.substr(i, tag_end + 1 - i)), tag_end + 1);
        i = tag_end + 1;
      } else {
        std::size_t text_end = markup_.find('<', i + 1);
        if (text_end == std::string_view::npos) text_end = markup_.size();
        if (!hidden()) on_text(markup_.substr(i, text_end - i));
        i = text_end;
      }
    }
    while (!open_words_.empty()) close_word();  // a <w> left open runs to the end of the verse
    assign_numbers_to_words();
    return std::move(verse_);
  }

 private:
  bool hidden() const { return hidden_depth_ > 0 || !hidden_milestones_.empty(); }

  void on_tag(const std::string& source, std::size_t after) {
    sword::XMLTag tag(source.c_str());
    const std::string_view name = tag.getName();
    const bool closing = tag.isEndTag();
    const bool empty = tag.isEmpty();
    if (hidden_depth_ > 0) {  // inside a dropped element: only look for its end
      if (name == hidden_element_ && !empty) hidden_depth_ += closing ? -1 : 1;
      if (hidden_depth_ == 0) break_words();
      return;
    }
    if (!hidden_milestones_.empty()) {  // inside a dropped division: only look for its end
      if (empty && hides_content(tag) && !attribute(tag, "sID").empty()) {
        hidden_milestones_.emplace_back(attribute(tag, "sID"));
      }
      std::erase(hidden_milestones_, std::string(attribute(tag, "eID")));
      if (hidden_milestones_.empty()) break_words();
      return;
    }
    if (!closing && hides_content(tag)) {
      const std::string_view start_id = attribute(tag, "sID");
      if (empty && !start_id.empty()) {
        hidden_milestones_.emplace_back(start_id);
      } else if (!empty) {
        hidden_element_ = std::string(name);
        hidden_depth_ = 1;
      }
      break_words();
      return;
    }
    if (!contains(kInlineElements, name)) {
      break_words();
      inline_just_closed_ = false;
      return;
    }
    if (!closing && !empty) {
      if (inline_just_closed_ && !is_enclitic(name, after)) break_words();
      if (name == "w") {
        std::vector<std::string> numbers;
        add_strong_numbers(attribute(tag, "lemma"), numbers);
        verse_.strong_numbers.insert(verse_.strong_numbers.end(), numbers.begin(), numbers.end());
        open_words_.push_back({verse_.text.size(), verse_.text.size(), std::move(numbers)});
      }
    } else if (closing && name == "w" && !open_words_.empty()) {
      close_word();
    }
    inline_just_closed_ = closing;
  }

  // The innermost open <w> ends where the text now ends. Its span may begin with the space that
  // separates it from the word before (spaces are written lazily, before the next character), which
  // belongs to no word.
  void close_word() {
    TaggedSpan span = std::move(open_words_.back());
    open_words_.pop_back();
    span.end = verse_.text.size();
    if (span.end > span.begin && !span.numbers.empty()) tagged_spans_.push_back(std::move(span));
  }

  // Gives each word of the finished text the numbers of the spans that share a character with it.
  void assign_numbers_to_words() {
    const std::string_view text = verse_.text;
    if (text.empty()) return;
    std::stable_sort(tagged_spans_.begin(), tagged_spans_.end(),
                     [](const TaggedSpan& a, const TaggedSpan& b) { return a.begin < b.begin; });
    std::size_t word_begin = 0;
    while (word_begin <= text.size()) {
      std::size_t word_end = text.find(' ', word_begin);
      if (word_end == std::string_view::npos) word_end = text.size();
      std::vector<std::string>& numbers = verse_.word_strong_numbers.emplace_back();
      for (const TaggedSpan& span : tagged_spans_) {
        if (span.begin >= word_end) break;
        if (span.end <= word_begin) continue;
        for (const std::string& number : span.numbers) {
          if (std::find(numbers.begin(), numbers.end(), number) == numbers.end()) numbers.push_back(number);
        }
      }
      word_begin = word_end + 1;
    }
  }

  // A <transChange> holding nothing but an object pronoun, which belongs to the verb before it.
  bool is_enclitic(std::string_view name, std::size_t content_start) const {
    if (name != "transChange") return false;
    const std::size_t content_end = markup_.find("</transChange>", content_start);
    if (content_end == std::string_view::npos) return false;
    if (!contains(kEncliticPronouns, markup_.substr(content_start, content_end - content_start))) return false;
    const std::string_view text = verse_.text;
    const std::size_t space = text.rfind(' ');
    std::string previous_word(text.substr(space == std::string_view::npos ? 0 : space + 1));
    if (!previous_word.empty() && previous_word[0] >= 'A' && previous_word[0] <= 'Z') previous_word[0] += 'a' - 'A';
    return !contains(kNonVerbsBeforePronouns, previous_word);
  }

  void on_text(std::string_view text) {
    inline_just_closed_ = false;
    for (std::size_t i = 0; i < text.size();) {
      const char c = text[i];
      if (static_cast<unsigned char>(c) <= ' ' || c == '\x7F') {  // whitespace and control characters
        space_between_words();
        ++i;
      } else if (text.substr(i).starts_with("¶")) {
        space_between_words();
        i += std::string_view("¶").size();
      } else if (c == '\\' && usfm_marker_length(text, i) > 0) {
        i += usfm_marker_length(text, i);
      } else if (const auto entity = c == '&' ? entity_at(text, i) : std::nullopt) {
        if (entity->value <= U' ') {
          space_between_words();
        } else {
          std::string decoded;
          append_utf8(decoded, entity->value);
          emit(decoded);
        }
        i += entity->length;
      } else {
        std::size_t end = i + 1;
        while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
        emit(text.substr(i, end - i));
        i = end;
      }
    }
  }

  // Appends one character, preceded by the space that whitespace or a dropped element left.
  void emit(std::string_view character) {
    std::string& out = verse_.text;
    if (!out.empty() && out.back() != ' ') {
      if (space_pending_) {
        out += ' ';
      } else if (break_pending_ && !is_opening_punctuation(last_code_point(out)) &&
                 (character.empty() || !is_closing_punctuation(decode_utf8_at(character, 0).code_point))) {
        out += ' ';
      }
    }
    space_pending_ = break_pending_ = false;
    out += character;
  }

  // Whitespace around a dropped element belongs to it: WEB has "coins</q> <note>…</note> <q>? Not",
  // which reads "coins? Not".
  void space_between_words() {
    if (!break_pending_) space_pending_ = true;
  }
  void break_words() {
    break_pending_ = true;
    space_pending_ = false;
  }

  // A <w> with Strong's numbers: the bytes [begin, end) of the cleaned text its content became.
  struct TaggedSpan {
    std::size_t begin = 0;
    std::size_t end = 0;
    std::vector<std::string> numbers;
  };

  std::string_view markup_;
  OsisVerse verse_;
  std::vector<TaggedSpan> open_words_;          // <w> elements not yet closed, innermost last
  std::vector<TaggedSpan> tagged_spans_;        // closed ones with content and numbers
  std::string hidden_element_;                  // name of the dropped element we are inside
  int hidden_depth_ = 0;                        // nesting of hidden_element_ inside itself
  std::vector<std::string> hidden_milestones_;  // sIDs of open non-scripture milestone divisions
  bool space_pending_ = false;                  // whitespace seen since the last character
  bool break_pending_ = false;                  // a dropped element since the last character
  bool inline_just_closed_ = false;             // the last token was the end tag of an inline element
};

}  // namespace

OsisVerse parse_osis_verse(std::string_view markup) { return OsisReader(markup).read(); }

}  // namespace attn::data
