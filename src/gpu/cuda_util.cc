#include "gpu/cuda_util.h"

namespace sluice {

Status CudaStatus(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return Status::OK();
  return Internal(what, ": ", cudaGetErrorName(error), " (", cudaGetErrorString(error), ")");
}

CudaStream::~CudaStream() {
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

Status CudaStream::Create(bool high_priority) {
  int least = 0, greatest = 0;
  if (high_priority) SLUICE_CUDA_RETURN_IF_ERROR(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  SLUICE_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, greatest));
  return Status::OK();
}

cudaStream_t DlpackStream(uintptr_t stream) {
  if (stream == 1) return cudaStreamLegacy;
  if (stream == 2) return cudaStreamPerThread;
  return reinterpret_cast<cudaStream_t>(stream);
}

}  // namespace sluice
