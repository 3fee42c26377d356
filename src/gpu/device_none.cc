// The CPU-only build's answers: no CUDA path, so no device.
#include "gpu/device.h"

namespace sluice {

bool BuiltWithCuda() { return false; }

int CudaDeviceCount() { return 0; }

Status CheckCudaDevice(int index) {
  return FailedPrecondition("device='cuda:", index,
                            "' is not available: this build of sluice has no CUDA support (it was "
                            "built without nvcc); use device='cpu'");
}

std::vector<int> GpuLocalCpus(int /*index*/, int /*min_cpus*/) { return {}; }

}  // namespace sluice
