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

// Reads all of `path` (open, fstat, pread loop) into a buffer from `memory`.
// Errors: NotFound (no such file), IOError (permission, a directory, read failure), both naming
// the path. An empty file is returned as size 0; the decoder reports it.
Result<SampleBytes> ReadFile(const std::string& path, const ByteAllocator& memory);

}  // namespace sluice

#endif  // SLUICE_CORE_FILE_UTIL_H_
