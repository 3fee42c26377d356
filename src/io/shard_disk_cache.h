// ShardDiskCache: whole copies of remote shards (http, https, pipe:) in a local folder, so that
// the epochs after the first read them from the disk. A copy is written under a temporary name
// while its stream is read and renamed into place only once the stream ended cleanly, so a shard
// half-downloaded when a job dies is never taken for a whole one; such leftovers of processes
// that no longer run are removed when the cache is opened. The folder is kept within a byte
// budget: after each new copy, the least recently used ones (by modification time, which a use
// renews) are removed until the rest fit. A copy larger than the budget is not kept.
//
//   SLUICE_ASSIGN_OR_RETURN(auto cache, ShardDiskCache::Open("/scratch/shards", 100ll << 30));
//   if (auto path = cache->Lookup(url)) ...               // read the local copy
//   SLUICE_ASSIGN_OR_RETURN(auto w, cache->Begin(url));   // w->Append(bytes) ... w->Commit()
//
// Several processes may share one folder: each writes its own temporary file, and the rename
// that publishes a copy is atomic; a copy removed while another process reads it stays readable
// to that process (the file lives until it is closed).
//
// Thread-safety: all methods may run on many threads at once.
#ifndef SLUICE_IO_SHARD_DISK_CACHE_H_
#define SLUICE_IO_SHARD_DISK_CACHE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>

#include "sluice/status.h"

namespace sluice {

class ShardDiskCache {
 public:
  // Makes the folder if missing. IOError naming it when it cannot be made or written.
  // REQUIRES: budget >= 0.
  static Result<std::shared_ptr<ShardDiskCache>> Open(const std::string& dir, int64_t budget);

  // The local copy of `url` (its use renewed), or nullopt.
  std::optional<std::string> Lookup(const std::string& url);

  // A copy of `url` being written: Append the stream's bytes in order, then Commit once it ended
  // cleanly. Destroyed without Commit (a failed or stopped stream), it leaves nothing.
  class Writer {
   public:
    ~Writer();
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;
    // Once the copy outgrows the budget, further bytes are dropped and Commit keeps nothing.
    Status Append(std::span<const uint8_t> bytes);
    // Publishes the copy and evicts older ones beyond the budget. IOError naming the file.
    Status Commit();

   private:
    friend class ShardDiskCache;
    Writer(ShardDiskCache* cache, std::string tmp, std::string final_path, int fd)
        : cache_(cache), tmp_(std::move(tmp)), final_(std::move(final_path)), fd_(fd) {}
    ShardDiskCache* cache_;
    std::string tmp_, final_;
    int fd_;
    int64_t bytes_ = 0;
    bool too_large_ = false;
  };
  // IOError naming the temporary file when it cannot be made.
  Result<std::unique_ptr<Writer>> Begin(const std::string& url);

  struct Counters {
    int64_t hits = 0, misses = 0;  // Lookups that found a copy / did not
    int64_t evictions = 0;         // copies removed for the budget
    int64_t bytes = 0;             // held in the folder after the last commit
    int64_t budget = 0;
  };
  Counters counters() const;

  const std::string& dir() const { return dir_; }
  // The file name a copy of `url` has in the folder: a hash of the url, then its last part.
  static std::string EntryName(const std::string& url);

 private:
  ShardDiskCache(std::string dir, int64_t budget) : dir_(std::move(dir)), budget_(budget) {}
  // Removes the least recently used copies until the folder fits the budget, sparing `keep`.
  void Evict(const std::string& keep);
  void RemoveLeftovers();

  const std::string dir_;
  const int64_t budget_;
  std::mutex evict_mu_;
  std::atomic<int64_t> hits_{0}, misses_{0}, evictions_{0}, bytes_{0};
};

}  // namespace sluice

#endif  // SLUICE_IO_SHARD_DISK_CACHE_H_
