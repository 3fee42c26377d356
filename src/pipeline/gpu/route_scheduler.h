// RouteScheduler: splits each batch of the GPU path between the JPEG engines and the CPU-side
// decoders, choosing the split by the loader's measured throughput.
//
// The CPU side's share of a batch is what is tuned. Sending samples to the CPU side also slows
// the engines (by 13-15% on the H100 machine, even with 4 CPU threads; the cause is not pinned
// down), so finishing both sides together is not the fastest split: on some machines the
// engines alone are. So the
// share starts at 0 (the engines alone) and holds it for some windows of batches; then it
// climbs: a window at one step up, one down, and at 0 is measured against the held share's last
// window; a probe that delivers more images per second is taken (and the climb goes on that
// way), otherwise the held share stays for a hold that doubles each time nothing gains. A window counts only batches planned at its share
// (the generation in Split), launched one after another.
// The CPU-side samples go to whichever of the hybrid decoder and libjpeg-turbo costs less CPU
// time per image; every few batches a few samples try the other, so that its estimate stays
// current.
//
//   RouteScheduler s(has_hardware, has_hybrid);
//   Split split = s.Plan(n, eligible);            // when a batch is planned
//   s.RecordLaunch(split.generation, n, NowNs());  // when it is launched
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
  // The routes the machine has.
  RouteScheduler(bool has_hardware, bool has_hybrid);

  struct Split {
    int hardware = 0;              // of the eligible samples, how many go to the engines: a
                                   // multiple of kHardwareGrain in batches of 4 grains or more,
                                   // of half of it in batches of 16 or more (few call sizes:
                                   // NvjpegHardwareDecoder keeps a state for each)
    DecodeRoute cpu_side = DecodeRoute::kCpu;  // where the other samples go (the hybrid-decodable ones)
    int explore = 0;               // of those, how many try the other CPU-side route
    int64_t generation = 0;        // the share it was planned at: give it back to RecordLaunch
  };
  // n samples, `eligible` of them for the engines.
  Split Plan(int n, int eligible);
  static constexpr int kHardwareGrain = 16;
  static constexpr double kShareStep = 1.0 / 16;  // one grain of a batch of 256
  static constexpr int kWindow = 6;               // launches measured per share
  static constexpr double kMargin = 0.02;         // a step must gain this much to be taken
  static constexpr int kHoldWindows = 8;          // the first hold (at the start), in windows
  static constexpr int kMaxHoldWindows = 128;     // holds double up to this

  // A batch planned in `generation`, of `samples` samples, was launched at `now_ns`.
  void RecordLaunch(int64_t generation, int samples, int64_t now_ns);
  // The flow of batches was interrupted (an epoch ended): the window in progress is dropped.
  void Interrupt();
  // A CPU-side route spent `seconds` of thread time on `samples`.
  void RecordCpuSide(DecodeRoute route, int samples, double seconds);

  double cpu_share() const;                      // of a batch, the share sent to the CPU side
  double cpu_cost(DecodeRoute route) const;      // thread-seconds per image

 private:
  enum class Phase { kHold, kProbe };
  void SetShare(double share);                   // starts a new generation
  void WindowDone(double rate);
  void StartCycle(bool after_gain);
  void NextProbe();
  void Hold();

  mutable std::mutex mu_;
  const bool has_hw_, has_hybrid_;
  double share_;                 // CPU side's share of the batch
  double cost_[kNumRoutes] = {0.0, 2.5e-3, 2.5e-3};
  int64_t batches_ = 0;
  // The hill climb, under mu_.
  int64_t generation_ = 0;
  Phase phase_ = Phase::kHold;
  double base_share_ = 0, base_rate_ = 0;  // the share held, and its last measured rate
  int direction_ = 1;                      // the step to try first: +1 up, -1 down
  double candidates_[3] = {};              // the shares the cycle in progress tries, in order
  int num_candidates_ = 0, next_candidate_ = 0;
  int hold_ = kHoldWindows;                // windows left to hold
  int hold_windows_ = 2 * kHoldWindows;    // the next hold's length
  int window_launches_ = 0;                // launches of this generation seen in the window
  int64_t window_start_ns_ = 0, window_samples_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_PIPELINE_GPU_ROUTE_SCHEDULER_H_
