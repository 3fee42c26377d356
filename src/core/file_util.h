// Whole-file reads into pooled memory, with errors that name the file.
//
// Thread-safety: free functions; safe from any thread.
#ifndef SLUICE_CORE_FILE_UTIL_H_
#define SLUICE_CORE_FILE_UTIL_H_

#include <cstdint>
#include <memory>
#include <string>

#include "core/host_pool.h"
#include "sluice/status.h"

namespace sluice {

// Bytes of one file. `data` stays valid while the struct (or a copy of `owner`) lives.
struct FileBytes {
  std::shared_ptr<uint8_t> owner;
  const uint8_t* data = nullptr;
  size_t size = 0;
};

// Reads all of `path` (open, fstat, pread loop) into a buffer from `pool`.
// Errors: NotFound (no such file), IOError (permission, a directory, read failure), both naming
// the path. An empty file is returned as size 0; the decoder reports it.
Result<FileBytes> ReadFile(const std::string& path, HostPool& pool);

}  // namespace sluice

#endif  // SLUICE_CORE_FILE_UTIL_H_
