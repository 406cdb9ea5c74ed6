// Office files: .docx made by python-docx and .odt made by odfpy, read, "translated" (upper case,
// or text moved around by a hostile translation), written, and checked by python-docx, odfpy, lxml
// and Python's zipfile; hand-worked paragraphs; damaged, hostile and wrong packages.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <zip.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

#include "common/temp_dir.h"
#include "core/error.h"
#include "document/office_document.h"

namespace attn::document {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const fs::path& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

// Runs a Python script with Debian's python3 (python-docx, odfpy and lxml are Debian packages);
// returns its exit code and output.
std::pair<int, std::string> python(const fs::path& dir, const std::string& script, const std::string& args) {
  const fs::path file = dir / "script.py";
  write_file(file, script);
  FILE* pipe = popen(("/usr/bin/python3 " + file.string() + " " + args + " 2>&1").c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  std::string out;
  std::array<char, 4096> buffer;
  std::size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// A zip written by libzip from (name, bytes, stored) entries, in order.
std::string make_zip(const std::vector<std::tuple<std::string, std::string, bool>>& entries) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* buffer = zip_source_buffer_create(nullptr, 0, 0, &error);
  zip_source_keep(buffer);
  zip_t* za = zip_open_from_source(buffer, ZIP_TRUNCATE, &error);
  for (const auto& [name, bytes, stored] : entries) {
    zip_source_t* s = zip_source_buffer(za, bytes.data(), bytes.size(), 0);
    const zip_int64_t i = zip_file_add(za, name.c_str(), s, 0);
    zip_set_file_compression(za, static_cast<zip_uint64_t>(i), stored ? ZIP_CM_STORE : ZIP_CM_DEFLATE, 0);
  }
  zip_close(za);
  zip_stat_t st;
  zip_source_stat(buffer, &st);
  std::string out(st.size, '\0');
  zip_source_open(buffer);
  zip_source_read(buffer, out.data(), out.size());
  zip_source_close(buffer);
  zip_source_free(buffer);
  return out;
}

constexpr const char* kWordNs =
    "xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\" "
    "xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\"";

std::string docx_of(const std::string& body) {
  return make_zip({{"[Content_Types].xml", "<Types/>", false},
                   {"word/document.xml",
                    std::string("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<w:document ") + kWordNs + "><w:body>" +
                        body + "</w:body></w:document>",
                    false}});
}

std::vector<std::string> rendered(const Document& d, bool upper) {
  std::vector<std::string> out;
  for (Segment s : d.segments) {
    if (upper)
      for (char& c : s.text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    out.push_back(render_segment(s, d.escape));
  }
  return out;
}

// The package written with every segment upper-cased (ASCII: the spans stay where they were).
std::string write_translated(const std::string& bytes, const OfficeFile& file, bool upper) {
  std::vector<std::string> parts;
  for (const OfficePart& p : file.parts) parts.push_back(assemble(p.document, rendered(p.document, upper)));
  return write_office(bytes, file, parts);
}

std::string part_names(const OfficeFile& f) {
  std::string names;
  for (const auto& p : f.parts) names += (names.empty() ? "" : ",") + p.name;
  return names;
}

// --- python-docx and odfpy: made there, checked there -------------------------------------------

const char* kMakeDocx = R"(
import sys, docx
from docx.oxml.shared import OxmlElement, qn
from docx.opc.constants import RELATIONSHIP_TYPE as RT
d = docx.Document()
d.add_heading('The title', level=1)
p = d.add_paragraph('Hello ')
r = p.add_run('bold'); r.bold = True
p.add_run(' and ')
r = p.add_run('ital'); r.italic = True
r = p.add_run('ic'); r.italic = True        # one word over two runs of the same formatting
p.add_run(' world & <more>. ')
r = p.add_run('Both'); r.bold = True; r.italic = True
p = d.add_paragraph('Visit ')
link = OxmlElement('w:hyperlink')
link.set(qn('r:id'), d.part.relate_to('http://example.org/', RT.HYPERLINK, is_external=True))
for text, bold in (('our ', False), ('site', True)):
    r = OxmlElement('w:r'); rpr = OxmlElement('w:rPr')
    u = OxmlElement('w:u'); u.set(qn('w:val'), 'single'); rpr.append(u)
    if bold: rpr.append(OxmlElement('w:b'))
    r.append(rpr); t = OxmlElement('w:t'); t.text = text; r.append(t); link.append(r)
p._p.append(link)
p.add_run(' today.')
t = d.add_table(rows=2, cols=2)
t.style = 'Table Grid'
t.cell(0, 0).text = 'cell one'
t.cell(1, 1).paragraphs[0].add_run('cell four').underline = True
d.sections[0].header.paragraphs[0].text = 'The header'
d.sections[0].footer.paragraphs[0].text = 'The footer'
d.add_paragraph('Tab\there')
d.add_paragraph('')
d.add_paragraph('Quote', style='Intense Quote')
d.save(sys.argv[1])
)";

// Per paragraph (body, tables, header, footer): text, style, and per character its run's bold,
// italic, underline (python-docx), and its run's whole w:rPr and hyperlink (lxml, which also sees
// the runs inside hyperlinks that python-docx 0.8 does not); the tables; the zip's entries.
const char* kCheckDocx = R"(
import sys, zipfile, docx
from lxml import etree
orig, out, parts = sys.argv[1], sys.argv[2], sys.argv[3].split(',')
up = str.upper if sys.argv[4] == 'upper' else (lambda s: s)
W = '{http://schemas.openxmlformats.org/wordprocessingml/2006/main}'
R = '{http://schemas.openxmlformats.org/officeDocument/2006/relationships}'
errors = []
def paragraphs(d):
    ps = list(d.paragraphs)
    for t in d.tables:
        for row in t.rows:
            for c in row.cells: ps += c.paragraphs
    for s in d.sections: ps += s.header.paragraphs + s.footer.paragraphs
    return ps
def runs(p):
    return [(ch, r.bold, r.italic, r.underline) for r in p.runs for ch in r.text]
def xml_chars(path, part):
    root = etree.fromstring(zipfile.ZipFile(path).read(part))
    result = []
    for p in root.iter(W + 'p'):
        chars = []
        for e in p.iter(W + 't', W + 'tab', W + 'br'):
            if next(e.iterancestors(W + 'p')) is not p: continue
            r = e.getparent()
            rpr = r.find(W + 'rPr')
            key = etree.tostring(rpr, method='c14n', exclusive=True) if rpr is not None else b''
            link = next((a.get(R + 'id') for a in e.iterancestors(W + 'hyperlink')), None)
            text = e.text or '' if e.tag == W + 't' else ('\t' if e.tag == W + 'tab' else '\n')
            chars += [(ch, key, link) for ch in text]
        result.append(chars)
    return result
a, b = docx.Document(orig), docx.Document(out)
pa, pb = paragraphs(a), paragraphs(b)
if len(pa) != len(pb): errors.append('paragraphs: %d then %d' % (len(pa), len(pb)))
for x, y in zip(pa, pb):
    if up(x.text) != y.text: errors.append('text %r became %r' % (x.text, y.text))
    if x.style.name != y.style.name: errors.append('style %s became %s' % (x.style.name, y.style.name))
    if [(up(c),) + tuple(f) for c, *f in runs(x)] != runs(y): errors.append('runs of %r: %r' % (y.text, runs(y)))
if [(t.style.name, len(t.rows), len(t.columns)) for t in a.tables] != [(t.style.name, len(t.rows), len(t.columns)) for t in b.tables]:
    errors.append('tables differ')
for part in parts:
    xa, xb = xml_chars(orig, part), xml_chars(out, part)
    if [[(up(c), k, l) for c, k, l in p] for p in xa] != xb: errors.append(part + ': formatting per character differs')
za, zb = zipfile.ZipFile(orig), zipfile.ZipFile(out)
if [i.filename for i in za.infolist()] != [i.filename for i in zb.infolist()]: errors.append('entries differ')
for i, j in zip(za.infolist(), zb.infolist()):
    if i.compress_type != j.compress_type: errors.append(i.filename + ': compression differs')
    if i.filename not in parts and za.read(i) != zb.read(j): errors.append(i.filename + ': bytes differ')
print('\n'.join(errors) if errors else 'OK')
)";

TEST(OfficeDocument, DocxFromPythonDocxTranslatedKeepsTextFormattingTablesAndEntries) {
  const fs::path dir = testing::fresh_temp_dir("office_docx");
  const auto made = python(dir, kMakeDocx, (dir / "in.docx").string());
  ASSERT_EQ(made.first, 0) << made.second;
  const std::string bytes = read_file(dir / "in.docx");
  const OfficeFile file = read_office(bytes, "docx");
  EXPECT_EQ(part_names(file), "word/document.xml,word/header1.xml,word/footer1.xml");
  std::vector<std::string> texts;
  for (const auto& s : file.parts[0].document.segments) texts.push_back(s.text);
  // Hand-worked: the empty paragraph and the empty table cells are no segments; runs merged.
  EXPECT_EQ(texts, (std::vector<std::string>{"The title", "Hello bold and italic world & <more>. Both",
                                             "Visit our site today.", "cell one", "cell four", "Tabhere", "Quote"}));
  const Segment& hello = file.parts[0].document.segments[1];
  ASSERT_EQ(hello.spans.size(), 3u);
  EXPECT_EQ(hello.spans[1].begin, 15u);  // "ital" + "ic": one element
  EXPECT_EQ(hello.spans[1].end, 21u);
  EXPECT_EQ(hello.spans[1].open, "<w:r><w:rPr><w:i/></w:rPr><w:t xml:space=\"preserve\">");
  EXPECT_EQ(hello.outside_open, "<w:r><w:t xml:space=\"preserve\">");
  for (bool upper : {true, false}) {
    write_file(dir / "out.docx", write_translated(bytes, file, upper));
    const auto checked = python(dir, kCheckDocx,
                                (dir / "in.docx").string() + " " + (dir / "out.docx").string() + " " +
                                    part_names(file) + (upper ? " upper" : " same"));
    EXPECT_EQ(checked.second, "OK\n") << (upper ? "upper case" : "untranslated");
    // And read again by this reader: the same segments.
    const OfficeFile again = read_office(read_file(dir / "out.docx"), "docx");
    ASSERT_EQ(again.parts.size(), file.parts.size());
    for (std::size_t p = 0; p < file.parts.size(); ++p)
      for (std::size_t s = 0; s < file.parts[p].document.segments.size(); ++s) {
        std::string expected = file.parts[p].document.segments[s].text;
        if (upper)
          for (char& c : expected) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        EXPECT_EQ(again.parts[p].document.segments.at(s).text, expected);
      }
  }
}

const char* kMakeOdt = R"(
import sys
from odf.opendocument import OpenDocumentText
from odf.style import Style, TextProperties, MasterPage, PageLayout, Header, Footer
from odf.text import P, H, Span, A, Note, NoteBody, NoteCitation
from odf.table import Table, TableColumn, TableRow, TableCell
from odf import teletype
doc = OpenDocumentText()
bold = Style(name='Bold', family='text'); bold.addElement(TextProperties(fontweight='bold'))
ital = Style(name='Ital', family='text'); ital.addElement(TextProperties(fontstyle='italic'))
for s in (bold, ital): doc.automaticstyles.addElement(s)
layout = PageLayout(name='pm1'); doc.automaticstyles.addElement(layout)
master = MasterPage(name='Standard', pagelayoutname=layout)
h = Header(); h.addElement(P(text='Header text')); master.addElement(h)
f = Footer(); f.addElement(P(text='Footer text')); master.addElement(f)
doc.masterstyles.addElement(master)
doc.text.addElement(H(outlinelevel=1, text='A heading'))
p = P(text='Hello ')
s = Span(stylename=bold, text='bold '); s.addElement(Span(stylename=ital, text='and italic')); p.addElement(s)
p.addText(' world & <more>.')
doc.text.addElement(p)
p = P(); teletype.addTextToElement(p, 'Line one\nLine two\tafter  two spaces'); doc.text.addElement(p)
p = P(text='See '); p.addElement(A(href='http://example.org/', text='the link')); p.addText('.'); doc.text.addElement(p)
p = P(text='Noted')
n = Note(id='ftn1', noteclass='footnote'); n.addElement(NoteCitation(text='1'))
b = NoteBody(); b.addElement(P(text='The note')); n.addElement(b); p.addElement(n)
p.addText(' after the note.')
doc.text.addElement(p)
t = Table(name='T'); t.addElement(TableColumn(numbercolumnsrepeated=2))
for row in (('one', 'two'), ('three', '')):
    tr = TableRow(); t.addElement(tr)
    for v in row:
        c = TableCell(); tr.addElement(c)
        if v: c.addElement(P(text=v))
doc.text.addElement(t)
doc.text.addElement(P(text=''))
doc.save(sys.argv[1])
)";

// Per paragraph (content and the master pages' headers and footers): per character the style of
// its innermost span and the link it is in, text:s, text:tab and text:line-break as characters
// (odfpy); the zip's entries: mimetype first and stored, the order, compression, other entries' bytes.
const char* kCheckOdt = R"(
import sys, zipfile
from odf.opendocument import load
from odf import text
from odf.namespaces import TEXTNS, XLINKNS
orig, out, parts, mode = sys.argv[1], sys.argv[2], sys.argv[3].split(','), sys.argv[4]
up = str.upper if mode == 'upper' else (lambda s: s)
errors = []
def chars(node, style, link, out):
    for c in node.childNodes:
        if c.nodeType == c.TEXT_NODE:
            out += [(ch, style, link) for ch in c.data]
        elif c.qname == (TEXTNS, 'span'): chars(c, c.getAttrNS(TEXTNS, 'style-name'), link, out)
        elif c.qname == (TEXTNS, 'a'): chars(c, style, c.getAttrNS(XLINKNS, 'href'), out)
        elif c.qname == (TEXTNS, 's'): out += [(' ', style, link)] * int(c.getAttrNS(TEXTNS, 'c') or 1)
        elif c.qname == (TEXTNS, 'tab'): out.append(('\t', style, link))
        elif c.qname == (TEXTNS, 'line-break'): out.append(('\n', style, link))
        elif c.qname == (TEXTNS, 'note'): out.append(('[note]', style, link))
    return out
def paragraphs(path):
    d = load(path)
    return [chars(p, None, None, []) for p in d.getElementsByType(text.P) + d.getElementsByType(text.H)]
a, b = paragraphs(orig), paragraphs(out)
if len(a) != len(b): errors.append('paragraphs: %d then %d' % (len(a), len(b)))
for x, y in zip(a, b):
    if [(c if c == '[note]' else up(c), s, l) for c, s, l in x] != y: errors.append('paragraph %r became %r' % (x, y))
za, zb = zipfile.ZipFile(orig), zipfile.ZipFile(out)
first = zb.infolist()[0]
if first.filename != 'mimetype' or first.compress_type != zipfile.ZIP_STORED or first.extra: errors.append('mimetype is not first and stored')
if [i.filename for i in za.infolist()] != [i.filename for i in zb.infolist()]: errors.append('entries differ')
for i, j in zip(za.infolist(), zb.infolist()):
    if i.compress_type != j.compress_type: errors.append(i.filename + ': compression differs')
    if (mode == 'same' or i.filename not in parts) and za.read(i) != zb.read(j): errors.append(i.filename + ': bytes differ')
print('\n'.join(errors) if errors else 'OK')
)";

TEST(OfficeDocument, OdtFromOdfpyTranslatedKeepsSpansAndEntriesAndUntranslatedIsByteIdentical) {
  const fs::path dir = testing::fresh_temp_dir("office_odt");
  const auto made = python(dir, kMakeOdt, (dir / "in.odt").string());
  ASSERT_EQ(made.first, 0) << made.second;
  const std::string bytes = read_file(dir / "in.odt");
  const OfficeFile file = read_office(bytes, "odt");
  EXPECT_EQ(part_names(file), "content.xml,styles.xml");
  std::vector<std::string> texts;
  for (const auto& p : file.parts)
    for (const auto& s : p.document.segments) texts.push_back(s.text);
  // Hand-worked: the note's paragraph is a segment of its own between the two halves of its
  // paragraph; text:s, text:tab and text:line-break are markup, not text.
  EXPECT_EQ(texts, (std::vector<std::string>{"A heading", "Hello bold and italic world & <more>.",
                                             "Line oneLine twoafter two spaces", "See the link.", "Noted", "The note",
                                             " after the note.", "one", "two", "three", "Header text", "Footer text"}));
  const Segment& hello = file.parts[0].document.segments[1];
  ASSERT_EQ(hello.spans.size(), 2u);
  EXPECT_EQ(hello.spans[0].open, "<text:span text:style-name=\"Bold\">");
  EXPECT_EQ(hello.spans[0].begin, 6u);
  EXPECT_EQ(hello.spans[0].end, 21u);
  EXPECT_EQ(hello.spans[1].parent, 0);
  EXPECT_EQ(hello.spans[1].begin, 11u);
  const Segment& lines = file.parts[0].document.segments[2];
  ASSERT_EQ(lines.spans.size(), 3u);
  EXPECT_EQ(lines.spans[0].kind, Span::Kind::empty_element);
  EXPECT_EQ(lines.spans[0].open, "<text:line-break/>");
  EXPECT_EQ(lines.spans[2].open, "<text:s text:c=\"1\"/>");  // as odfpy writes the second space
  const std::string copy = bytes;  // libzip writes the new package beside the bytes it reads, never over them
  for (bool upper : {true, false}) {
    write_file(dir / "out.odt", write_translated(bytes, file, upper));
    EXPECT_EQ(bytes, copy);
    const auto checked = python(dir, kCheckOdt,
                                (dir / "in.odt").string() + " " + (dir / "out.odt").string() + " " + part_names(file) +
                                    (upper ? " upper" : " same"));
    EXPECT_EQ(checked.second, "OK\n") << (upper ? "upper case" : "untranslated");
  }
}

// Hand-worked: runs of the same formatting merged, the most common formatting outside, another as
// an element, a tab inside it, a hyperlink around its run, bookmarks and w:pPr kept literal at the
// ends, entities decoded.
TEST(OfficeDocument, DocxParagraphHandWorked) {
  const std::string body =
      "<w:p><w:pPr><w:pStyle w:val=\"Title\"/></w:pPr><w:bookmarkStart w:id=\"0\" w:name=\"b\"/>"
      "<w:r><w:t>Hel</w:t></w:r><w:r w:rsidR=\"00A1\"><w:t xml:space=\"preserve\">lo </w:t></w:r>"
      "<w:proofErr w:type=\"spellStart\"/>"
      "<w:r><w:rPr><w:b/></w:rPr><w:t>w&amp;</w:t><w:tab/><w:t>&#233;</w:t></w:r>"
      "<w:hyperlink r:id=\"rId5\"><w:r><w:rPr><w:rStyle w:val=\"Hyperlink\"/></w:rPr><w:t>link</w:t></w:r>"
      "</w:hyperlink><w:r><w:t>!</w:t></w:r><w:bookmarkEnd w:id=\"0\"/></w:p>"
      "<w:p><w:pPr/><w:r><w:rPr><w:i/></w:rPr><w:t>Only italic</w:t></w:r></w:p>"
      "<w:p><w:r><w:drawing/></w:r></w:p><w:p><w:r><w:t xml:space=\"preserve\">  </w:t></w:r></w:p>";
  const std::string bytes = docx_of(body);
  const OfficeFile file = read_office(bytes, "docx");
  ASSERT_EQ(file.parts.size(), 1u);
  const Document& d = file.parts[0].document;
  ASSERT_EQ(d.segments.size(), 2u);
  const Segment& s = d.segments[0];
  EXPECT_EQ(s.text, "Hello w&\xC3\xA9link!");
  EXPECT_EQ(s.outside_open, "<w:r><w:t xml:space=\"preserve\">");
  EXPECT_EQ(s.outside_close, "</w:t></w:r>");
  ASSERT_EQ(s.spans.size(), 4u);
  const std::vector<std::tuple<Span::Kind, std::size_t, std::size_t, std::string, std::string, int>> expected = {
      {Span::Kind::empty_element, 6, 6, "<w:proofErr w:type=\"spellStart\"/>", "", -1},
      {Span::Kind::element, 6, 10, "<w:r><w:rPr><w:b/></w:rPr><w:t xml:space=\"preserve\">", "</w:t></w:r>", -1},
      {Span::Kind::empty_element, 8, 8, "</w:t><w:tab/><w:t xml:space=\"preserve\">", "", 1},
      {Span::Kind::element, 10, 14,
       "<w:hyperlink r:id=\"rId5\"><w:r><w:rPr><w:rStyle w:val=\"Hyperlink\"/></w:rPr><w:t xml:space=\"preserve\">",
       "</w:t></w:r></w:hyperlink>", -1}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const Span& sp = s.spans[i];
    EXPECT_EQ(std::make_tuple(sp.kind, sp.begin, sp.end, sp.open, sp.close, sp.parent), expected[i]) << i;
  }
  EXPECT_NO_THROW(check_segment(s, 0));
  EXPECT_EQ(d.segments[1].text, "Only italic");
  EXPECT_EQ(d.segments[1].outside_open, "<w:r><w:rPr><w:i/></w:rPr><w:t xml:space=\"preserve\">");
  EXPECT_TRUE(d.segments[1].spans.empty());
  // The whole part again: the pieces around the segments are the source's bytes.
  const std::string xml = assemble(d, rendered(d, false));
  const std::string copy = bytes;
  const OfficeFile again = read_office(write_office(bytes, file, {xml}), "docx");
  EXPECT_EQ(bytes, copy);
  EXPECT_EQ(again.parts.at(0).document.segments.at(0).text, s.text);
  EXPECT_EQ(xml, std::string("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<w:document ") + kWordNs +
                     "><w:body><w:p><w:pPr><w:pStyle w:val=\"Title\"/></w:pPr><w:bookmarkStart w:id=\"0\" "
                     "w:name=\"b\"/><w:r><w:t xml:space=\"preserve\">Hello </w:t></w:r>"
                     "<w:proofErr w:type=\"spellStart\"/><w:r><w:rPr><w:b/></w:rPr><w:t xml:space=\"preserve\">"
                     "w&amp;</w:t><w:tab/><w:t xml:space=\"preserve\">\xC3\xA9</w:t></w:r><w:hyperlink r:id=\"rId5\">"
                     "<w:r><w:rPr><w:rStyle w:val=\"Hyperlink\"/></w:rPr><w:t xml:space=\"preserve\">link</w:t></w:r>"
                     "</w:hyperlink><w:r><w:t xml:space=\"preserve\">!</w:t></w:r><w:bookmarkEnd w:id=\"0\"/></w:p>"
                     "<w:p><w:pPr/><w:r><w:rPr><w:i/></w:rPr><w:t xml:space=\"preserve\">Only italic</w:t></w:r></w:p>"
                     "<w:p><w:r><w:drawing/></w:r></w:p><w:p><w:r><w:t xml:space=\"preserve\">  </w:t></w:r></w:p>"
                     "</w:body></w:document>");
}

// A text box inside a paragraph (a drawing in a run) holds paragraphs of its own: the outer
// paragraph is cut around it into two segments, and the box's paragraph is one between them.
TEST(OfficeDocument, DocxTextBoxParagraphsAreSegmentsOfTheirOwn) {
  const OfficeFile file = read_office(
      docx_of("<w:p><w:r><w:t>Before</w:t></w:r><w:r><w:drawing><w:txbxContent><w:p><w:r><w:t>Inside</w:t></w:r>"
              "</w:p></w:txbxContent></w:drawing></w:r><w:r><w:t>After</w:t></w:r></w:p>"),
      "docx");
  ASSERT_EQ(file.parts.size(), 1u);
  std::vector<std::string> texts;
  for (const auto& s : file.parts[0].document.segments) texts.push_back(s.text);
  EXPECT_EQ(texts, (std::vector<std::string>{"Before", "Inside", "After"}));
}

// A translation may put any text anywhere: new words, the spans moved to other places (here scaled
// to the new length, which keeps the tree). Whatever it does, the text stays inside runs: lxml finds
// no text directly in a paragraph, hyperlink or run, and each paragraph reads back as written.
const char* kCheckRuns = R"(
import sys, zipfile, docx
from lxml import etree
W = '{http://schemas.openxmlformats.org/wordprocessingml/2006/main}'
if sys.argv[3] == 'whole': docx.Document(sys.argv[1])  # a whole package, as python-docx opens it
bad = []
for part in sys.argv[2].split(','):
    root = etree.fromstring(zipfile.ZipFile(sys.argv[1]).read(part))
    for e in root.iter(W + 'p', W + 'hyperlink', W + 'r'):
        if any(t and t.strip() for t in [e.text] + [c.tail for c in e]): bad.append(part + ': text in ' + e.tag)
    for t in root.iter(W + 't'):
        if t.getparent().tag != W + 'r' or len(t): bad.append(part + ': a w:t out of place')
    for e in root.iter(W + 'r'):  # the properties first, as the schema wants
        if any(c.tag == W + 'rPr' for c in e[1:]): bad.append(part + ': w:rPr not first')
    for e in root.iter(W + 'smartTag'):  # (the test's smart tags all have properties)
        if len(e) == 0 or e[0].tag != W + 'smartTagPr': bad.append(part + ': w:smartTagPr not first')
print('\n'.join(bad) if bad else 'OK')
)";

Segment moved(const Segment& s, std::mt19937& rng) {
  Segment out = s;
  out.text.clear();
  const std::size_t words = 1 + rng() % 8;
  for (std::size_t w = 0; w < words; ++w) {
    if (w > 0 || rng() % 3 == 0) out.text += ' ';
    for (std::size_t c = 1 + rng() % 6; c > 0; --c) out.text += static_cast<char>('a' + rng() % 26);
  }
  if (rng() % 3 == 0) out.text += " & <x> ";
  const std::size_t n = out.text.size(), old = std::max<std::size_t>(s.text.size(), 1);
  for (Span& sp : out.spans) {
    sp.begin = sp.begin * n / old;
    sp.end = sp.end * n / old;
  }
  return out;
}

TEST(OfficeDocument, DocxTextPlacedAnywhereByATranslationStaysInRuns) {
  const fs::path dir = testing::fresh_temp_dir("office_moved");
  ASSERT_EQ(python(dir, kMakeDocx, (dir / "made.docx").string()).first, 0);
  const std::string hand = docx_of(
      "<w:p><w:hyperlink r:id=\"x\"><w:r><w:t>a </w:t></w:r><w:bookmarkStart w:id=\"1\"/><w:r><w:rPr><w:b/>"
      "</w:rPr><w:t>b</w:t><w:tab/><w:t>c</w:t></w:r><w:ins w:id=\"2\"><w:r><w:rPr><w:i/></w:rPr><w:t>d</w:t>"
      "</w:r></w:ins><w:r><w:t>e f</w:t></w:r></w:hyperlink><w:r><w:rPr><w:u/></w:rPr><w:t>g</w:t><w:br/></w:r>"
      "<w:smartTag w:uri=\"u\" w:element=\"e\"><w:smartTagPr/><w:r><w:t>tag</w:t></w:r></w:smartTag>"
      "<w:r><w:t>h</w:t></w:r><w:r><w:rPr><w:u/></w:rPr><w:t>i</w:t></w:r></w:p>");
  std::mt19937 rng(7);
  for (const std::string& bytes : {read_file(dir / "made.docx"), hand}) {
    const bool whole = bytes.size() != hand.size();
    const OfficeFile file = read_office(bytes, "docx");
    for (int trial = 0; trial < 5; ++trial) {
      std::vector<std::string> parts;
      std::vector<std::vector<std::string>> texts;
      for (const OfficePart& p : file.parts) {
        std::vector<std::string> r;
        texts.emplace_back();
        for (std::size_t i = 0; i < p.document.segments.size(); ++i) {
          const Segment s = moved(p.document.segments[i], rng);
          ASSERT_NO_THROW(check_segment(s, i));
          r.push_back(render_segment(s, p.document.escape));
          texts.back().push_back(s.text);
        }
        parts.push_back(assemble(p.document, r));
      }
      write_file(dir / "out.docx", write_office(bytes, file, parts));
      const auto checked =
          python(dir, kCheckRuns, (dir / "out.docx").string() + " " + part_names(file) + (whole ? " whole" : " part"));
      EXPECT_EQ(checked.second, "OK\n") << trial;
      const OfficeFile again = read_office(read_file(dir / "out.docx"), "docx");
      ASSERT_EQ(again.parts.size(), file.parts.size());
      for (std::size_t p = 0; p < texts.size(); ++p) {
        std::vector<std::string> read_back;
        for (const auto& s : again.parts[p].document.segments) read_back.push_back(s.text);
        EXPECT_EQ(read_back, texts[p]) << trial;
      }
    }
  }
}

// --- wrong, damaged and hostile packages --------------------------------------------------------

void expect_error(const std::string& bytes, const std::string& format, const std::string& message,
                  const OfficeLimits& limits = {}) {
  try {
    read_office(bytes, format, limits);
    ADD_FAILURE() << "no error, expected: " << message;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

const std::string kOdtContent =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><office:document-content "
    "xmlns:office=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\" "
    "xmlns:text=\"urn:oasis:names:tc:opendocument:xmlns:text:1.0\"><office:body><office:text>"
    "<text:p>Hi</text:p></office:text></office:body></office:document-content>";

TEST(OfficeDocument, RefusesWhatIsNotItsFormat) {
  const std::string docx = docx_of("<w:p><w:r><w:t>Hi</w:t></w:r></w:p>");
  const std::string odt =
      make_zip({{"mimetype", "application/vnd.oasis.opendocument.text", true}, {"content.xml", kOdtContent, false}});
  EXPECT_EQ(read_office(odt, "odt").parts.at(0).document.segments.at(0).text, "Hi");
  expect_error("", "docx", "not a .docx file: empty");
  expect_error("Hello, world. This is plain text, not a zip archive at all.", "docx",
               "not a .docx file: not a zip archive");
  expect_error(docx.substr(0, docx.size() / 2), "docx", "not a .docx file: not a zip archive");
  expect_error(docx, "odt", "not an .odt file: no mimetype entry");
  expect_error(odt, "docx", "not a .docx file: no [Content_Types].xml");
  expect_error(make_zip({{"[Content_Types].xml", "<Types/>", false}}), "docx", "no word/document.xml");
  expect_error(make_zip({{"mimetype", "application/vnd.oasis.opendocument.spreadsheet", true},
                         {"content.xml", kOdtContent, false}}),
               "odt", "its mimetype is 'application/vnd.oasis.opendocument.spreadsheet'");
  expect_error(make_zip({{"mimetype", "application/vnd.oasis.opendocument.text", true}}), "odt", "no content.xml");
  EXPECT_THROW(read_office(docx, "pdf"), Error);
  // A damaged entry: its compressed bytes changed behind the header's CRC.
  std::string damaged =
      make_zip({{"[Content_Types].xml", "<Types/>", false}, {"word/document.xml", std::string(2000, 'x'), true}});
  damaged[damaged.find("xxxx") + 100] = 'y';
  expect_error(damaged, "docx", "word/document.xml is damaged (CRC error)");
}

// A comment whose text starts with '>' ("<!-->..." is well-formed XML: the comment's end is the
// first "-->" after its "<!--") and a processing instruction inside a paragraph: not text, kept byte
// for byte, and the package written back reads again into the same segment. (The fuzzer's finding:
// the comment was taken to end at the "-->" of its own "<!-->", its text then read as text.)
TEST(OfficeDocument, ACommentStartingWithAGreaterThanSignEndsAtItsOwnEnd) {
  const std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><office:document-content "
      "xmlns:office=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\" "
      "xmlns:text=\"urn:oasis:names:tc:opendocument:xmlns:text:1.0\"><office:body><office:text>"
      "<text:p>Hi <!-->> not - text? no -->there<?pi ?>now</text:p>"
      "</office:text></office:body></office:document-content>";
  const std::string odt =
      make_zip({{"mimetype", "application/vnd.oasis.opendocument.text", true}, {"content.xml", xml, false}});
  const OfficeFile file = read_office(odt, "odt");
  const Document& d = file.parts.at(0).document;
  ASSERT_EQ(d.segments.size(), 1u);
  EXPECT_EQ(d.segments[0].text, "Hi therenow");
  const std::string untranslated = assemble(d, rendered(d, false));
  EXPECT_EQ(untranslated, xml) << "untranslated, the part is its source byte for byte";
  const std::string upper = assemble(d, rendered(d, true));
  EXPECT_NE(upper.find("<!-->> not - text? no -->"), std::string::npos) << upper;
  EXPECT_EQ(read_office(write_office(odt, file, {upper}), "odt").parts.at(0).document.segments.at(0).text,
            "HI THERENOW");
}

TEST(OfficeDocument, MalformedXmlNamesThePartAndLine) {
  const std::string head = std::string("<?xml version=\"1.0\"?>\n<w:document ") + kWordNs + ">\n<w:body>\n";
  const auto docx = [](const std::string& xml) {
    return make_zip({{"[Content_Types].xml", "<Types/>", false}, {"word/document.xml", xml, false}});
  };
  expect_error(docx(head + "<w:p><w:r><w:t>x</w:r></w:p>\n</w:body></w:document>"), "docx",
               "word/document.xml:4: malformed XML (Opening and ending tag mismatch");
  expect_error(docx(head + "<w:p>caf\xE9</w:p>\n</w:body></w:document>"), "docx", "word/document.xml:4: malformed XML");
  expect_error(docx(head + "<w:p>&nbsp;</w:p></w:body></w:document>"), "docx", "word/document.xml:4:");
  // (libxml2 2.9 does not check the bytes of a CDATA section: this reader does.)
  expect_error(docx(head + "<w:p><w:r><w:t><![CDATA[\xC0\x8D]]></w:t></w:r></w:p>\n</w:body></w:document>"), "docx",
               "word/document.xml:4: malformed XML (invalid UTF-8 at byte");
  // A billion laughs never reaches libxml2's entity expansion: the DTD is refused.
  std::string laughs = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [<!ENTITY lol \"lol\">";
  for (int i = 1; i < 10; ++i)
    laughs += "<!ENTITY lol" + std::to_string(i) + " \"" + [&] {
      std::string s;
      for (int k = 0; k < 10; ++k) s += "&lol" + (i > 1 ? std::to_string(i - 1) : std::string()) + ";";
      return s;
    }() + "\">";
  laughs += "]>\n<w:document " + std::string(kWordNs) +
            "><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>";
  expect_error(docx(laughs), "docx", "word/document.xml:2: a DTD (<!DOCTYPE)");
  // And an .odt's styles.xml, whose headers are read too.
  expect_error(make_zip({{"mimetype", "application/vnd.oasis.opendocument.text", true},
                         {"content.xml", kOdtContent, false},
                         {"styles.xml", "<a>\n<b>\n</a>", false}}),
               "odt", "styles.xml:3: malformed XML");
  expect_error(docx("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><w:document " + std::string(kWordNs) + "/>"),
               "docx", "word/document.xml: the XML is in ISO-8859-1");
}

// The general purpose flag's bit 0, in every local and central header: "encrypted".
std::string mark_encrypted(std::string zip) {
  for (const std::string& sig : {std::string("PK\x03\x04", 4), std::string("PK\x01\x02", 4)})
    for (std::size_t at = zip.find(sig); at != std::string::npos; at = zip.find(sig, at + 4))
      zip[at + (sig[2] == '\x03' ? 6 : 8)] |= 1;
  return zip;
}

TEST(OfficeDocument, RefusesPackagesOverALimitOrEncrypted) {
  const std::string docx =
      make_zip({{"[Content_Types].xml", "<Types/>", false},
                {"word/document.xml",
                 docx_of("").substr(0, 0) + std::string(10000, ' ') + "<w:document " + kWordNs + "/>", false},
                {"word/media/image1.png", std::string(3000, 'p'), true}});
  EXPECT_NO_THROW(read_office(docx, "docx"));
  OfficeLimits few;
  few.max_entries = 2;
  expect_error(docx, "docx", "3 entries, over the limit of 2 (max_entries)", few);
  OfficeLimits small_entry;
  small_entry.max_entry_bytes = 5000;
  expect_error(docx, "docx", "entry word/document.xml unpacks to 10", small_entry);
  OfficeLimits small_total;
  small_total.max_unpacked_bytes = 12000;
  expect_error(docx, "docx", "the limit for the whole package (max_unpacked_bytes)", small_total);
  OfficeLimits low_ratio;
  low_ratio.max_ratio = 2;
  expect_error(docx, "docx", "over the limit of 2 times (max_ratio)", low_ratio);
  expect_error(mark_encrypted(docx), "docx", "is encrypted");
}

std::size_t peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<std::size_t>(u.ru_maxrss) / 1024;
}

// Zip bombs made by Python's zipfile: 300 MB of zeros in 300 KB, refused from its header before
// anything is unpacked; 50 MB (under the entry limit) refused for its ratio; and one whose headers
// lie (they say 1000 bytes), stopped after the first bytes over what they say.
TEST(OfficeDocument, RefusesZipBombsQuicklyWithoutUnpackingThem) {
  const fs::path dir = testing::fresh_temp_dir("office_bomb");
  const char* make = R"(
import sys, zipfile, struct
def bomb(path, megabytes):
    with zipfile.ZipFile(path, 'w', zipfile.ZIP_DEFLATED) as z:
        z.writestr('[Content_Types].xml', '<Types/>')
        with z.open('word/document.xml', 'w') as f:
            chunk = b'\0' * (1 << 20)
            for _ in range(megabytes): f.write(chunk)
bomb(sys.argv[1] + '/big.docx', 300)
bomb(sys.argv[1] + '/ratio.docx', 50)
data = bytearray(open(sys.argv[1] + '/big.docx', 'rb').read())
for sig, off in ((b'PK\x03\x04', 22), (b'PK\x01\x02', 24)):
    at = data.find(sig)
    while at >= 0:
        name_at = at + (30 if sig == b'PK\x03\x04' else 46)
        if data[name_at:name_at + 17] == b'word/document.xml': struct.pack_into('<I', data, at + off, 1000)
        at = data.find(sig, at + 4)
open(sys.argv[1] + '/liar.docx', 'wb').write(data)
)";
  const auto made = python(dir, make, dir.string());
  ASSERT_EQ(made.first, 0) << made.second;
  const std::string big = read_file(dir / "big.docx"), ratio = read_file(dir / "ratio.docx"),
                    liar = read_file(dir / "liar.docx");
  ASSERT_LT(big.size(), 2u << 20);
  const std::size_t rss_before = peak_rss_mib();
  const auto start = std::chrono::steady_clock::now();
  expect_error(big, "docx", "entry word/document.xml unpacks to 314572800 bytes, over the limit of 67108864");
  expect_error(ratio, "docx", "over the limit of 200 times (max_ratio): a zip bomb?");
  expect_error(liar, "docx", "word/document.xml");
  try {
    read_office(liar, "docx");
  } catch (const Error& e) {
    // libzip's own checks or this reader's: either way it stops early.
    EXPECT_TRUE(std::string(e.what()).find("more than the 1000 bytes its header says") != std::string::npos ||
                std::string(e.what()).find("damaged") != std::string::npos)
        << e.what();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 2.0);
  EXPECT_LT(peak_rss_mib(), rss_before + 40) << "unpacked some of it";
}

TEST(OfficeDocument, WriteRefusesTheWrongNumberOfParts) {
  const std::string docx = docx_of("<w:p><w:r><w:t>Hi</w:t></w:r></w:p>");
  const OfficeFile file = read_office(docx, "docx");
  EXPECT_THROW(write_office(docx, file, {}), Error);
  OfficeFile other = file;
  other.parts[0].name = "word/missing.xml";
  EXPECT_THROW(write_office(docx, other, {"<x/>"}), Error);
}

}  // namespace
}  // namespace attn::document
