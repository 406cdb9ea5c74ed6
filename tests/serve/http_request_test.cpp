// The HTTP layer's parts without a socket: bodies read as JSON or as LibreTranslate's form, the
// API key wherever the client put it, bodies of unknown size refused, the messages of errors no
// route answered, and the paths metrics count, against values written out by hand from
// docs/serve.md and LibreTranslate's API.
#include "serve/http_request.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include "serve/api_failure.h"
#include "serve/http_reply.h"
#include "serve/http_routes.h"

namespace attn::serve {
namespace {

using nlohmann::json;
using testing::failure_of;

httplib::Request post(const std::string& body, const std::string& content_type = "") {
  httplib::Request req;
  req.method = "POST";
  req.body = body;
  if (!content_type.empty()) req.headers.emplace("Content-Type", content_type);
  return req;
}

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

TEST(HttpBody, JsonWhateverTheContentTypeWithinDepthAndUtf8) {
  EXPECT_EQ(json_body(post(R"({"q": ["a"]})", "text/plain"), "Bad"), json::parse(R"({"q": ["a"]})"));
  EXPECT_EQ(failure_of([] { json_body(post("{\"a\": \"\xFF\"}"), "Bad"); }),
            "400 Invalid request: the body is not valid UTF-8 (byte 8)");
  EXPECT_TRUE(starts_with(failure_of([] { json_body(post("{\"a\": "), "Bad body"); }), "400 Bad body: "));
  EXPECT_TRUE(starts_with(failure_of([] { json_body(post("1e999"), "Bad body"); }), "400 Bad body: "));
  const std::string deep = std::string(100, '[') + std::string(100, ']');
  EXPECT_EQ(failure_of([&] { json_body(post(deep), "Bad body"); }), "400 Bad body: nested deeper than 32 levels");
  const std::string shallow = std::string(20, '[') + std::string(20, ']');
  EXPECT_EQ(failure_of([&] { json_body(post(shallow), "Bad body"); }), "(no error)");
}

TEST(HttpBody, LibreTranslateReadsAFormUnlessTheBodyIsJson) {
  httplib::Request form = post("");
  form.params.emplace("q", "one\r\ntwo\rthree\n");
  form.params.emplace("source", "en");
  form.params.emplace("alternatives", "2");
  form.params.emplace("unknown", "dropped");
  form.files.emplace("target", httplib::MultipartFormData{"target", "es", "", ""});
  EXPECT_EQ(libre_body(form), json::parse(R"({"q": "one\ntwo\nthree\n", "source": "en", "target": "es",
                                              "alternatives": 2})"));
  httplib::Request bad = post("");
  bad.params.emplace("alternatives", "2x");
  EXPECT_EQ(failure_of([&] { libre_body(bad); }), "400 Invalid request: alternatives must be an integer (got \"2x\")");
  EXPECT_EQ(libre_body(post(R"({"q": "a\r\nb"})", "application/json; charset=utf-8")),
            json::parse(R"({"q": "a\r\nb"})"));  // JSON is taken as sent
  EXPECT_TRUE(
      starts_with(failure_of([] { libre_body(post("q=a", "application/json")); }), "400 Invalid JSON format: "));
}

TEST(HttpApiKey, TheBodysKeyThenBearerThenXApiKey) {
  httplib::Request req = post("");
  EXPECT_EQ(api_key_of(req, json::object()), std::nullopt);
  req.headers.emplace("X-API-Key", "from-x");
  EXPECT_EQ(api_key_of(req, json::object()), "from-x");
  req.headers.emplace("Authorization", "Bearer from-bearer");
  EXPECT_EQ(api_key_of(req, json::object()), "from-bearer");
  EXPECT_EQ(api_key_of(req, {{"api_key", "from-body"}}), "from-body");
  EXPECT_EQ(api_key_of(req, {{"api_key", 5}}), "from-bearer");  // not a string: not a key
  httplib::Request basic = post("");
  basic.headers.emplace("Authorization", "Basic abc");
  EXPECT_EQ(api_key_of(basic, json::array()), std::nullopt);
}

std::string refusal_of(const httplib::Request& req) {
  const std::optional<ApiError> e = unbounded_body(req);
  return e ? std::to_string(e->status()) + " " + e->what() : "(none)";
}

TEST(HttpBody, PostBodiesOfUnknownSizeAreRefused) {
  httplib::Request get;
  get.method = "GET";
  EXPECT_EQ(refusal_of(get), "(none)");
  httplib::Request req = post("x");
  EXPECT_EQ(refusal_of(req), "411 Length Required: send the body with a Content-Length (not chunked)");
  req.headers.emplace("Content-Length", "1");
  EXPECT_EQ(refusal_of(req), "(none)");
  req.headers.emplace("Content-Encoding", "identity");
  EXPECT_EQ(refusal_of(req), "(none)");
  httplib::Request gzip = post("x");
  gzip.headers.emplace("Content-Length", "1");
  gzip.headers.emplace("Content-Encoding", "gzip");
  EXPECT_EQ(refusal_of(gzip), "415 Unsupported Media Type: Content-Encoding gzip is not accepted; send the body as is");
}

TEST(HttpErrors, UnroutedErrorsSayWhatWasAsked) {
  EXPECT_EQ(unrouted_error_message(404, "GET", "/nope", 100), "Not Found: no such path /nope");
  EXPECT_EQ(unrouted_error_message(405, "PUT", "/translate", 100), "Method Not Allowed: PUT /translate");
  EXPECT_EQ(unrouted_error_message(413, "POST", "/translate", 1048576),
            "Request Entity Too Large: the body is larger than 1048576 bytes");
  EXPECT_EQ(unrouted_error_message(400, "GET", "/", 100), "Bad Request");
  EXPECT_EQ(unrouted_error_message(431, "GET", "/", 100), "Request Header Fields Too Large");
  EXPECT_EQ(reason(414), "URI Too Long");
  EXPECT_EQ(reason(501), "Internal Server Error");
  EXPECT_EQ(reason(418), "HTTP error 418");
}

TEST(HttpRoutes, TheDocumentedRoutesAndTheirMetricLabels) {
  std::vector<std::string> posts, gets;
  for (const Route& r : routes()) (r.post ? posts : gets).push_back(r.path);
  EXPECT_EQ(posts,
            (std::vector<std::string>{"/translate", "/detect", "/translate_file", "/v1/translate", "/v1/score"}));
  EXPECT_EQ(gets, (std::vector<std::string>{"/download_file", "/languages", "/frontend/settings", "/v1/models",
                                            "/health", "/metrics", "/"}));
  EXPECT_EQ(metric_path("/v1/score"), "/v1/score");
  EXPECT_EQ(metric_path("/"), "/");
  EXPECT_EQ(metric_path("/v1/scores"), "other");
  EXPECT_EQ(metric_path("/translate/"), "other");
  // Every download counts under one label, whatever file it names.
  EXPECT_EQ(metric_path("/download_file/0123456789abcdef0123456789abcdef.a.txt"), "/download_file");
}

}  // namespace
}  // namespace attn::serve
