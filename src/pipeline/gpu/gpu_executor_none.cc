// The CPU-only build's GPU executors: there are none, and CheckCudaDevice says why.
#include "gpu/device.h"
#include "pipeline/gpu/clip_executor.h"
#include "pipeline/gpu/gpu_executor.h"

namespace sluice {

Result<std::unique_ptr<BatchWork>> CreateGpuExecutor(std::shared_ptr<const Source>, const Plan&,
                                                     const LoaderOptions& options, int) {
  return CheckCudaDevice(options.device.index);
}

Result<std::unique_ptr<BatchWork>> CreateGpuClipExecutor(std::shared_ptr<const ClipSource>, const Plan&,
                                                         const LoaderOptions& options) {
  return CheckCudaDevice(options.device.index);
}

void SetSkipConsumerWaitForTesting(bool) {}

}  // namespace sluice
