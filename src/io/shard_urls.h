// Shard lists as users write them: brace patterns ("train-{00000..00127}.tar",
// "{train,val}-0.tar", nested), then, for local paths, shell globs ("shards/*.tar", sorted).
//
//   ExpandBraces("a-{0..2}.tar")        -> a-0.tar a-1.tar a-2.tar
//   ExpandBraces("a-{08..10}.tar")      -> a-08.tar a-09.tar a-10.tar   (padded as written)
//   ExpandShardUrls({"data/*.tar"})      -> the matching files, sorted
//
// A brace with no comma and no range ("{x}") is kept as written, as the shell does.
// Thread-safety: pure functions (ExpandShardUrls reads the file system).
#ifndef SLUICE_IO_SHARD_URLS_H_
#define SLUICE_IO_SHARD_URLS_H_

#include <string>
#include <string_view>
#include <vector>

#include "sluice/status.h"

namespace sluice {

// InvalidArgument for an unmatched brace, or more than kMaxExpansions names.
Result<std::vector<std::string>> ExpandBraces(std::string_view pattern);
inline constexpr size_t kMaxExpansions = 1 << 20;

// Each url's braces expanded; a local path with * ? or [ globbed (NotFound when nothing matches).
// "http://", "https://" and "pipe:" urls are kept as written. InvalidArgument for an empty list.
Result<std::vector<std::string>> ExpandShardUrls(const std::vector<std::string>& urls);

// Whether `url` names a stream (http, https, pipe:) rather than a local file.
bool IsStreamUrl(std::string_view url);

}  // namespace sluice

#endif  // SLUICE_IO_SHARD_URLS_H_
