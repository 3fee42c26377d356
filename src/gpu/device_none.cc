// The CPU-only build's answers: no CUDA path, so no device and no GPU executor.
#include "gpu/device.h"
#include "pipeline/gpu_executor.h"

namespace sluice {

bool BuiltWithCuda() { return false; }

int CudaDeviceCount() { return 0; }

Status CheckCudaDevice(int index) {
  return FailedPrecondition("device='cuda:", index,
                            "' is not available: this build of sluice has no CUDA support (it was "
                            "built without nvcc); use device='cpu'");
}

Result<std::unique_ptr<BatchExecutor>> CreateGpuExecutor(const Source&, const Plan&,
                                                         const LoaderOptions& options) {
  return CheckCudaDevice(options.device.index);
}

void SetSkipConsumerWaitForTesting(bool) {}

}  // namespace sluice
