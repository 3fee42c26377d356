// RouteScheduler: splits each batch of the GPU path between the decode routes so that they
// finish together, from rates measured on the batches before it.
//
// The JPEG engines work beside the CPU threads; the hybrid decoder and libjpeg-turbo both take
// CPU time (the hybrid decoder less of it, as the GPU does its IDCT). For a batch of n samples of
// which `eligible` can go to the engines, the engines get h samples with
//   h / hw_rate = (n - h) * cpu_cost / threads,
// and the rest go to whichever CPU-side route is cheaper per sample; every few batches a few
// samples try the other one, so that its estimate stays current.
//
// Thread-safety: all methods may be called from any thread.
#ifndef SLUICE_PIPELINE_ROUTE_SCHEDULER_H_
#define SLUICE_PIPELINE_ROUTE_SCHEDULER_H_

#include <cstdint>
#include <mutex>

namespace sluice {

enum class Route : uint8_t { kHardware, kHybrid, kCpu };
inline constexpr int kNumRoutes = 3;
const char* RouteName(Route r);  // "hardware", "hybrid", "cpu"

class RouteScheduler {
 public:
  // `threads`: CPU threads decoding; the routes the machine has.
  RouteScheduler(int threads, bool has_hardware, bool has_hybrid);

  struct Split {
    int hardware = 0;      // of the eligible samples, how many go to the engines
    Route cpu_side = Route::kCpu;  // where the other samples go (the hybrid-decodable ones)
    int explore = 0;       // of those, how many try the other CPU-side route
  };
  // n samples, `eligible` of them for the engines.
  Split Plan(int n, int eligible);

  // Measurements: the engines decoded `samples` in `seconds` of wall time; a CPU-side route
  // spent `seconds` of thread time on `samples`.
  void RecordHardware(int samples, double seconds);
  void RecordCpuSide(Route route, int samples, double seconds);

  double hardware_rate() const;            // images/s
  double cpu_cost(Route route) const;      // thread-seconds per image

 private:
  mutable std::mutex mu_;
  const int threads_;
  const bool has_hw_, has_hybrid_;
  double hw_rate_ = 12000.0;
  double cost_[kNumRoutes] = {0.0, 2.5e-3, 2.5e-3};
  int64_t batches_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_PIPELINE_ROUTE_SCHEDULER_H_
