// Reading the installed SWORD modules (Debian: sword-text-kjv, sword-text-web, sword-text-sparv),
// and the plain text of verses checked by hand against their raw OSIS (`mod2imp MODULE`).
#include "data/sword_module.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/temp_dir.h"
#include "core/error.h"
#include "data/osis_text.h"

namespace attn::data {
namespace {

std::string verse_text(const std::string& module, const std::string& osis_id) {
  static const SwordLibrary library;
  return osis_to_plain_text(library.read_verse_markup(module, osis_id));
}

TEST(SwordModule, Genesis1v1InAllThreeModules) {
  EXPECT_EQ(verse_text("engKJV2006eb", "Gen.1.1"), "In the beginning God created the heaven and the earth.");
  // WEB has a footnote between "God" and "created".
  EXPECT_EQ(verse_text("engWEB2015eb", "Gen.1.1"), "In the beginning, God created the heavens and the earth.");
  EXPECT_EQ(verse_text("spaRV1909eb", "Gen.1.1"), "EN el principio crió Dios los cielos y la tierra.");
}

TEST(SwordModule, WebFootnotesInsideSentences) {
  EXPECT_EQ(verse_text("engWEB2015eb", "1Thess.1.4"), "We know, brothers loved by God, that you are chosen,");
  EXPECT_EQ(verse_text("engWEB2015eb", "Luke.12.6"),
            "“Aren’t five sparrows sold for two assaria coins? Not one of them is forgotten by God.");
  // The glossary WEB appends to its last verse is not part of it.
  EXPECT_EQ(verse_text("engWEB2015eb", "Rev.22.21"),
            "The grace of the Lord Jesus Christ be with all the saints. Amen.");
}

TEST(SwordModule, KjvTransChangeDivineNameAndPilcrow) {
  EXPECT_EQ(verse_text("engKJV2006eb", "Gen.1.2"),
            "And the earth was without form, and void; and darkness was upon the face of the deep. "
            "And the Spirit of God moved upon the face of the waters.");
  EXPECT_EQ(verse_text("engKJV2006eb", "Gen.1.6"),
            "And God said, Let there be a firmament in the midst of the waters, and let it divide the waters from the "
            "waters.");
  EXPECT_EQ(verse_text("engKJV2006eb", "Exod.6.3"),
            "And I appeared unto Abraham, unto Isaac, and unto Jacob, by the name of God Almighty, but by my name "
            "JEHOVAH was I not known to them.");
  EXPECT_EQ(verse_text("engKJV2006eb", "Ps.3.1"),
            "A Psalm of David, when he fled from Absalom his son. LORD, how are they increased that trouble me! many "
            "are they that rise up against me.");
}

TEST(SwordModule, Rv1909WordsBetweenAdjacentTags) {
  EXPECT_EQ(verse_text("spaRV1909eb", "Gen.2.12"),
            "Y el oro de aquella tierra es bueno: hay allí también bdelio y piedra cornerina.");
  EXPECT_EQ(verse_text("spaRV1909eb", "1Kgs.3.5"),
            "Y aparecióse Jehová á Salomón en Gabaón una noche en sueños, y díjole Dios: Pide lo que quisieres que yo "
            "te dé.");
}

TEST(SwordModule, Rv1909NumbersJonahsFishAsChapter2) {
  EXPECT_EQ(verse_text("engKJV2006eb", "Jonah.1.17"),
            "Now the LORD had prepared a great fish to swallow up Jonah. And Jonah was in the belly of the fish three "
            "days and three nights.");
  EXPECT_EQ(verse_text("spaRV1909eb", "Jonah.1.17"), "");
  EXPECT_EQ(
      verse_text("spaRV1909eb", "Jonah.2.1"),
      "MAS Jehová había prevenido un gran pez que tragase á Jonás: y estuvo Jonás en el vientre del pez tres días "
      "y tres noches.");
}

TEST(SwordModule, ReadsEveryVerseOfTheVersificationInOrder) {
  const SwordLibrary library;
  const SwordBible kjv = library.read_bible("engKJV2006eb");
  EXPECT_EQ(kjv.abbreviation, "KJV");
  EXPECT_EQ(kjv.language, "en");
  EXPECT_EQ(kjv.versification, "KJV");
  ASSERT_EQ(kjv.verses.size(), 31102u);  // the KJV versification: 23145 OT + 7957 NT verses
  EXPECT_EQ(kjv.verses.front().osis_id, "Gen.1.1");
  EXPECT_EQ(kjv.verses[1].osis_id, "Gen.1.2");
  EXPECT_EQ(kjv.verses.back().osis_id, "Rev.22.21");
  const auto first_corinthians =
      std::find_if(kjv.verses.begin(), kjv.verses.end(), [](const SwordVerse& v) { return v.osis_id == "1Cor.13.4"; });
  ASSERT_NE(first_corinthians, kjv.verses.end());
  EXPECT_NE(first_corinthians->markup.find("suffereth"), std::string::npos);
}

TEST(SwordModule, MissingModuleNamesTheDebianPackage) {
  const auto empty_library = testing::fresh_temp_dir("sword_empty");
  const SwordLibrary library(empty_library);
  try {
    library.read_bible("spaRV1909eb");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("spaRV1909eb"), std::string::npos) << message;
    EXPECT_NE(message.find("sword-text-sparv"), std::string::npos) << message;
  }
  try {
    SwordLibrary().read_bible("noSuchBible");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("noSuchBible"), std::string::npos) << e.what();
  }
}

TEST(SwordModule, UnknownVerseIsAnError) {
  const SwordLibrary library;
  EXPECT_THROW(library.read_verse_markup("engKJV2006eb", "Tob.1.1"), Error);  // not in the KJV versification
  EXPECT_THROW(library.read_verse_markup("engKJV2006eb", "Gen.51.1"), Error);
  EXPECT_NE(library.read_verse_markup("engWEB2015eb", "Tob.1.1").find("Tobit"), std::string::npos);
}

}  // namespace
}  // namespace attn::data
