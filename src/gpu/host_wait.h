// How the host threads that wait for the GPU wait: CUDA spins them by default on a machine with
// more cores than GPUs. On an H200 with 16 cores the loader ran 5-15% faster with blocking waits
// at batch 32 (the multi-GPU image pipeline), 4% on the seed pipeline, level on dataset (a)
// (docs/benchmarks.md); which of its waits gained is not measured.
//
//   SLUICE_RETURN_IF_ERROR(cudaSetDevice(dev));
//   SLUICE_RETURN_IF_ERROR(PreferBlockingWaits());
//
// The setting belongs to the device's context, shared with everything else in the process
// (PyTorch's own waits then block too): it is changed only where it is CUDA's automatic choice,
// so a process that chose spinning or yielding itself keeps its choice. SLUICE_CUDA_WAIT=0 (an
// experiment knob, core/env_knob.h) leaves it as it is.
//
// Thread-safety: reentrant; the last caller's flags win. REQUIRES: the device is current.
#ifndef SLUICE_GPU_HOST_WAIT_H_
#define SLUICE_GPU_HOST_WAIT_H_

#include "sluice/status.h"

namespace sluice {

// Sets the current device's waits to cudaDeviceScheduleBlockingSync where they are
// cudaDeviceScheduleAuto; its other flags stay.
Status PreferBlockingWaits();

}  // namespace sluice

#endif  // SLUICE_GPU_HOST_WAIT_H_
