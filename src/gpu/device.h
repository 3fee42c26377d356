// Whether this process can use a CUDA device. Compiled in every build: a build without the CUDA
// path reports no devices and says why.
//
// Thread-safety: reentrant.
#ifndef SLUICE_GPU_DEVICE_H_
#define SLUICE_GPU_DEVICE_H_

#include <vector>

#include "sluice/status.h"

namespace sluice {

// Whether this build has the CUDA path.
bool BuiltWithCuda();

// CUDA devices visible to this process: 0 without the CUDA path, a driver or a GPU.
int CudaDeviceCount();

// OK when device `index` can be used; else FailedPrecondition saying why (no CUDA path in this
// build, no driver, no GPU, index out of range, compute capability below 7.0).
Status CheckCudaDevice(int index);

// The CPUs near device `index` (its NUMA node, from /sys) that this process may run on: where
// the threads that feed it run best. Empty when unknown, or when that would leave out none of
// this process's CPUs (nothing to choose) or fewer than `min_cpus` of them.
std::vector<int> GpuLocalCpus(int index, int min_cpus);

}  // namespace sluice

#endif  // SLUICE_GPU_DEVICE_H_
