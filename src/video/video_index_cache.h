// A video's index (IndexVideo's result) kept in a cache folder between runs, so that each video's
// packets are read once, not at every start. An entry is keyed by the video's absolute path, size
// and modification time: a video rewritten misses and is indexed again. Entries are
// core/cache_entry.h's: written whole, read back only when exact.
//
//   SLUICE_ASSIGN_OR_RETURN(VideoIndex index, IndexVideoCached("clip.mp4", "/home/me/.cache/sluice/index"));
//
// Thread-safety: free functions; many threads and processes may use one folder at once.
#ifndef SLUICE_VIDEO_VIDEO_INDEX_CACHE_H_
#define SLUICE_VIDEO_VIDEO_INDEX_CACHE_H_

#include <optional>
#include <string>

#include "core/file_util.h"
#include "video/video_index.h"

namespace sluice {

// nullopt when the entry is missing, unreadable, damaged or for another file or stamp.
std::optional<VideoIndex> LoadVideoIndex(const std::string& dir, const std::string& path, const FileStamp& stamp);
// Writes the entry (the folder made if missing). IOError naming the file when it cannot.
Status SaveVideoIndex(const std::string& dir, const std::string& path, const FileStamp& stamp, const VideoIndex& index);

// The index from `dir` when it holds this version of the file, else IndexVideo's, then saved
// there (a folder that cannot be written is no error). `dir` empty: IndexVideo alone. Errors:
// IndexVideo's, and the file's (NotFound, Unsupported for what is not a regular file).
Result<VideoIndex> IndexVideoCached(const std::string& path, const std::string& dir);

}  // namespace sluice

#endif  // SLUICE_VIDEO_VIDEO_INDEX_CACHE_H_
