#include "io/shard_files.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/file_util.h"

namespace sluice {

struct ShardFiles::Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

ShardFiles::ShardFiles(std::vector<std::string> paths, std::vector<FileStamp> stamps, int max_open)
    : paths_(std::move(paths)), stamps_(std::move(stamps)), max_open_(static_cast<size_t>(max_open)) {}

ShardFiles::~ShardFiles() = default;

int ShardFiles::open_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(open_.size());
}

Result<std::shared_ptr<ShardFiles::Fd>> ShardFiles::Get(int shard) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = open_.find(shard); it != open_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second.second);
    return it->second.first;
  }
  const std::string& path = paths_[static_cast<size_t>(shard)];
  int64_t size = 0;
  SLUICE_ASSIGN_OR_RETURN(int raw, OpenRegularFile(path, &size));
  auto fd = std::make_shared<Fd>();
  fd->fd = raw;
  SLUICE_ASSIGN_OR_RETURN(FileStamp now, StampOf(raw, path));
  if (!(now == stamps_[static_cast<size_t>(shard)]))
    return CorruptData(path, ": the shard changed since it was indexed (size or modification time)");
  while (open_.size() >= max_open_) {
    open_.erase(lru_.back());
    lru_.pop_back();
  }
  lru_.push_front(shard);
  open_.emplace(shard, std::make_pair(fd, lru_.begin()));
  return fd;
}

Status ShardFiles::ReadAt(int shard, int64_t offset, std::span<uint8_t> out) const {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<Fd> fd, Get(shard));
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = pread(fd->fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + static_cast<int64_t>(done)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IOError(paths_[static_cast<size_t>(shard)], ": ", std::strerror(errno));
    if (n == 0)
      return CorruptData(paths_[static_cast<size_t>(shard)], ": ends before byte ", offset + static_cast<int64_t>(out.size()));
    done += static_cast<size_t>(n);
  }
  return Status::OK();
}

}  // namespace sluice
