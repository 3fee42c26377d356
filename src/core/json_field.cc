#include "core/json_field.h"

#include <optional>
#include <string>

namespace sluice {

namespace {

constexpr int kMaxDepth = 64;

// A cursor over the text; each step returns false on malformed input, with `error` set.
class JsonScanner {
 public:
  explicit JsonScanner(std::span<const uint8_t> s) : s_(s) {}

  std::string error;
  size_t pos() const { return i_; }
  bool AtEnd() {
    SkipSpace();
    return i_ == s_.size();
  }
  bool Expect(char c) {
    SkipSpace();
    if (i_ < s_.size() && s_[i_] == static_cast<uint8_t>(c)) return ++i_, true;
    return Fail(std::string("expected '") + c + "'");
  }
  bool Peek(char c) {
    SkipSpace();
    return i_ < s_.size() && s_[i_] == static_cast<uint8_t>(c);
  }
  bool PeekNumber() {
    SkipSpace();
    return i_ < s_.size() && (s_[i_] == '-' || (s_[i_] >= '0' && s_[i_] <= '9'));
  }
  // A string into `out` (escapes decoded; \u to UTF-8).
  bool String(std::string* out);
  // A number; `integer` set when it is a plain integer within int64.
  bool Number(std::optional<int64_t>* integer);
  // Any value, skipped.
  bool Value(int depth);

 private:
  bool Fail(std::string what) {
    if (error.empty()) error = std::move(what) + " at byte " + std::to_string(i_);
    return false;
  }
  void SkipSpace() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool Hex4(uint32_t* v);
  bool Literal(std::string_view word) {
    if (s_.size() - i_ < word.size()) return Fail("bad literal");
    for (size_t k = 0; k < word.size(); ++k)
      if (s_[i_ + k] != static_cast<uint8_t>(word[k])) return Fail("bad literal");
    i_ += word.size();
    return true;
  }

  std::span<const uint8_t> s_;
  size_t i_ = 0;
};

bool JsonScanner::Hex4(uint32_t* v) {
  if (s_.size() - i_ < 4) return Fail("short \\u escape");
  *v = 0;
  for (int k = 0; k < 4; ++k) {
    const uint8_t c = s_[i_++];
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return Fail("bad \\u escape");
    *v = *v * 16 + static_cast<uint32_t>(d);
  }
  return true;
}

bool JsonScanner::String(std::string* out) {
  if (!Expect('"')) return false;
  out->clear();
  while (i_ < s_.size()) {
    const uint8_t c = s_[i_++];
    if (c == '"') return true;
    if (c < 0x20) return Fail("control character in a string");
    if (c != '\\') {
      out->push_back(static_cast<char>(c));
      continue;
    }
    if (i_ == s_.size()) break;
    const uint8_t e = s_[i_++];
    switch (e) {
      case '"': case '\\': case '/': out->push_back(static_cast<char>(e)); break;
      case 'b': out->push_back('\b'); break;
      case 'f': out->push_back('\f'); break;
      case 'n': out->push_back('\n'); break;
      case 'r': out->push_back('\r'); break;
      case 't': out->push_back('\t'); break;
      case 'u': {
        uint32_t cp;
        if (!Hex4(&cp)) return false;
        if (cp >= 0xD800 && cp < 0xDC00 && s_.size() - i_ >= 6 && s_[i_] == '\\' && s_[i_ + 1] == 'u') {
          i_ += 2;
          uint32_t low;
          if (!Hex4(&low)) return false;
          cp = low >= 0xDC00 && low < 0xE000 ? 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00) : 0xFFFD;
        }
        if (cp < 0x80) {
          out->push_back(static_cast<char>(cp));
        } else if (cp < 0x800) {
          out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
          out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else if (cp < 0x10000) {
          out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
          out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
          out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else {
          out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
          out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
          out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
          out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        }
        break;
      }
      default: return Fail("bad escape");
    }
  }
  return Fail("unterminated string");
}

bool JsonScanner::Number(std::optional<int64_t>* integer) {
  SkipSpace();
  const bool negative = i_ < s_.size() && s_[i_] == '-';
  if (negative) ++i_;
  auto digits = [&] {
    const size_t from = i_;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    return i_ - from;
  };
  const size_t first = i_;
  const size_t n = digits();
  if (n == 0 || (n > 1 && s_[first] == '0')) return Fail("bad number");
  bool plain = true;
  if (i_ < s_.size() && s_[i_] == '.') {
    ++i_, plain = false;
    if (digits() == 0) return Fail("bad number");
  }
  if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
    ++i_, plain = false;
    if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
    if (digits() == 0) return Fail("bad number");
  }
  integer->reset();
  if (!plain) return true;
  uint64_t v = 0;
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  for (size_t k = first; k < first + n; ++k) {
    const uint64_t d = s_[k] - '0';
    if (v > (limit - d) / 10) return true;  // a number, but not an int64
    v = v * 10 + d;
  }
  *integer = negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return true;
}

bool JsonScanner::Value(int depth) {
  if (depth > kMaxDepth) return Fail("nested deeper than 64");
  SkipSpace();
  if (i_ == s_.size()) return Fail("missing value");
  std::string text;
  std::optional<int64_t> number;
  switch (s_[i_]) {
    case '"': return String(&text);
    case 't': return Literal("true");
    case 'f': return Literal("false");
    case 'n': return Literal("null");
    case '{':
      ++i_;
      if (Peek('}')) return ++i_, true;
      do {
        if (!String(&text) || !Expect(':') || !Value(depth + 1)) return false;
      } while (Peek(',') && ++i_);
      return Expect('}');
    case '[':
      ++i_;
      if (Peek(']')) return ++i_, true;
      do {
        if (!Value(depth + 1)) return false;
      } while (Peek(',') && ++i_);
      return Expect(']');
    default: return Number(&number);
  }
}

}  // namespace

Result<int64_t> JsonIntField(std::span<const uint8_t> json, std::string_view field) {
  JsonScanner in(json);
  std::optional<int64_t> found;
  bool seen = false;
  auto bad = [&](const std::string& why) { return CorruptData("not a JSON object: ", why.empty() ? in.error : why); };
  if (!in.Expect('{')) return bad("");
  if (in.Peek('}')) {
    in.Expect('}');
  } else {
    std::string key;
    do {
      if (!in.String(&key) || !in.Expect(':')) return bad("");
      if (key == field) {
        if (seen) return CorruptData("the JSON field '", field, "' appears twice");
        seen = true;
        const bool number = in.PeekNumber();  // after the spaces
        const size_t at = in.pos();
        if (!number) {
          if (!in.Value(1)) return bad("");
          return CorruptData("the JSON field '", field, "' is not a number");
        }
        if (!in.Number(&found)) return bad("");
        if (!found) return CorruptData("the JSON field '", field, "' is not an int64 (at byte ", at, ")");
      } else if (!in.Value(1)) {
        return bad("");
      }
    } while (in.Peek(',') && in.Expect(','));
    if (!in.Expect('}')) return bad("");
  }
  if (!in.AtEnd()) return bad("text after the object at byte " + std::to_string(in.pos()));
  if (!seen) return CorruptData("the JSON object has no field '", field, "'");
  return *found;
}

}  // namespace sluice
