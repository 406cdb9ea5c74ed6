#include "data/sword_module.h"

#include <swmgr.h>
#include <swmodule.h>
#include <versekey.h>

#include "core/error.h"

namespace attn::data {
namespace {

std::string config_entry(const sword::SWModule& module, const char* key, std::string fallback) {
  const char* value = module.getConfigEntry(key);
  return value && *value ? std::string(value) : fallback;
}

[[noreturn]] void throw_not_installed(const std::string& module_name, const std::string& location) {
  std::string message = "SWORD module " + module_name + " is not installed (looked in " + location + ")";
  const std::string_view package = debian_package_of_module(module_name);
  if (!package.empty()) {
    message +=
        "; install the Debian package " + std::string(package) + " (apt-get install " + std::string(package) + ")";
  } else {
    message += "; install the Debian package that provides it (apt-cache search sword-text) or pass --sword-path";
  }
  throw Error(message);
}

}  // namespace

std::string_view debian_package_of_module(std::string_view module_name) {
  if (module_name == "engKJV2006eb") return "sword-text-kjv";
  if (module_name == "engWEB2015eb") return "sword-text-web";
  if (module_name == "spaRV1909eb") return "sword-text-sparv";
  return {};
}

SwordLibrary::SwordLibrary(const std::filesystem::path& sword_path)
    : manager_(sword_path.empty() ? std::make_unique<sword::SWMgr>()
                                  : std::make_unique<sword::SWMgr>(sword_path.c_str(), true, nullptr, false,
                                                                   /*augmentHome=*/false)) {}

SwordLibrary::~SwordLibrary() = default;

std::string SwordLibrary::location() const {
  return manager_->prefixPath && *manager_->prefixPath
             ? std::string(manager_->prefixPath)
             : std::string("the SWORD search path (SWORD_PATH, /usr/share/sword, ~/.sword)");
}

sword::SWModule& SwordLibrary::bible_module(const std::string& module_name) const {
  sword::SWModule* module = manager_->getModule(module_name.c_str());
  if (!module) throw_not_installed(module_name, location());
  if (!dynamic_cast<sword::VerseKey*>(module->getKey())) {
    throw Error("SWORD module " + module_name + " is not a Bible text (its entries are not verses)");
  }
  return *module;
}

SwordBible SwordLibrary::read_bible(const std::string& module_name) const {
  sword::SWModule& module = bible_module(module_name);
  SwordBible bible;
  bible.name = module_name;
  bible.abbreviation = config_entry(module, "Abbreviation", module_name);
  bible.language = module.getLanguage() ? module.getLanguage() : "";
  bible.versification = static_cast<sword::VerseKey*>(module.getKey())->getVersificationSystem();
  // Iterating the module visits every verse of its versification once, empty ones included.
  for (module.setPosition(sword::TOP); !module.popError(); module.increment()) {
    const auto* verse_key = static_cast<const sword::VerseKey*>(module.getKey());
    bible.verses.push_back({verse_key->getOSISRef(), module.getRawEntry()});
  }
  return bible;
}

std::string SwordLibrary::read_verse_markup(const std::string& module_name, const std::string& osis_id) const {
  sword::SWModule& module = bible_module(module_name);
  // A key of the module's own versification; libsword reads what it can of any text, so check
  // that it understood the id.
  sword::VerseKey key(module.getKey());
  key.setText(osis_id.c_str());
  if (key.popError() || osis_id != key.getOSISRef()) {
    throw Error("SWORD module " + module_name + " has no verse " + osis_id);
  }
  module.setKey(key);
  return module.getRawEntry();
}

}  // namespace attn::data
