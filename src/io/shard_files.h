// ShardFiles: reads by offset from a set of local shards, keeping at most `max_open` of them
// open (the least recently used is closed first; a read in progress keeps its descriptor). Each
// shard is checked when opened against the size and modification time it had when it was
// indexed: a shard rewritten since then is an error, not wrong bytes.
//
//   ShardFiles files(paths, stamps, 64);
//   SLUICE_RETURN_IF_ERROR(files.ReadAt(3, offset, span));   // pread, all of it
//
// Thread-safety: ReadAt may run on many threads at once.
#ifndef SLUICE_IO_SHARD_FILES_H_
#define SLUICE_IO_SHARD_FILES_H_

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/file_util.h"
#include "sluice/status.h"

namespace sluice {

class ShardFiles {
 public:
  // REQUIRES: paths.size() == stamps.size(); max_open >= 1.
  ShardFiles(std::vector<std::string> paths, std::vector<FileStamp> stamps, int max_open);
  ~ShardFiles();
  ShardFiles(const ShardFiles&) = delete;
  ShardFiles& operator=(const ShardFiles&) = delete;

  // Exactly out.size() bytes of shard `shard` from `offset`. Errors name the shard: NotFound,
  // IOError, CorruptData ("changed since it was indexed"; "ends before byte N").
  // REQUIRES: 0 <= shard < number of paths.
  Status ReadAt(int shard, int64_t offset, std::span<uint8_t> out) const;

  int open_count() const;

 private:
  struct Fd;
  Result<std::shared_ptr<Fd>> Get(int shard) const;

  std::vector<std::string> paths_;
  std::vector<FileStamp> stamps_;
  const size_t max_open_;
  mutable std::mutex mu_;
  mutable std::list<int> lru_;  // most recent first
  mutable std::unordered_map<int, std::pair<std::shared_ptr<Fd>, std::list<int>::iterator>> open_;
};

}  // namespace sluice

#endif  // SLUICE_IO_SHARD_FILES_H_
