// Whole-file reads into pooled memory, with errors that name the file.
//
// Thread-safety: free functions; safe from any thread.
#ifndef SLUICE_CORE_FILE_UTIL_H_
#define SLUICE_CORE_FILE_UTIL_H_

#include <cstdint>
#include <memory>
#include <string>

#include "sluice/source.h"
#include "sluice/status.h"

namespace sluice {

// Reads all of `path` (open, fstat, pread loop) into a buffer from `memory`. Errors name the path:
// NotFound (no such file), IOError (permission, read failure), Unsupported for what is not a
// regular file (opened without blocking, so a FIFO is refused at once) or is larger than
// `max_bytes` (refused before reading). An empty file is returned as size 0; the decoder reports it.
Result<SampleBytes> ReadFile(const std::string& path, const ByteAllocator& memory, int64_t max_bytes);

// Opens `path` for reading and checks that it is a regular file: opened without blocking, so a
// FIFO is refused at once, not waited on. Errors as ReadFile's (but no size limit). Returns the
// descriptor, which the caller closes, and sets *size to the file's size.
Result<int> OpenRegularFile(const std::string& path, int64_t* size);

// A file's size and modification time: whether it changed since it was last looked at.
struct FileStamp {
  int64_t size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};
// The stamp of an open descriptor (IOError naming `path` if fstat fails).
Result<FileStamp> StampOf(int fd, const std::string& path);

// InvalidArgument naming `what` when `path` holds a NUL byte (the system would cut it there).
Status CheckPath(const std::string& path, const char* what);

}  // namespace sluice

#endif  // SLUICE_CORE_FILE_UTIL_H_
