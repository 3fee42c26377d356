#include "video/video_index_cache.h"

#include <unistd.h>

#include <filesystem>
#include <utility>

#include "core/cache_entry.h"

namespace sluice {

namespace {

constexpr char kMagic[9] = "sluiceV1";
constexpr char kExt[] = ".vidx";

std::string KeyOf(const std::string& path, const FileStamp& stamp) {
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::absolute(path, ec);
  return (ec ? path : abs.string()) + '\0' + std::to_string(stamp.size) + '\0' + std::to_string(stamp.mtime_ns);
}

void WriteList(ByteWriter* w, const std::vector<int64_t>& list) {
  w->U64(list.size());
  for (int64_t v : list) w->I64(v);
}

bool ReadList(ByteReader* r, std::vector<int64_t>* list) {
  uint64_t n = 0;
  if (!r->U64(&n)) return false;
  for (uint64_t i = 0; i < n; ++i) {
    int64_t v;
    if (!r->I64(&v)) return false;
    list->push_back(v);
  }
  return true;
}

}  // namespace

std::optional<VideoIndex> LoadVideoIndex(const std::string& dir, const std::string& path, const FileStamp& stamp) {
  const std::optional<std::string> payload = LoadCacheEntry(dir, kMagic, KeyOf(path, stamp), kExt);
  if (!payload) return std::nullopt;
  ByteReader r(*payload);
  VideoIndex index;
  int64_t width, height, num, den;
  if (!r.Str(&index.codec) || !r.I64(&width) || !r.I64(&height) || !r.I64(&num) || !r.I64(&den) ||
      !ReadList(&r, &index.pts) || !ReadList(&r, &index.keyframes) || !r.AtEnd())
    return std::nullopt;
  index.width = static_cast<int>(width);
  index.height = static_cast<int>(height);
  index.time_base_num = static_cast<int>(num);
  index.time_base_den = static_cast<int>(den);
  if (index.keyframes.empty() || index.keyframes[0] != 0) return std::nullopt;
  return index;
}

Status SaveVideoIndex(const std::string& dir, const std::string& path, const FileStamp& stamp, const VideoIndex& index) {
  ByteWriter w;
  w.Str(index.codec);
  for (int64_t v : {int64_t{index.width}, int64_t{index.height}, int64_t{index.time_base_num}, int64_t{index.time_base_den}})
    w.I64(v);
  WriteList(&w, index.pts);
  WriteList(&w, index.keyframes);
  return SaveCacheEntry(dir, kMagic, KeyOf(path, stamp), w.bytes(), kExt);
}

Result<VideoIndex> IndexVideoCached(const std::string& path, const std::string& dir) {
  if (dir.empty()) return IndexVideo(path);
  int64_t size = 0;
  const Result<int> fd = OpenRegularFile(path, &size);
  if (!fd.ok()) return IndexVideo(path);  // which says why without the path, as the caller expects
  const Result<FileStamp> stamp = StampOf(*fd, path);
  ::close(*fd);
  if (!stamp.ok()) return IndexVideo(path);
  if (std::optional<VideoIndex> hit = LoadVideoIndex(dir, path, *stamp)) return std::move(*hit);
  SLUICE_ASSIGN_OR_RETURN(VideoIndex index, IndexVideo(path));
  (void)SaveVideoIndex(dir, path, *stamp, index);
  return index;
}

}  // namespace sluice
