// RouteScheduler: splits each batch of the GPU path between the JPEG engines and the CPU-side
// decoders so that both finish together, from what the batches before it measured.
//
// The engines work beside the CPU threads. The share of engine-eligible samples sent to the CPU
// side is a feedback loop: after each batch, whichever side finished later (its queue included)
// gives up a step of share to the other. It starts from the ratio of the two sides' rates. The
// CPU-side samples go to whichever of the hybrid decoder and libjpeg-turbo costs less CPU time
// per image; every few batches a few samples try the other, so that its estimate stays current.
//
// Thread-safety: all methods may be called from any thread.
#ifndef SLUICE_PIPELINE_GPU_ROUTE_SCHEDULER_H_
#define SLUICE_PIPELINE_GPU_ROUTE_SCHEDULER_H_

#include <cstdint>
#include <mutex>

#include "sluice/types.h"

namespace sluice {


class RouteScheduler {
 public:
  // `threads`: CPU threads decoding; the routes the machine has.
  RouteScheduler(int threads, bool has_hardware, bool has_hybrid);

  struct Split {
    int hardware = 0;              // of the eligible samples, how many go to the engines: a
                                   // multiple of kHardwareGrain in batches of 4 grains or more,
                                   // of half of it in batches of 16 or more (few call sizes:
                                   // NvjpegHardwareDecoder keeps a state for each)
    DecodeRoute cpu_side = DecodeRoute::kCpu;  // where the other samples go (the hybrid-decodable ones)
    int explore = 0;               // of those, how many try the other CPU-side route
  };
  // n samples, `eligible` of them for the engines.
  Split Plan(int n, int eligible);
  static constexpr int kHardwareGrain = 16;

  // A batch finished: seconds from its planning until its engine part and its CPU-side part
  // finished (negative: that side had no samples).
  void RecordBatch(double hardware_seconds, double cpu_side_seconds);
  // A CPU-side route spent `seconds` of thread time on `samples`.
  void RecordCpuSide(DecodeRoute route, int samples, double seconds);

  double cpu_share() const;                // of eligible samples, the share sent to the CPU side
  double cpu_cost(DecodeRoute route) const;      // thread-seconds per image

 private:
  mutable std::mutex mu_;
  const bool has_hw_, has_hybrid_;
  double share_;                 // CPU side's share of the batch
  double cost_[kNumRoutes] = {0.0, 2.5e-3, 2.5e-3};
  int64_t batches_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_PIPELINE_GPU_ROUTE_SCHEDULER_H_
