#include "ember/serialize/json.h"

#include "ember/core/error.h"

namespace ember::serialize {

namespace {

// Checkpoints nest a few levels; a deep header is corrupt or hostile, and recursion must not
// overflow the stack on it.
constexpr int kMaxDepth = 256;

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Json parse_document() {
    Json v = value(0);
    skip_ws();
    if (pos_ != text_.size()) fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const char* what) {
    EMBER_ERROR(ErrorKind::Runtime, "ember.load: corrupt checkpoint header (", what, " at byte ",
                pos_, ")");
  }

  void skip_ws() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\n'))
      ++pos_;
  }

  char peek() {
    skip_ws();
    if (pos_ >= text_.size()) fail("unexpected end");
    return text_[pos_];
  }

  void expect(char c) {
    if (peek() != c) fail("unexpected character");
    ++pos_;
  }

  bool literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  Json value(int depth) {
    if (depth > kMaxDepth) fail("nesting too deep");
    Json v;
    char c = peek();
    if (c == '{') {
      v.kind = Json::Kind::Object;
      ++pos_;
      if (peek() == '}') return ++pos_, v;
      for (;;) {
        if (peek() != '"') fail("expected a key");
        std::string key = string();
        expect(':');
        v.fields.emplace_back(std::move(key), value(depth + 1));
        if (peek() == '}') return ++pos_, v;
        expect(',');
      }
    }
    if (c == '[') {
      v.kind = Json::Kind::Array;
      ++pos_;
      if (peek() == ']') return ++pos_, v;
      for (;;) {
        v.items.push_back(value(depth + 1));
        if (peek() == ']') return ++pos_, v;
        expect(',');
      }
    }
    if (c == '"') {
      v.kind = Json::Kind::String;
      v.s = string();
      return v;
    }
    if (literal("null")) return v;
    if (literal("true") || literal("false")) {
      v.kind = Json::Kind::Bool;
      v.b = text_[pos_ - 1] == 'e' && text_[pos_ - 2] == 'u';
      return v;
    }
    v.kind = Json::Kind::Int;
    v.i = integer();
    return v;
  }

  int64_t integer() {
    bool neg = pos_ < text_.size() && text_[pos_] == '-';
    if (neg) ++pos_;
    size_t start = pos_;
    uint64_t mag = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      uint64_t d = uint64_t(text_[pos_] - '0');
      if (mag > (UINT64_MAX - d) / 10) fail("integer out of range");
      mag = mag * 10 + d;
      ++pos_;
    }
    if (pos_ == start) fail("unexpected character");
    if (mag > uint64_t(INT64_MAX) + (neg ? 1 : 0)) fail("integer out of range");
    return neg ? int64_t(0 - mag) : int64_t(mag);
  }

  std::string string() {
    ++pos_;  // opening quote
    std::string out;
    for (;;) {
      if (pos_ >= text_.size()) fail("unterminated string");
      char c = text_[pos_++];
      if (c == '"') return out;
      if (uint8_t(c) < 0x20) fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) fail("unterminated string");
      char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u':
          append_utf8(out, code_point());
          break;
        default:
          fail("bad escape");
      }
    }
  }

  uint32_t hex4() {
    if (pos_ + 4 > text_.size()) fail("bad \\u escape");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      char c = text_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f') v |= uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= uint32_t(c - 'A' + 10);
      else fail("bad \\u escape");
    }
    return v;
  }

  uint32_t code_point() {
    uint32_t cp = hex4();
    // A surrogate pair encodes one code point; lone surrogates (Python's surrogateescape) pass.
    if (cp >= 0xD800 && cp < 0xDC00 && text_.substr(pos_, 2) == "\\u") {
      size_t save = pos_;
      pos_ += 2;
      uint32_t lo = hex4();
      if (lo >= 0xDC00 && lo < 0xE000) return 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      pos_ = save;
    }
    return cp;
  }

  static void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

const Json* Json::find(std::string_view key) const {
  for (const auto& [k, v] : fields)
    if (k == key) return &v;
  return nullptr;
}

Json parse_json(std::string_view text) { return Parser(text).parse_document(); }

void append_json_string(std::string& out, std::string_view s) {
  static const char* hex = "0123456789abcdef";
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (uint8_t(c) < 0x20) {
      out += "\\u00";
      out += hex[uint8_t(c) >> 4];
      out += hex[uint8_t(c) & 15];
    } else {
      out += c;  // UTF-8 bytes pass through unchanged
    }
  }
  out += '"';
}

}  // namespace ember::serialize
