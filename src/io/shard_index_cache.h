// The index of a shard (IndexShard's result) kept in a cache folder between runs, so that a
// large dataset is walked once, not at every start. An entry is keyed by the shard's absolute
// path, its size and modification time, and what was asked of it (the WebDatasetSpec): a shard
// rewritten, or other keys asked for, miss and are walked again. Entries are written whole
// (core/cache_entry.h: a temporary file renamed, with a checksum); one that does not read back exactly is a
// miss, never a wrong index.
//
//   if (std::optional<ShardIndex> hit = LoadShardIndex(dir, path, stamp, spec)) ...
//   else { index = IndexShard(...); SaveShardIndex(dir, path, stamp, spec, index); }
//
// Thread-safety: free functions; many threads may load and save (different or equal entries)
// at once.
#ifndef SLUICE_IO_SHARD_INDEX_CACHE_H_
#define SLUICE_IO_SHARD_INDEX_CACHE_H_

#include <optional>
#include <string>

#include "core/file_util.h"
#include "io/webdataset_index.h"
#include "io/webdataset_layout.h"
#include "sluice/status.h"

namespace sluice {

// The entry's file name in the cache folder (a hash of the key).
std::string ShardIndexEntryName(const std::string& shard, const FileStamp& stamp, const WebDatasetSpec& spec);

// nullopt when the entry is missing, unreadable, damaged or for another shard.
std::optional<ShardIndex> LoadShardIndex(const std::string& dir, const std::string& shard, const FileStamp& stamp,
                                         const WebDatasetSpec& spec);

// Writes the entry (the folder made if missing). IOError naming the file when it cannot.
Status SaveShardIndex(const std::string& dir, const std::string& shard, const FileStamp& stamp,
                      const WebDatasetSpec& spec, const ShardIndex& index);

}  // namespace sluice

#endif  // SLUICE_IO_SHARD_INDEX_CACHE_H_
