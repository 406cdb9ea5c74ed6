#pragma once
// Reading the verses of an installed SWORD Bible module (Debian's sword-text-* packages) with libsword.
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sword {
class SWMgr;
class SWModule;
}  // namespace sword

namespace attn::data {

struct SwordVerse {
  std::string osis_id;  // "Gen.1.1", "1Cor.13.4"
  std::string markup;   // the raw OSIS of the verse; empty where the module has no text for it
};

struct SwordBible {
  std::string name;                // "engKJV2006eb"
  std::string abbreviation;        // "KJV" (the module's Abbreviation, else its name)
  std::string language;            // "en" (the module's Lang)
  std::string versification;       // "KJV", "NRSVA"
  std::vector<SwordVerse> verses;  // every verse of the versification, in canonical order
};

class SwordLibrary {
 public:
  // An empty path lets libsword search where it always does (SWORD_PATH, /usr/share/sword, ~/.sword).
  explicit SwordLibrary(const std::filesystem::path& sword_path = {});
  ~SwordLibrary();
  SwordLibrary(const SwordLibrary&) = delete;
  SwordLibrary& operator=(const SwordLibrary&) = delete;

  // Throws Error naming the module, where it was looked for and the Debian package that provides it
  // if the module is not installed or is not a Bible text.
  SwordBible read_bible(const std::string& module_name) const;

  // The raw OSIS of one verse ("Gen.1.1"). Throws Error as read_bible does, or if the module's
  // versification has no such verse.
  std::string read_verse_markup(const std::string& module_name, const std::string& osis_id) const;

  // Where the modules are read from, for messages.
  std::string location() const;

 private:
  // The module, checked to be installed and to be a Bible.
  sword::SWModule& bible_module(const std::string& module_name) const;

  std::unique_ptr<sword::SWMgr> manager_;
};

// "sword-text-kjv" for "engKJV2006eb"; empty for modules this project does not know.
std::string_view debian_package_of_module(std::string_view module_name);

}  // namespace attn::data
