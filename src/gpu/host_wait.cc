#include "gpu/host_wait.h"

#include <cuda_runtime_api.h>

#include "core/env_knob.h"
#include "gpu/cuda_util.h"

namespace sluice {

Status PreferBlockingWaits() {
  static const bool on = EnvKnob("SLUICE_CUDA_WAIT", 1) != 0;
  if (!on) return Status::OK();
  unsigned flags = 0;
  SLUICE_CUDA_RETURN_IF_ERROR(cudaGetDeviceFlags(&flags));
  if ((flags & cudaDeviceScheduleMask) != cudaDeviceScheduleAuto) return Status::OK();
  // cudaDeviceMapHost may be reported but not given back (it is implicit in the runtime).
  const unsigned keep = flags & ~(cudaDeviceScheduleMask | cudaDeviceMapHost);
  SLUICE_CUDA_RETURN_IF_ERROR(cudaSetDeviceFlags(keep | cudaDeviceScheduleBlockingSync));
  return Status::OK();
}

}  // namespace sluice
