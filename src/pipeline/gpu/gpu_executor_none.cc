// The CPU-only build's GPU executor: there is none, and CheckCudaDevice says why.
#include "gpu/device.h"
#include "pipeline/gpu/gpu_executor.h"

namespace sluice {

Result<std::unique_ptr<BatchWork>> CreateGpuExecutor(std::shared_ptr<const Source>, const Plan&,
                                                     const LoaderOptions& options) {
  return CheckCudaDevice(options.device.index);
}

void SetSkipConsumerWaitForTesting(bool) {}

}  // namespace sluice
