#pragma once
// The small JSON subset a checkpoint header uses: objects, arrays, strings, integers, true,
// false, null. Parsing is defensive (depth limit, exact grammar): headers come from files.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ember::serialize {

/// A parsed JSON value; numbers are integers only (floats are stored as hex strings).
struct Json {
  enum class Kind { Null, Bool, Int, String, Array, Object };
  Kind kind = Kind::Null;
  bool b = false;
  int64_t i = 0;
  std::string s;
  std::vector<Json> items;                           // Array
  std::vector<std::pair<std::string, Json>> fields;  // Object, in file order

  /// The field `key` of an object, or nullptr.
  const Json* find(std::string_view key) const;
};

/// Parses `text` completely; throws ember::Error (RuntimeError) naming the problem.
Json parse_json(std::string_view text);
/// Appends `s` as a JSON string literal.
void append_json_string(std::string& out, std::string_view s);

}  // namespace ember::serialize
