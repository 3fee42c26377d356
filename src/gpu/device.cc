#include "gpu/device.h"

#include <cuda_runtime_api.h>

#include <cctype>
#include <fstream>
#include <string>

#include "core/cpu_set.h"

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

std::vector<int> GpuLocalCpus(int index, int min_cpus) {
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof(bus), index) != cudaSuccess) {
    cudaGetLastError();
    return {};
  }
  std::string id(bus);
  for (char& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (const size_t colon = id.find(':'); colon > 4 && colon != std::string::npos) id.erase(0, colon - 4);  // sysfs: a 4-digit domain
  std::ifstream file("/sys/bus/pci/devices/" + id + "/local_cpulist");
  std::string list;
  if (!std::getline(file, list)) return {};
  const std::vector<int> mine = ProcessCpus();
  std::vector<int> near = IntersectCpus(ParseCpuList(list), mine);
  if (near.size() == mine.size() || static_cast<int>(near.size()) < min_cpus) return {};
  return near;
}

}  // namespace sluice
