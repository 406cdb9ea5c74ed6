#include "inspect/attention_record.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "core/error.h"
#include "core/float_decimal.h"
#include "core/text_file.h"
#include "core/utf8.h"

namespace attn::inspect {

namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;  // the writer keeps the documented key order

constexpr AttentionKind kKinds[] = {AttentionKind::cross, AttentionKind::decoder_self, AttentionKind::encoder_self};

// A JSON string; invalid UTF-8 is an error (core/utf8.h's validator), never replaced.
OrderedJson checked_string(const std::string& text, const char* what) {
  if (find_invalid_utf8(text)) throw Error(std::string("attention record: ") + what + " is not valid UTF-8");
  return OrderedJson(text);
}

OrderedJson checked_strings(const std::vector<std::string>& texts, const char* what) {
  OrderedJson list = OrderedJson::array();
  for (const std::string& text : texts) list.push_back(checked_string(text, what));
  return list;
}

double checked_number(double value, const char* what) {
  if (!std::isfinite(value)) throw Error(std::string("attention record: ") + what + " is not finite");
  return value;
}

// The error helpers name the file, the line and the key that is wrong.
struct Context {
  const std::string& file;
  std::int64_t line;
  [[noreturn]] void fail(const std::string& problem) const { throw_at(file, static_cast<std::size_t>(line), problem); }
};

const Json& member(const Json& object, const char* key, const std::string& where, const Context& context) {
  const auto it = object.find(key);
  if (it == object.end()) context.fail("missing key \"" + std::string(key) + "\"" + where);
  return *it;
}

std::string type_problem(const std::string& key, const char* expected, const Json& value) {
  return "key \"" + key + "\" must be " + expected + ", not " + value.type_name();
}

std::string get_string(const Json& object, const char* key, const Context& context) {
  const Json& value = member(object, key, "", context);
  if (!value.is_string()) context.fail(type_problem(key, "a string", value));
  return value.get<std::string>();
}

double get_number(const Json& object, const char* key, const Context& context) {
  const Json& value = member(object, key, "", context);
  if (!value.is_number()) context.fail(type_problem(key, "a number", value));
  return value.get<double>();
}

std::int64_t get_integer(const Json& object, const char* key, const std::string& where, const Context& context) {
  const Json& value = member(object, key, where, context);
  if (!value.is_number_integer()) context.fail(type_problem(key, "an integer", value) + where);
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
    context.fail("key \"" + std::string(key) + "\" is too large" + where);
  }
  return value.get<std::int64_t>();
}

std::vector<std::string> get_strings(const Json& object, const char* key, const Context& context) {
  const Json& value = member(object, key, "", context);
  if (!value.is_array()) context.fail(type_problem(key, "an array of strings", value));
  std::vector<std::string> strings;
  for (const Json& item : value) {
    if (!item.is_string())
      context.fail(type_problem(key, "an array of strings", value) + " (an element is " + item.type_name() + ")");
    strings.push_back(item.get<std::string>());
  }
  return strings;
}

AttentionMatrix parse_matrix(const Json& value, std::size_t index, const AttentionRecord& record,
                             const Context& context) {
  const std::string where = " in \"attention\"[" + std::to_string(index) + "]";
  if (!value.is_object())
    context.fail("\"attention\"[" + std::to_string(index) + "] must be an object, not " + value.type_name());
  AttentionMatrix matrix;
  const Json& kind = member(value, "kind", where, context);
  if (!kind.is_string()) context.fail(type_problem("kind", "a string", kind) + where);
  try {
    matrix.kind = parse_attention_kind(kind.get<std::string>());
  } catch (const Error& e) {
    context.fail(std::string("key \"kind\"") + where + ": " + e.what());
  }
  const std::int64_t layer = get_integer(value, "layer", where, context);
  const std::int64_t head = get_integer(value, "head", where, context);
  if (layer < 0 || layer > INT32_MAX) context.fail("key \"layer\" must be a non-negative int" + where);
  if (head < 0 || head > INT32_MAX) context.fail("key \"head\" must be a non-negative int" + where);
  matrix.layer = static_cast<int>(layer);
  matrix.head = static_cast<int>(head);

  const std::size_t sources = record.source_pieces.size(), targets = record.target_pieces.size();
  std::size_t rows = targets, cols = sources;
  const char* shape = "target_pieces × source_pieces";
  if (matrix.kind == AttentionKind::decoder_self) {
    cols = targets;
    shape = "target_pieces × target_pieces";
  } else if (matrix.kind == AttentionKind::encoder_self) {
    rows = sources;
    shape = "source_pieces × source_pieces";
  }
  const std::string expected = " (" + std::string(attention_kind_name(matrix.kind)) + " is " + shape + " = " +
                               std::to_string(rows) + " × " + std::to_string(cols) + ")";
  const Json& weights = member(value, "weights", where, context);
  if (!weights.is_array()) context.fail(type_problem("weights", "an array of rows", weights) + where);
  if (weights.size() != rows) {
    context.fail("key \"weights\"" + where + " has " + std::to_string(weights.size()) + " rows" + expected);
  }
  matrix.rows = static_cast<int>(rows);
  matrix.cols = static_cast<int>(cols);
  matrix.weights.reserve(rows * cols);
  for (std::size_t r = 0; r < rows; ++r) {
    const Json& row = weights[r];
    const std::string at = "key \"weights\"" + where + " row " + std::to_string(r);
    if (!row.is_array()) context.fail(at + " must be an array of numbers, not " + row.type_name());
    if (row.size() != cols) {
      context.fail(at + " has " + std::to_string(row.size()) + " columns" + expected);
    }
    for (std::size_t c = 0; c < cols; ++c) {
      if (!row[c].is_number())
        context.fail(at + " column " + std::to_string(c) + " is " + row[c].type_name() + ", not a number");
      const float weight = static_cast<float>(row[c].get<double>());
      if (!std::isfinite(weight)) context.fail(at + " column " + std::to_string(c) + " is not a finite float");
      matrix.weights.push_back(weight);
    }
  }
  return matrix;
}

}  // namespace

std::string_view attention_kind_name(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::cross:
      return "cross";
    case AttentionKind::decoder_self:
      return "decoder_self";
    case AttentionKind::encoder_self:
      return "encoder_self";
  }
  return "?";
}

AttentionKind parse_attention_kind(std::string_view name) {
  for (AttentionKind kind : kKinds) {
    if (attention_kind_name(kind) == name) return kind;
  }
  throw Error("unknown attention kind '" + std::string(name) + "' (known: cross, decoder_self, encoder_self)");
}

const AttentionMatrix* AttentionRecord::find(AttentionKind kind, int layer, int head) const {
  for (const AttentionMatrix& matrix : attention) {
    if (matrix.kind == kind && matrix.layer == layer && matrix.head == head) return &matrix;
  }
  return nullptr;
}

OrderedJson to_json(const AttentionRecord& record) {
  OrderedJson attention = OrderedJson::array();
  for (const AttentionMatrix& matrix : record.attention) {
    ATTN_CHECK(matrix.rows >= 0 && matrix.cols >= 0 &&
                   matrix.weights.size() == static_cast<std::size_t>(matrix.rows) * matrix.cols,
               "attention matrix size does not match its rows × cols");
    OrderedJson weights = OrderedJson::array();
    for (int r = 0; r < matrix.rows; ++r) {
      OrderedJson row = OrderedJson::array();
      row.get_ref<OrderedJson::array_t&>().reserve(static_cast<std::size_t>(matrix.cols));
      for (int c = 0; c < matrix.cols; ++c) {
        row.push_back(float_decimal(static_cast<float>(checked_number(matrix.at(r, c), "an attention weight"))));
      }
      weights.push_back(std::move(row));
    }
    OrderedJson one = OrderedJson::object();
    one["kind"] = attention_kind_name(matrix.kind);
    one["layer"] = matrix.layer;
    one["head"] = matrix.head;
    one["weights"] = std::move(weights);
    attention.push_back(std::move(one));
  }
  OrderedJson out = OrderedJson::object();
  out["line"] = record.line;
  out["source"] = checked_string(record.source, "source");
  out["target"] = checked_string(record.target, "target");
  out["source_pieces"] = checked_strings(record.source_pieces, "a source piece");
  out["target_pieces"] = checked_strings(record.target_pieces, "a target piece");
  out["log_prob"] = checked_number(record.log_prob, "log_prob");
  out["score"] = checked_number(record.score, "score");
  out["attention"] = std::move(attention);
  return out;
}

std::string to_json_line(const AttentionRecord& record) { return to_json(record).dump(); }

AttentionRecord parse_attention_record(std::string_view json_line, const std::string& file, std::int64_t line_number) {
  const Context context{file, line_number};
  Json json;
  try {
    json = Json::parse(json_line);
  } catch (const Json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
    std::string message = e.what();
    const std::size_t bracket = message.find("] ");
    if (bracket != std::string::npos) message.erase(0, bracket + 2);
    context.fail("not JSON: " + message);
  }
  if (!json.is_object()) context.fail(std::string("a record must be a JSON object, not ") + json.type_name());

  AttentionRecord record;
  record.line = get_integer(json, "line", "", context);
  record.source = get_string(json, "source", context);
  record.target = get_string(json, "target", context);
  record.source_pieces = get_strings(json, "source_pieces", context);
  record.target_pieces = get_strings(json, "target_pieces", context);
  record.log_prob = get_number(json, "log_prob", context);
  record.score = get_number(json, "score", context);
  const Json& attention = member(json, "attention", "", context);
  if (!attention.is_array()) context.fail(type_problem("attention", "an array of matrices", attention));
  std::set<std::tuple<AttentionKind, int, int>> seen;
  for (std::size_t m = 0; m < attention.size(); ++m) {
    AttentionMatrix matrix = parse_matrix(attention[m], m, record, context);
    if (!seen.insert({matrix.kind, matrix.layer, matrix.head}).second) {
      context.fail("key \"attention\"[" + std::to_string(m) + "] repeats " +
                   std::string(attention_kind_name(matrix.kind)) + " layer " + std::to_string(matrix.layer) + " head " +
                   std::to_string(matrix.head));
    }
    record.attention.push_back(std::move(matrix));
  }
  return record;
}

std::vector<AttentionRecord> read_attention_records(const std::string& file) {
  const std::vector<std::string> lines = read_text_lines(file);
  std::vector<AttentionRecord> records;
  records.reserve(lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty()) throw_at(file, i + 1, "empty line (one JSON record per line, no blank lines)");
    records.push_back(parse_attention_record(lines[i], file, static_cast<std::int64_t>(i + 1)));
  }
  return records;
}

AttentionMatrix mean_of_heads(const std::vector<const AttentionMatrix*>& heads, const std::string& where) {
  ATTN_CHECK(!heads.empty(), "the mean of no heads");
  AttentionMatrix mean = *heads.front();
  std::vector<double> sum(mean.weights.begin(), mean.weights.end());
  for (std::size_t h = 1; h < heads.size(); ++h) {
    if (heads[h]->rows != mean.rows || heads[h]->cols != mean.cols) throw Error(where + " differ in shape");
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += heads[h]->weights[i];
  }
  mean.head = kMeanOfHeads;
  for (std::size_t i = 0; i < sum.size(); ++i) mean.weights[i] = static_cast<float>(sum[i] / heads.size());
  return mean;
}

}  // namespace attn::inspect
