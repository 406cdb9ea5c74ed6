// Placeholders: printf conversions, brace placeholders, URLs and e-mail addresses found in order,
// with what is not one (a percentage, a brace pair around words, a URL's sentence punctuation) left
// as text. Every expected placeholder is worked out by hand.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "document/placeholders.h"

namespace attn::document {
namespace {

// The placeholders as (kind, text) pairs.
using Found = std::vector<std::pair<std::string, std::string>>;

Found found(std::string_view text) {
  Found out;
  for (const Placeholder& p : find_placeholders(text)) out.emplace_back(p.kind, text.substr(p.begin, p.end - p.begin));
  return out;
}

TEST(Placeholders, PrintfConversions) {
  EXPECT_EQ(found("Hello %s, you have %d new messages (%1$s, %2$.2f%%)."),
            (Found{{"printf", "%s"}, {"printf", "%d"}, {"printf", "%1$s"}, {"printf", "%2$.2f"}, {"printf", "%%"}}));
  EXPECT_EQ(found("%-10s|%05.2f|%lld|%'d|%*d|%.*f|%zu|%hhx|%#o|%+i|%Lg|%p|%n|%c|%@"), (Found{{"printf", "%-10s"},
                                                                                             {"printf", "%05.2f"},
                                                                                             {"printf", "%lld"},
                                                                                             {"printf", "%'d"},
                                                                                             {"printf", "%*d"},
                                                                                             {"printf", "%.*f"},
                                                                                             {"printf", "%zu"},
                                                                                             {"printf", "%hhx"},
                                                                                             {"printf", "%#o"},
                                                                                             {"printf", "%+i"},
                                                                                             {"printf", "%Lg"},
                                                                                             {"printf", "%p"},
                                                                                             {"printf", "%n"},
                                                                                             {"printf", "%c"},
                                                                                             {"printf", "%@"}}));
  // Byte offsets: "Total: " is 7 bytes.
  EXPECT_EQ(find_placeholders("Total: %d €"), (std::vector<Placeholder>{{7, 9, "printf"}}));
}

TEST(Placeholders, APercentageIsNotAConversion) {
  EXPECT_TRUE(found("It is 100 % sure, 50% of them, 50%.").empty());
  // The space flag is not taken: "% o" would make "50% of" a conversion.
  EXPECT_TRUE(found("50% off, 30% de descuento, % d").empty());
  // Glued to a word after a number: a percentage, not %o or %d.
  EXPECT_TRUE(found("50%off and 20%de descuento").empty());
  // A lone % at the end, or before a letter that is no conversion.
  EXPECT_TRUE(found("%").empty());
  EXPECT_TRUE(found("100%").empty());
  EXPECT_TRUE(found("%y %-").empty());
  // But a conversion with a length or flags is one even after a digit.
  EXPECT_EQ(found("5%ldx"), (Found{{"printf", "%ld"}}));
}

TEST(Placeholders, Braces) {
  EXPECT_EQ(found("{name} {0} {user_name} {{x}} {{ user.name }} ${var} %{count} {0:.2f} {} {a.b[0]!r:>8}"),
            (Found{{"braces", "{name}"},
                   {"braces", "{0}"},
                   {"braces", "{user_name}"},
                   {"braces", "{{x}}"},
                   {"braces", "{{ user.name }}"},
                   {"braces", "${var}"},
                   {"braces", "%{count}"},
                   {"braces", "{0:.2f}"},
                   {"braces", "{}"},
                   {"braces", "{a.b[0]!r:>8}"}}));
  // Fluent's variables.
  EXPECT_EQ(found("Hi { $userName }, {$count} left"), (Found{{"braces", "{ $userName }"}, {"braces", "{$count}"}}));
  // "Hola {name}, ¿qué tal?": "Hola " is 5 bytes.
  EXPECT_EQ(find_placeholders("Hola {name}, ¿qué tal?"), (std::vector<Placeholder>{{5, 11, "braces"}}));
}

TEST(Placeholders, BracesAroundWordsAreText) {
  EXPECT_TRUE(found("a set { a b } and {1, 2} and { name } and {x y}").empty());
  EXPECT_TRUE(found("{ } {{ }} {{ a b }} {a. } {a[]} {").empty());
  EXPECT_TRUE(found("}{ {unclosed").empty());
  // A field nested in another's spec: the inner one alone.
  EXPECT_EQ(found("{0:{width}}"), (Found{{"braces", "{width}"}}));
}

TEST(Placeholders, Urls) {
  EXPECT_EQ(found("See https://example.org/a/b?x=1&y=2#top for more."),
            (Found{{"url", "https://example.org/a/b?x=1&y=2#top"}}));
  EXPECT_EQ(found("Go to www.example.com, or ftp://files.example.org/pub; or HTTP://X.ORG!"),
            (Found{{"url", "www.example.com"}, {"url", "ftp://files.example.org/pub"}, {"url", "HTTP://X.ORG"}}));
  // The sentence's punctuation is not the URL's: "see https://a.org/x." ends before the full stop.
  EXPECT_EQ(find_placeholders("see https://a.org/x."), (std::vector<Placeholder>{{4, 19, "url"}}));
  EXPECT_EQ(found("Really https://a.org/x?!... Yes"), (Found{{"url", "https://a.org/x"}}));
  EXPECT_EQ(found("Es https://a.org/x… y https://a.org/y。"),
            (Found{{"url", "https://a.org/x"}, {"url", "https://a.org/y"}}));
}

TEST(Placeholders, UrlBracketsAndQuotes) {
  // A closing bracket is kept only with its opening one inside the URL.
  EXPECT_EQ(found("(see https://a.org/x)"), (Found{{"url", "https://a.org/x"}}));
  EXPECT_EQ(found("(https://en.wikipedia.org/wiki/Foo_(bar))."),
            (Found{{"url", "https://en.wikipedia.org/wiki/Foo_(bar)"}}));
  EXPECT_EQ(found("[https://a.org/x[1]]"), (Found{{"url", "https://a.org/x[1]"}}));
  EXPECT_EQ(found("<https://a.org/x>"), (Found{{"url", "https://a.org/x"}}));
  EXPECT_EQ(found("\"https://a.org/x\", 'https://a.org/y'."),
            (Found{{"url", "https://a.org/x"}, {"url", "https://a.org/y"}}));
  EXPECT_EQ(found("«https://a.org/x» “https://a.org/y”"),
            (Found{{"url", "https://a.org/x"}, {"url", "https://a.org/y"}}));
  EXPECT_EQ(found("https://a.org/it's"), (Found{{"url", "https://a.org/it's"}}));
  // Non-ASCII paths stay in the URL.
  EXPECT_EQ(found("https://es.wikipedia.org/wiki/España."), (Found{{"url", "https://es.wikipedia.org/wiki/España"}}));
}

TEST(Placeholders, UrlsContainWhatIsInThem) {
  // A URL with a brace placeholder or a percent escape in it is one URL.
  EXPECT_EQ(found("https://a.org/{lang}/%20x?u={user} and {name}"),
            (Found{{"url", "https://a.org/{lang}/%20x?u={user}"}, {"braces", "{name}"}}));
  EXPECT_EQ(found("http://user:pw@host.example.com/x"), (Found{{"url", "http://user:pw@host.example.com/x"}}));
}

TEST(Placeholders, NotUrls) {
  EXPECT_TRUE(found("http:// and www. and www.. and https://. and a://) x").empty());
  // Any scheme counts, from the start of a word; "www." only at the start of one.
  EXPECT_EQ(found("xhttp://a.b"), (Found{{"url", "xhttp://a.b"}}));
  EXPECT_TRUE(found("awww.example.com").empty());
}

TEST(Placeholders, EmailAddresses) {
  EXPECT_EQ(found("Write to john.doe+bible@mail.example.com. Or to ana_g@ejemplo.es, please."),
            (Found{{"email", "john.doe+bible@mail.example.com"}, {"email", "ana_g@ejemplo.es"}}));
  EXPECT_EQ(found("mailto:a@b.org, .x@y.co"), (Found{{"email", "mailto:a@b.org"}, {"email", "x@y.co"}}));
  // "Correo: " is 8 bytes; the address is 14.
  EXPECT_EQ(find_placeholders("Correo: ana@ejemplo.es."), (std::vector<Placeholder>{{8, 22, "email"}}));
  EXPECT_EQ(found("user@www.example.com"), (Found{{"email", "user@www.example.com"}}));
}

TEST(Placeholders, NotEmailAddresses) {
  EXPECT_TRUE(found("@home, a@b, x@y.c, a@b.c1, a.@b.com, a@-b.com, @@, a@.com").empty());
  // What another placeholder took is not a local part.
  EXPECT_EQ(found("{x}@a.com"), (Found{{"braces", "{x}"}}));
}

TEST(Placeholders, InOrderAndNotOverlapping) {
  const std::string text = "%s: {name} at https://a.org/{x} or a@b.org (%d%%) ${y}";
  EXPECT_EQ(found(text), (Found{{"printf", "%s"},
                                {"braces", "{name}"},
                                {"url", "https://a.org/{x}"},
                                {"email", "a@b.org"},
                                {"printf", "%d"},
                                {"printf", "%%"},
                                {"braces", "${y}"}}));
  const auto all = find_placeholders(text);
  for (std::size_t k = 1; k < all.size(); ++k) EXPECT_LE(all[k - 1].end, all[k].begin);
}

TEST(Placeholders, NoneInPlainTextOrEmpty) {
  EXPECT_TRUE(find_placeholders("").empty());
  EXPECT_TRUE(find_placeholders("And God said, Let there be light: and there was light.").empty());
  EXPECT_TRUE(find_placeholders("Y dijo Dios: Sea la luz: y fué la luz. 😀").empty());
  // Invalid UTF-8 is read byte by byte, not rejected.
  EXPECT_EQ(found("\xFF%s\xC3"), (Found{{"printf", "%s"}}));
}

// `prefix` then n times `c` (appended: GCC 12 warns wrongly of "x" + std::string at -O3).
std::string prefixed(std::string_view prefix, std::size_t n, char c) {
  std::string s(prefix);
  s.append(n, c);
  return s;
}

// Inputs that would make a backtracking matcher take quadratic time or a recursive one overflow
// its stack, a megabyte each.
TEST(Placeholders, LongAdversarialInputsInLinearTime) {
  const std::size_t n = 1 << 20;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(find_placeholders(std::string(n, '{')).empty());
  EXPECT_TRUE(find_placeholders(std::string(n, 'a')).empty());
  EXPECT_TRUE(find_placeholders(prefixed("{{", n, 'a')).empty());
  EXPECT_TRUE(find_placeholders(prefixed("{a[", n, 'x')).empty());
  EXPECT_EQ(find_placeholders(std::string(n, '%')).size(), n / 2);
  EXPECT_TRUE(find_placeholders(prefixed("%", n, '1')).empty());
  EXPECT_TRUE(find_placeholders(std::string(n, '@')).empty());
  EXPECT_TRUE(find_placeholders(prefixed("a@", n, 'b')).empty());
  std::string dots;
  for (std::size_t k = 0; k < n / 4; ++k) dots += "www.";
  EXPECT_EQ(find_placeholders(dots).size(), 1u);
  EXPECT_TRUE(find_placeholders(prefixed("https://", n, ')')).empty());
  std::string words;
  while (words.size() < n) words += "a@b.c1 x:// www.) ";
  EXPECT_TRUE(find_placeholders(words).empty());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 10.0);  // linear: well under a second, even under sanitizers
}

}  // namespace
}  // namespace attn::document
