#include "gpu/device.h"

#include <cuda_runtime_api.h>

namespace sluice {

bool BuiltWithCuda() { return true; }

int CudaDeviceCount() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return 0;
  }
  return n;
}

Status CheckCudaDevice(int index) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return FailedPrecondition("device='cuda:", index, "' cannot be used: no usable CUDA driver or GPU (",
                              cudaGetErrorString(e), "); use device='cpu'");
  }
  if (index < 0 || index >= n)
    return FailedPrecondition("device='cuda:", index, "' does not exist: this machine has ", n,
                              " CUDA device(s)");
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, index) != cudaSuccess)
    return FailedPrecondition("device='cuda:", index, "': cannot read the CUDA device's properties");
  if (prop.major < 7)
    return FailedPrecondition("device='cuda:", index, "' (", prop.name, ", compute capability ",
                              prop.major, ".", prop.minor, ") is too old: sluice needs 7.0 or newer");
  return Status::OK();
}

}  // namespace sluice
