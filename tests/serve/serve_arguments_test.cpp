// `attn serve`'s options in the command's words turned into ServeOptions without the binary: API
// key files read as documented, shortlists given to the model they name, models in the order
// given with the precision and k of all, and errors worded as the command words them.
#include "serve/serve_arguments.h"

#include <functional>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "serve/api_keys.h"

namespace attn::serve {
namespace {

std::string message_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<ModelSpec> two_models() { return {parse_model_spec("en-es=/m1"), parse_model_spec("de-fr=/m2")}; }

TEST(ApiKeys, TrailingSpacesCommentsAndEmptyLinesAreNoKeys) {
  const auto dir = testing::fresh_temp_dir("api_keys");
  const std::string file = (dir / "keys.txt").string();
  write_file_atomic(file, "key-one  \n# a comment\n\n  key two\r\n#\nk3");
  EXPECT_EQ(read_api_keys(file), (std::vector<std::string>{"key-one", "  key two", "k3"}));
  write_file_atomic(file, "# only a comment\n   \n\n");
  EXPECT_EQ(message_of([&] { read_api_keys(file); }), file + ": holds no API key (one key per line)");
  const std::string missing = (dir / "missing.txt").string();
  EXPECT_EQ(message_of([&] { read_api_keys(missing); }), missing + ": cannot open");
}

TEST(ServeArguments, AShortlistGoesToTheModelItNames) {
  std::vector<ModelSpec> models = two_models();
  attach_shortlist(models, "de-fr=lists/de-fr.txt");
  EXPECT_EQ(models[0].shortlist, "");
  EXPECT_EQ(models[1].shortlist, "lists/de-fr.txt");
  EXPECT_EQ(message_of([&] { attach_shortlist(models, "es-en=x.txt"); }),
            "--shortlist es-en=x.txt: no model es-en is served (served: en-es, de-fr)");
  for (const std::string given : {"en-es", "=x.txt", "en-es="})
    EXPECT_EQ(message_of([&] { attach_shortlist(models, given); }),
              "--shortlist " + given + ": give SRC-TGT=FILE (e.g. en-es=runs/en-es/shortlist.txt)");
}

TEST(ServeArguments, ModelsShortlistsAndKeysAssembled) {
  const auto dir = testing::fresh_temp_dir("serve_arguments");
  write_file_atomic(dir / "keys.txt", "k1\nk2\n");
  ServeArguments a;
  a.options.port = 9000;
  a.models = {"en-es=/m1", "de-fr=/m2"};
  a.precision = "bf16";
  a.shortlists = {"de-fr=/s.txt"};
  a.shortlist_k = 50;
  a.api_key = "k0";
  a.api_key_file = (dir / "keys.txt").string();
  const ServeOptions o = serve_options(a);
  EXPECT_EQ(o.port, 9000);
  ASSERT_EQ(o.models.size(), 2u);
  EXPECT_EQ(o.models[0].id(), "en-es");
  EXPECT_EQ(o.models[0].dir, "/m1");
  EXPECT_EQ(o.models[1].id(), "de-fr");
  EXPECT_EQ(o.models[1].dir, "/m2");
  for (const ModelSpec& m : o.models) {
    EXPECT_EQ(m.precision, "bf16");
    EXPECT_EQ(m.shortlist_k, 50);
  }
  EXPECT_EQ(o.models[0].shortlist, "");
  EXPECT_EQ(o.models[1].shortlist, "/s.txt");
  EXPECT_EQ(o.api_keys, (std::vector<std::string>{"k0", "k1", "k2"}));

  ServeArguments no_keys;
  no_keys.models = {"en-es=/m1"};
  EXPECT_TRUE(serve_options(no_keys).api_keys.empty());
  EXPECT_EQ(serve_options(no_keys).models[0].shortlist_k, kDefaultShortlistK);

  ServeArguments bad = no_keys;
  bad.models = {"x-y-z=/m"};
  EXPECT_EQ(message_of([&] { serve_options(bad); }),
            "--model x-y-z=/m: give SRC-TGT=DIR (e.g. en-es=runs/en-es/model), or DIR");
  bad = no_keys;
  bad.options.page_file = (dir / "no_page.html").string();
  EXPECT_EQ(message_of([&] { serve_options(bad); }), bad.options.page_file + ": cannot open");
}

}  // namespace
}  // namespace attn::serve
