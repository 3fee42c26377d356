#include "io/shard_disk_cache.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/fnv.h"

namespace sluice {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kPart = ".part-";  // a copy being written: NAME.part-PID-N

std::atomic<uint64_t> next_tmp{0};

// Whether `name` is a copy's (EntryName's form): other files in the folder are never touched.
bool IsEntryName(const std::string& name) {
  if (name.size() < 17 || name[16] != '-') return false;
  return std::all_of(name.begin(), name.begin() + 16, [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

}  // namespace

std::string ShardDiskCache::EntryName(const std::string& url) {
  Fnv1a h;
  h.Mix(url);
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h.value()));
  std::string_view rest(url);
  rest = rest.substr(0, rest.find_first_of("?#"));
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  rest = rest.substr(rest.find_last_of("/ :") == std::string_view::npos ? 0 : rest.find_last_of("/ :") + 1);
  std::string base;
  for (char c : rest.substr(0, 80))
    base += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '_';
  return std::string(hex) + "-" + base;
}

Result<std::shared_ptr<ShardDiskCache>> ShardDiskCache::Open(const std::string& dir, int64_t budget) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return IOError(dir, ": cannot make the shard cache folder: ", ec.message());
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    return IOError(dir, ": the shard cache folder is not writable: ", std::strerror(errno));
  std::shared_ptr<ShardDiskCache> cache(new ShardDiskCache(dir, budget));
  cache->RemoveLeftovers();
  cache->Evict("");
  return cache;
}

void ShardDiskCache::RemoveLeftovers() {
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (const fs::directory_entry& e : fs::directory_iterator(dir_, ec)) {
    const std::string name = e.path().filename().string();
    const size_t at = name.rfind(kPart);
    if (at == std::string::npos || !IsEntryName(name)) continue;
    const long pid = std::strtol(name.c_str() + at + kPart.size(), nullptr, 10);
    const bool gone = pid <= 0 || (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH);
    std::error_code age_ec;
    const bool old = now - e.last_write_time(age_ec) > std::chrono::hours(24);
    if (gone || (!age_ec && old)) fs::remove(e.path(), ec);
  }
}

std::optional<std::string> ShardDiskCache::Lookup(const std::string& url) {
  const std::string path = dir_ + "/" + EntryName(url);
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    misses_.fetch_add(1);
    return std::nullopt;
  }
  utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // used now: the last to be evicted
  hits_.fetch_add(1);
  return path;
}

Result<std::unique_ptr<ShardDiskCache::Writer>> ShardDiskCache::Begin(const std::string& url) {
  const std::string final_path = dir_ + "/" + EntryName(url);
  const std::string tmp = final_path + std::string(kPart) + std::to_string(getpid()) + "-" + std::to_string(next_tmp++);
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return IOError(tmp, ": cannot write to the shard cache: ", std::strerror(errno));
  return std::unique_ptr<Writer>(new Writer(this, tmp, final_path, fd));
}

ShardDiskCache::Writer::~Writer() {
  if (fd_ >= 0) close(fd_);
  if (!tmp_.empty()) unlink(tmp_.c_str());
}

Status ShardDiskCache::Writer::Append(std::span<const uint8_t> bytes) {
  if (too_large_ || bytes.empty()) return Status::OK();
  if (bytes_ + static_cast<int64_t>(bytes.size()) > cache_->budget_) {  // never kept: stop writing now
    too_large_ = true;
    close(fd_);
    fd_ = -1;
    unlink(tmp_.c_str());
    tmp_.clear();
    return Status::OK();
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IOError(tmp_, ": cannot write to the shard cache: ", std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  bytes_ += static_cast<int64_t>(bytes.size());
  return Status::OK();
}

Status ShardDiskCache::Writer::Commit() {
  if (too_large_) return Status::OK();
  // On the disk before it has its name: a machine that stops cannot leave a named, partial copy.
  if (fdatasync(fd_) != 0 || close(fd_) != 0) {
    fd_ = -1;
    return IOError(tmp_, ": cannot write to the shard cache: ", std::strerror(errno));
  }
  fd_ = -1;
  if (rename(tmp_.c_str(), final_.c_str()) != 0)
    return IOError(final_, ": cannot publish to the shard cache: ", std::strerror(errno));
  tmp_.clear();
  cache_->Evict(final_);
  return Status::OK();
}

void ShardDiskCache::Evict(const std::string& keep) {
  std::lock_guard<std::mutex> lock(evict_mu_);
  struct Copy {
    fs::path path;
    int64_t bytes;
    fs::file_time_type used;
  };
  std::vector<Copy> copies;
  int64_t total = 0;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_, ec)) {
    std::error_code e_ec;
    const std::string name = e.path().filename().string();
    if (!IsEntryName(name) || name.find(kPart) != std::string::npos || !e.is_regular_file(e_ec)) continue;
    Copy c{e.path(), static_cast<int64_t>(e.file_size(e_ec)), e.last_write_time(e_ec)};
    if (e_ec) continue;  // removed meanwhile
    total += c.bytes;
    copies.push_back(std::move(c));
  }
  std::sort(copies.begin(), copies.end(), [](const Copy& a, const Copy& b) { return a.used < b.used; });
  for (const Copy& c : copies) {
    if (total <= budget_) break;
    if (c.path.string() == keep) continue;
    if (fs::remove(c.path, ec)) {
      total -= c.bytes;
      evictions_.fetch_add(1);
    }
  }
  bytes_.store(total);
}

ShardDiskCache::Counters ShardDiskCache::counters() const {
  return Counters{hits_.load(), misses_.load(), evictions_.load(), bytes_.load(), budget_};
}

}  // namespace sluice
