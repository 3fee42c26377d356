// CopyBytes: a sample's bytes as a copy in memory from the caller's allocator (the size + 1, as
// sources ask for), for sources that keep bytes of their own (a stream's held samples, the memory
// cache's kept ones) but hand out the caller's memory. Pure.
//
//   SLUICE_ASSIGN_OR_RETURN(SampleBytes out, CopyBytes(kept.get(), size, memory, name(index)));
#ifndef SLUICE_IO_COPY_BYTES_H_
#define SLUICE_IO_COPY_BYTES_H_

#include <cstdint>
#include <cstring>
#include <string>

#include "sluice/source.h"
#include "sluice/status.h"

namespace sluice {

// ResourceExhausted, naming `name`, when `memory` has none to give.
inline Result<SampleBytes> CopyBytes(const uint8_t* data, size_t size, const ByteAllocator& memory,
                                     const std::string& name) {
  SampleBytes out;
  out.owner = memory(size + 1);
  if (!out.owner) return ResourceExhausted(name, ": cannot allocate ", size, " bytes");
  std::memcpy(out.owner.get(), data, size);
  out.data = out.owner.get();
  out.size = size;
  return out;
}

}  // namespace sluice

#endif  // SLUICE_IO_COPY_BYTES_H_
