#include "io/shard_urls.h"

#include <glob.h>

#include <charconv>
#include <optional>

namespace sluice {

namespace {

// The position of the '}' closing the '{' at `open`, or npos.
size_t Closing(std::string_view s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == '{') ++depth;
    if (s[i] == '}' && --depth == 0) return i;
  }
  return std::string_view::npos;
}

// The alternatives of a brace body split at its top-level commas; one item when it has none.
std::vector<std::string_view> Alternatives(std::string_view body) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] == '{') ++depth;
    if (body[i] == '}') --depth;
    if (body[i] == ',' && depth == 0) {
      out.push_back(body.substr(start, i - start));
      start = i + 1;
    }
  }
  out.push_back(body.substr(start));
  return out;
}

std::optional<long long> Integer(std::string_view s) {
  long long v = 0;
  if (s.empty() || s.size() > 18) return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

// "08..10" -> 08 09 10 (padded to the wider end when either is written with a leading zero).
std::optional<std::vector<std::string>> Range(std::string_view body) {
  const size_t dots = body.find("..");
  if (dots == std::string_view::npos) return std::nullopt;
  const std::string_view a = body.substr(0, dots), b = body.substr(dots + 2);
  const std::optional<long long> lo = Integer(a), hi = Integer(b);
  if (!lo || !hi) return std::nullopt;
  const bool padded = (a.size() > 1 && a[0] == '0') || (b.size() > 1 && b[0] == '0');
  const size_t width = padded ? std::max(a.size(), b.size()) : 0;
  std::vector<std::string> out;
  const long long step = *lo <= *hi ? 1 : -1;
  for (long long v = *lo;; v += step) {
    std::string s = std::to_string(v);
    if (s.size() < width) s.insert(0, width - s.size(), '0');
    out.push_back(std::move(s));
    if (v == *hi || out.size() > kMaxExpansions) break;
  }
  return out;
}

Status Expand(std::string_view pattern, std::vector<std::string>* out) {
  const size_t open = pattern.find('{');
  if (open == std::string_view::npos) {
    if (pattern.find('}') != std::string_view::npos) return InvalidArgument("an unmatched '}' in '", pattern, "'");
    out->emplace_back(pattern);
    return Status::OK();
  }
  const size_t close = Closing(pattern, open);
  if (close == std::string_view::npos) return InvalidArgument("an unmatched '{' in '", pattern, "'");
  const std::string_view head = pattern.substr(0, open), body = pattern.substr(open + 1, close - open - 1),
                         tail = pattern.substr(close + 1);
  std::vector<std::string> middles;
  const std::vector<std::string_view> alts = Alternatives(body);
  if (alts.size() > 1) {
    for (std::string_view alt : alts) SLUICE_RETURN_IF_ERROR(Expand(alt, &middles));
  } else if (std::optional<std::vector<std::string>> range = Range(body)) {
    middles = std::move(*range);
  } else {  // "{x}": literal, the braces kept
    std::vector<std::string> inner;
    SLUICE_RETURN_IF_ERROR(Expand(body, &inner));
    for (std::string& s : inner) middles.push_back("{" + s + "}");
  }
  std::vector<std::string> rests;
  SLUICE_RETURN_IF_ERROR(Expand(tail, &rests));
  if (middles.size() * rests.size() + out->size() > kMaxExpansions)
    return InvalidArgument("'", pattern, "' expands to more than ", kMaxExpansions, " names");
  for (const std::string& m : middles)
    for (const std::string& r : rests) out->push_back(std::string(head) + m + r);
  return Status::OK();
}

}  // namespace

Result<std::vector<std::string>> ExpandBraces(std::string_view pattern) {
  std::vector<std::string> out;
  SLUICE_RETURN_IF_ERROR(Expand(pattern, &out));
  return out;
}

bool IsStreamUrl(std::string_view url) {
  return url.starts_with("http://") || url.starts_with("https://") || url.starts_with("pipe:");
}

Result<std::vector<std::string>> ExpandShardUrls(const std::vector<std::string>& urls) {
  if (urls.empty()) return InvalidArgument("no shards given");
  std::vector<std::string> out;
  for (const std::string& url : urls) {
    SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> names, ExpandBraces(url));
    for (std::string& name : names) {
      if (IsStreamUrl(name) || name.find_first_of("*?[") == std::string::npos) {
        out.push_back(std::move(name));
        continue;
      }
      glob_t g{};
      const int rc = glob(name.c_str(), GLOB_ERR, nullptr, &g);
      if (rc == GLOB_NOMATCH) {
        globfree(&g);
        return NotFound("no file matches '", name, "'");
      }
      if (rc != 0) {
        globfree(&g);
        return IOError("cannot list '", name, "'");
      }
      for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);  // glob sorts them
      globfree(&g);
    }
    if (out.size() > kMaxExpansions) return InvalidArgument("more than ", kMaxExpansions, " shards");
  }
  return out;
}

}  // namespace sluice
