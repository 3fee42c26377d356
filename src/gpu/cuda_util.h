// CUDA runtime errors as Status, and a small RAII holder for streams.
//
// Thread-safety: the helpers are reentrant; a holder is owned by one object at a time.
#ifndef SLUICE_GPU_CUDA_UTIL_H_
#define SLUICE_GPU_CUDA_UTIL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "sluice/status.h"

namespace sluice {

// Internal("<what>: <CUDA's error name and text>"), or OK for cudaSuccess.
Status CudaStatus(cudaError_t error, const char* what);

#define SLUICE_CUDA_RETURN_IF_ERROR(expr)                                      \
  do {                                                                         \
    const cudaError_t sluice_cuda_error_ = (expr);                             \
    if (sluice_cuda_error_ != cudaSuccess) return ::sluice::CudaStatus(sluice_cuda_error_, #expr); \
  } while (0)

// A non-blocking stream, destroyed with its holder.
class CudaStream {
 public:
  CudaStream() = default;
  ~CudaStream();
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  // high_priority: the current device's greatest stream priority, so that the GPU starts this
  // stream's waiting kernels before those of default-priority streams; otherwise the default.
  Status Create(bool high_priority = false);
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// The stream a DLPack consumer names: 1 is the legacy default stream, 2 the per-thread default
// stream, anything else a cudaStream_t.
cudaStream_t DlpackStream(uintptr_t stream);

}  // namespace sluice

#endif  // SLUICE_GPU_CUDA_UTIL_H_
