// CPU sets: Linux's CPU list text ("0-15,32-47", as /sys writes it) and the CPUs a process or a
// thread may run on. The GPU path keeps its threads on the CPUs near its GPU (gpu/device.h's
// GpuLocalCpus), as a NUMA-aware launcher would.
//
//   ParseCpuList("0-3,8") == std::vector<int>{0, 1, 2, 3, 8}
//
// Thread-safety: reentrant.
#ifndef SLUICE_CORE_CPU_SET_H_
#define SLUICE_CORE_CPU_SET_H_

#include <pthread.h>

#include <string_view>
#include <vector>

namespace sluice {

// The CPUs in a CPU list, ascending and each once; empty when the text is not one.
std::vector<int> ParseCpuList(std::string_view text);

// The CPUs the calling thread may run on now (its sched affinity: the process's, unless the
// thread was pinned), ascending.
std::vector<int> ProcessCpus();

// Those of `a` also in `b`. REQUIRES: both ascending.
std::vector<int> IntersectCpus(const std::vector<int>& a, const std::vector<int>& b);

// Keeps `thread` on `cpus` from now on; false when the system refuses. REQUIRES: cpus not empty.
bool PinThread(pthread_t thread, const std::vector<int>& cpus);

}  // namespace sluice

#endif  // SLUICE_CORE_CPU_SET_H_
