#include "io/webdataset_layout.h"

#include <cctype>
#include <limits>

namespace sluice {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool IsSpace(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// At most 24 bytes of `bytes`, printable, for an error message.
std::string Excerpt(std::span<const uint8_t> bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size() && i < 24; ++i)
    out += std::isprint(bytes[i]) ? static_cast<char>(bytes[i]) : '?';
  return bytes.size() > 24 ? out + "..." : out;
}

}  // namespace

std::optional<MemberKey> SplitMemberName(std::string_view name) {
  const size_t slash = name.rfind('/');
  const size_t base = slash == std::string_view::npos ? 0 : slash + 1;
  const size_t dot = name.find('.', base);
  if (dot == std::string_view::npos || dot == base || dot + 1 == name.size()) return std::nullopt;
  return MemberKey{std::string(name.substr(0, dot)), Lower(name.substr(dot + 1))};
}

Result<std::vector<std::string>> ParseExtList(std::string_view list, const char* what) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t end = std::min(list.find(';', start), list.size());
    std::string_view item = list.substr(start, end - start);
    if (!item.empty() && item.front() == '.') item.remove_prefix(1);
    if (item.empty()) return InvalidArgument(what, " has an empty extension: '", list, "'");
    out.push_back(Lower(item));
    if (end == list.size()) return out;
    start = end + 1;
  }
}

Result<int64_t> ParseIntLabel(std::span<const uint8_t> bytes) {
  size_t i = 0, n = bytes.size();
  while (i < n && IsSpace(bytes[i])) ++i;
  while (n > i && IsSpace(bytes[n - 1])) --n;
  const bool negative = i < n && bytes[i] == '-';
  if (i < n && (bytes[i] == '-' || bytes[i] == '+')) ++i;
  if (i == n) return CorruptData("the label is not an integer: '", Excerpt(bytes), "'");
  uint64_t v = 0;
  const uint64_t limit = negative ? uint64_t{1} << 63 : static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  for (; i < n; ++i) {
    if (bytes[i] < '0' || bytes[i] > '9') return CorruptData("the label is not an integer: '", Excerpt(bytes), "'");
    const uint64_t digit = bytes[i] - '0';
    if (v > (limit - digit) / 10) return CorruptData("the label is out of the int64 range: '", Excerpt(bytes), "'");
    v = v * 10 + digit;
  }
  return negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
}

}  // namespace sluice
