#include "core/xml_escape.h"

#include <gtest/gtest.h>

namespace attn {
namespace {

TEST(XmlEscape, EscapesTheFiveCharactersForAttributes) {
  EXPECT_EQ(xml_escape("a&b<c>d\"e'f\u05e9"), "a&amp;b&lt;c&gt;d&quot;e&apos;f\u05e9");
}

TEST(XmlEscape, LeavesQuotesInTextWhenAsked) {
  EXPECT_EQ(xml_escape("\"a\" & 'b' <c>", /*quotes=*/false), "\"a\" &amp; 'b' &lt;c&gt;");
}

TEST(XmlEscape, EscapesAnAmpersandOnlyOnce) { EXPECT_EQ(xml_escape("&amp;"), "&amp;amp;"); }

}  // namespace
}  // namespace attn
