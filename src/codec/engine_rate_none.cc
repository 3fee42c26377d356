// The CPU-only build: no engines to measure, and CheckCudaDevice says why.
#include "codec/engine_rate.h"

#include "gpu/device.h"

namespace sluice {

Result<EngineRate> MeasureEngineRate(std::span<const std::vector<uint8_t>>, double, int device, int, int) {
  SLUICE_RETURN_IF_ERROR(CheckCudaDevice(device));
  return Unsupported("this build has no CUDA path");
}

}  // namespace sluice
