#pragma once
// One verse of OSIS markup, as stored in a SWORD module, turned into plain text and the Strong's
// numbers of its words.
//
// What is kept and what goes:
//  - Every word of the verse is kept, including words inside <w>, <transChange>, <divineName>, <q>,
//    <seg>, <foreign> and other inline elements. Casing and punctuation are kept.
//  - Dropped with their content: notes (<note>, with everything nested inside), headings (<title>)
//    except canonical ones (<title canonical="true">, the psalm superscriptions, which are part of
//    the verse and which RV1909 carries as plain text), speaker labels (<speaker>), and
//    non-scripture divisions (<div type="introduction|glossary|front|back|...">, either as a
//    container or as sID/eID milestones; WEB appends its glossary to Rev 22:21 this way).
//  - Dropped as markup: every tag (milestones, div, chapter, l, lg, lb, ...), the pilcrow ¶ (a
//    typographic paragraph sign, not a word), and USFM character markers left in the text by the
//    converter (KJV has "\nd LORD\+nd*").
//  - Entities are unescaped: &amp; &lt; &gt; &quot; &apos; and numeric ones (&#233; &#xE9;).
//  - Whitespace: every run becomes one space; the text is trimmed.
//
// Where a dropped element stood, words must neither be glued nor be pulled away from their
// punctuation. A dropped element (a note, a heading, a block or milestone tag), together with any
// whitespace around it, therefore becomes one space, except after opening punctuation ( [ “ ‘ ¿ ¡
// — and before closing punctuation . , ; : ! ? ) ] ” ’ … —, where it becomes nothing. So WEB's
// "God<note>…</note><w>created</w>" gives "God created", "said,<note>…</note>and" gives
// "said, and" (a rule spacing only between two letters would glue these), "word<note/>." gives
// "word.", and "coins</q> <note>…</note> <q>? Not" gives "coins? Not". Whitespace away from dropped
// elements is kept as one space wherever it is. Inline elements never add a space where the
// markup has none (KJV splits words across tags: "<w>with tear</w>s"), except where one inline
// element ends and another begins directly: RV1909 lost the space there ("<w>hay allí</w>
// <transChange>también</transChange>" with nothing between). The exception to that exception
// is a lone Spanish object pronoun added in <transChange> straight after the verb it belongs to
// ("<w>sáca</w><transChange>lo</transChange>" is "sácalo"; after "no", "y", "que", "como" and a
// few other words that are not verbs it stands alone: "Y no lo hizo saber").
//
// Strong's numbers per word: the words of the text are exactly text split on ' ', and word k
// carries the numbers of every <w lemma="strong:..."> whose kept content shares at least one
// character with word k. So a <w> spanning several words gives its numbers to each of them
// ("<w lemma="strong:H7225">EN el principio</w>": all three), a word that a tag covers only in part
// carries the tag ("<w lemma="strong:G1144">with tear</w>s": "with" and "tears"), a word covered by
// several tags carries all their numbers, and text dropped by the cleaner (notes, headings) never
// shifts a word's index, because the spans are measured on the cleaned text. A <w> whose content
// is all dropped (or empty) gives its numbers to no word.
#include <string>
#include <string_view>
#include <vector>

namespace attn::data {

struct OsisVerse {
  std::string text;                         // plain UTF-8 text, see above
  std::vector<std::string> strong_numbers;  // "H7225", "G26": leading zeros dropped, in text order
  // One entry per word of text (text split on ' '; none for an empty text): the word's numbers,
  // normalised as strong_numbers, in the order their tags open, each once.
  std::vector<std::vector<std::string>> word_strong_numbers;
};

// Reads one verse. Markup that is not well formed (a '<' without '>') is kept as text, never thrown.
OsisVerse parse_osis_verse(std::string_view markup);

inline std::string osis_to_plain_text(std::string_view markup) { return parse_osis_verse(markup).text; }

}  // namespace attn::data
