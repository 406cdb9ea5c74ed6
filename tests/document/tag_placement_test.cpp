// Tag placement on hand-made alignments whose right answer is known.
#include <gtest/gtest.h>

#include "document/tag_placement.h"

namespace attn::document {
namespace {

SourceSpan element(int first, int last, int parent = -1) { return {true, first, last, 0, false, parent}; }
SourceSpan point(int gap, bool lean_right = false, int parent = -1) { return {false, 0, -1, gap, lean_right, parent}; }

// "the <b>red</b> car" -> "el coche rojo": red (1) is linked to rojo (2).
TEST(TagPlacement, AnElementWrapsTheWordsAlignedToItsWords) {
  const auto t = place_spans({element(1, 1)}, 3, 3, {{0, 0}, {1, 2}, {2, 1}});
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].first, 2);
  EXPECT_EQ(t[0].last, 2);
}

// Two words wrapped, aligned apart: the hull, words between included.
TEST(TagPlacement, AnElementTakesTheHullOfItsTargets) {
  const auto t = place_spans({element(0, 1)}, 4, 5, {{0, 3}, {1, 1}, {2, 0}, {3, 4}});
  EXPECT_EQ(t[0].first, 1);
  EXPECT_EQ(t[0].last, 3);
}

// "<b>red</b> <i>car</i>" -> "coche rojo": reordered siblings keep their own words.
TEST(TagPlacement, SiblingsMayReorder) {
  const auto t = place_spans({element(0, 0), element(1, 1)}, 2, 2, {{0, 1}, {1, 0}});
  EXPECT_EQ(t[0].first, 1);
  EXPECT_EQ(t[0].last, 1);
  EXPECT_EQ(t[1].first, 0);
  EXPECT_EQ(t[1].last, 0);
}

// Both siblings linked to the same target word: the first keeps it, the second is cut to nothing
// and becomes an empty element where it would have begun, at the edge of the first.
TEST(TagPlacement, OverlappingSiblingsAreCutApart) {
  const auto t = place_spans({element(0, 0), element(1, 2)}, 3, 3, {{0, 1}, {1, 1}, {2, 2}});
  EXPECT_EQ(t[0].first, 1);
  EXPECT_EQ(t[0].last, 1);
  EXPECT_EQ(t[1].first, 2);  // word 1 taken: the rest of its hull
  EXPECT_EQ(t[1].last, 2);
  const auto u = place_spans({element(0, 0), element(1, 1)}, 2, 2, {{0, 1}, {1, 1}});
  EXPECT_EQ(u[1].first, 0);
  EXPECT_EQ(u[1].last, -1);
  EXPECT_EQ(u[1].gap, 1);  // at the edge of the word the first sibling holds, not inside it
}

// A child is clamped into its parent: "<a>the <b>red</b> car</a>" with red aligned outside.
TEST(TagPlacement, AChildStaysInsideItsParent) {
  const auto t = place_spans({element(0, 2), element(1, 1, 0)}, 4, 5, {{0, 1}, {1, 4}, {2, 2}, {3, 0}});
  EXPECT_EQ(t[0].first, 1);
  EXPECT_EQ(t[0].last, 4);
  EXPECT_EQ(t[1].first, 4);
  EXPECT_EQ(t[1].last, 4);
  const auto u = place_spans({element(0, 1), element(1, 1, 0)}, 3, 3, {{0, 0}, {1, 0}, {2, 2}});
  // The parent holds word 0 only; the child's word, linked to word 0 too, is inside it.
  EXPECT_EQ(u[0].first, 0);
  EXPECT_EQ(u[0].last, 0);
  EXPECT_EQ(u[1].first, 0);
  EXPECT_EQ(u[1].last, 0);
  const auto v = place_spans({element(0, 1), element(1, 1, 0)}, 3, 4, {{0, 0}, {1, 1}, {2, 3}});
  EXPECT_EQ(v[1].first, 1);
  // A child whose link falls outside: clamped into the parent's words.
  const auto w = place_spans({element(0, 1), element(1, 1, 0)}, 3, 4, {{0, 0}, {1, 1}, {2, 3}});
  EXPECT_GE(w[1].first, w[0].first);
  EXPECT_LE(w[1].last, w[0].last);
}

// No link for the wrapped words: the same relative place (the baseline).
TEST(TagPlacement, UnlinkedWordsKeepTheirRelativePlace) {
  const auto t = place_spans({element(3, 3)}, 4, 8, {{0, 0}});
  EXPECT_EQ(t[0].first, 7);  // floor(3.5 * 8 / 4)
  EXPECT_EQ(t[0].last, 7);
  const auto b = place_by_position({element(0, 1), point(2)}, 4, 8);
  EXPECT_EQ(b[0].first, 1);  // floor(0.5 * 2)
  EXPECT_EQ(b[0].last, 3);   // floor(1.5 * 2)
  EXPECT_EQ(b[1].gap, 4);
}

// "Hello {name}, welcome" -> "Hola, bienvenido": the point leans on "Hello" (0 -> 0): after it.
// "{count} items" -> "artículos": nothing on the left, so before the word "items" went to.
TEST(TagPlacement, APointGoesBesideTheWordItLeanedOn) {
  EXPECT_EQ(place_spans({point(1)}, 2, 2, {{0, 0}, {1, 1}})[0].gap, 1);
  EXPECT_EQ(place_spans({point(0)}, 1, 1, {{0, 0}})[0].gap, 0);
  // Leaning right: before the target of the next word, even when the left word moved.
  EXPECT_EQ(place_spans({point(1, true)}, 3, 3, {{0, 2}, {1, 0}, {2, 1}})[0].gap, 0);
  EXPECT_EQ(place_spans({point(1, false)}, 3, 3, {{0, 2}, {1, 0}, {2, 1}})[0].gap, 3);
  // The word it leans on has no link: the other side's.
  EXPECT_EQ(place_spans({point(1, false)}, 3, 3, {{1, 0}})[0].gap, 0);
}

// A point inside an element stays inside; one that is not must not fall between its words.
TEST(TagPlacement, PointsKeepTheirSideOfElements) {
  // "<b>one two<br>three</b> four": br (gap 2) inside b (words 0-2), linked far outside.
  auto t = place_spans({element(0, 2), point(2, false, 0)}, 4, 4, {{0, 0}, {1, 1}, {2, 2}, {3, 3}});
  EXPECT_EQ(t[1].gap, 2);
  t = place_spans({element(0, 2), point(2, false, 0)}, 4, 4, {{0, 0}, {1, 3}, {2, 2}, {3, 1}});
  EXPECT_GE(t[1].gap, t[0].first);
  EXPECT_LE(t[1].gap, t[0].last + 1);
  // "<b>one two</b> three<br>": the br leans on "three", whose target sits inside b's words.
  t = place_spans({element(0, 1), point(3)}, 3, 3, {{0, 0}, {1, 2}, {2, 0}});
  EXPECT_TRUE(t[1].gap <= t[0].first || t[1].gap > t[0].last) << t[1].gap;
}

// Points inside an element around no word follow it.
TEST(TagPlacement, ChildrenOfAnEmptyElementStayWithIt) {
  const auto t = place_spans({point(1), point(1, false, 0)}, 2, 2, {{0, 1}, {1, 0}});
  EXPECT_EQ(t[0].gap, 2);
  EXPECT_EQ(t[1].gap, 2);
}

TEST(TagPlacement, AnEmptyTargetTakesEverythingAtGapZero) {
  const auto t = place_spans({element(0, 0), point(1)}, 1, 0, {});
  EXPECT_GT(t[0].first, t[0].last);
  EXPECT_EQ(t[0].gap, 0);
  EXPECT_EQ(t[1].gap, 0);
}

}  // namespace
}  // namespace attn::document
