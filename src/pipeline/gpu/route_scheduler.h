// RouteScheduler: splits each batch of the GPU path between the JPEG engines and the CPU-side
// decoders, choosing the split by the loader's measured throughput.
//
// The CPU side's share of a batch is what is tuned. Sending samples to the CPU side can also slow
// the engines (on the H100 machine by 4% on 143-KiB files with 12% of a batch on 8 threads, by
// more on small files; CPU load from another process does not), so finishing both sides
// together is not always the fastest split: on some machines the engines alone are.
// The share starts where both sides would finish together by prior costs (kEngineCostPrior and
// 2.5 ms of CPU thread time per image: 3/16 with 12 CPU-side threads), times kModelFraction, at
// most kMaxModelShare, and holds it for kBalancedHoldWindows while the costs are measured (a
// probe costs: a share off the best one, and engine calls of other sizes). Batches under
// kSmallBatch start with the engines alone instead: their engine calls hold one batch's engine
// share, small already, and a CPU share makes them smaller (on the VOC-like set at batch 32, a
// start at 3/16 ran at 0.86-0.92x the engines alone, a start at 0 at 0.96x). They probe steps
// up only when the engines were busy at least kBusyForUp in the hold: with time to spare, the
// host work of their small calls sets the pace, and a CPU share slows the threads that do it (on
// that set on an H200, `auto` ran at 0.89-0.95x `hardware` while it probed, at 1.03x with the
// share held at 0). Then it climbs: a
// window at the balanced share by the measured costs (when it moved away), one step up, one
// down, and at 0, each against the mean of the held share's last two windows (the steps down,
// which add engine work, only when the engines were busy less than kBusyForDown in the hold, or
// took longer per image than alone, or a step down last gained; a share of 0 is tried once
// to measure them alone, when nothing else allows it); a probe that
// delivers more images per second in a window and again on average over a second one, then more
// than the mean of the held share's windows before it and of one window back at the held share
// after it (on a machine warming up, any later window reads faster), is taken
// (and the climb goes on that way), otherwise the held share stays for a hold that doubles each
// time nothing gains. A probe whose first window reads over kFarBelow under the held share is
// left out of the next cycle that would try it, of the next two when it does so again, and so
// on up to kMaxSkips, until a probe gains (on 143-KiB files the engines alone read 18-31% under
// the held 3/16 or 1/4 in every cycle, and the probes and share changes took 4% of a 10-s row's
// rate: docs/benchmarks.md). A window counts only batches planned at its share (the generation in
// Split), after the first kSettleLaunches of the share (the batches in flight when it changed
// still shape those), and the gaps between their launches, not one across an interruption; an
// nvJPEG state initialized for a new call size (a share's first engine calls) starts it over, up
// to kMaxRestarts times a share. It lasts at least kWindow launches and kWindowSeconds (with
// windows of 6 launches, 85 ms, auto came in below each share it moved between:
// docs/benchmarks.md). With SLUICE_TRACE set, each
// window is printed (share, rate, the engines' busy share, phase); the last kKeptWindows are
// kept for the loader's stats either way (windows()).
// Beside the engines the CPU side is libjpeg-turbo (the hybrid decoder's GPU stages and CUDA
// calls slowed the engines more than its thread time shows). Without engines the CPU-side samples
// go to whichever of the hybrid decoder and libjpeg-turbo costs less CPU time per image; every
// few batches a few samples try the other, so that its estimate stays current.
//
//   RouteScheduler s(has_hardware, has_hybrid, cpu_threads);
//   Split split = s.Plan(n, eligible);            // when a batch is planned
//   s.RecordEngines(hardware, engine_seconds, initialized);  // after the engines' calls of a batch
//   s.RecordCpuSide(route, 1, thread_seconds);     // after each CPU-side sample
//   s.RecordLaunch(split.generation, n, NowNs());  // when it is launched
//
// Thread-safety: all methods may be called from any thread.
#ifndef SLUICE_PIPELINE_GPU_ROUTE_SCHEDULER_H_
#define SLUICE_PIPELINE_GPU_ROUTE_SCHEDULER_H_

#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "sluice/loader_stats.h"
#include "sluice/types.h"

namespace sluice {

class RouteScheduler {
 public:
  // The routes the machine has, the threads the CPU side decodes on, and the batch size.
  RouteScheduler(bool has_hardware, bool has_hybrid, int cpu_threads = 8, int batch_size = 256);

  struct Split {
    int hardware = 0;              // of the eligible samples, how many go to the engines: a
                                   // multiple of kHardwareGrain in batches of 4 grains or more,
                                   // of half of it in batches of 16 or more (few call sizes:
                                   // NvjpegHardwareDecoder keeps a state for each); over
                                   // consecutive batches the share on average
    DecodeRoute cpu_side = DecodeRoute::kCpu;  // where the other samples go (the hybrid-decodable ones)
    int explore = 0;               // of those, how many try the other CPU-side route
    int64_t generation = 0;        // the share it was planned at: give it back to RecordLaunch
  };
  // n samples, `eligible` of them for the engines.
  Split Plan(int n, int eligible);
  static constexpr int kHardwareGrain = 16;
  static constexpr double kShareStep = 1.0 / 16;  // one grain of a batch of 256
  static constexpr int kWindow = 6;               // launches measured per window, at least
  static constexpr double kWindowSeconds = 0.25;  // and seconds (SLUICE_ROUTE_WINDOW_MS overrides)
  static constexpr int kSettleLaunches = 2;       // launches after a share change not measured
  static constexpr double kMargin = 0.02;         // a step must gain this much to be taken
  static constexpr int kHoldWindows = 4;          // the hold after a gain, in windows
  static constexpr int kBalancedHoldWindows = 8;  // the hold at the start
  static constexpr double kEngineCostPrior = 60e-6;  // engine seconds per image: 143-KiB files, H100
  static constexpr double kModelFraction = 0.9;   // of the share that would balance the sides
  static constexpr double kMaxModelShare = 3.0 / 16;  // the balanced share is taken up to this
                                                      // (the climb may go further)
  static constexpr int kSmallBatch = 4 * kHardwareGrain;  // batches under this start at a share of 0
  static constexpr int kMaxHoldWindows = 128;     // holds double up to this
  static constexpr int kMaxRestarts = 4;          // windows started over per share, at most
  static constexpr double kBusyForDown = 0.95;    // steps down are probed only when the engines
                                                  // were busy less than this in the hold,
  static constexpr double kSlowedEngines = 0.05;  // or slower per image than alone by this
  static constexpr double kBusyForUp = 0.95;      // batches under kSmallBatch probe steps up
                                                  // only when the engines were busy this much
  static constexpr double kFarBelow = 0.10;       // a probe this far under the held share is
  static constexpr int kMaxSkips = 8;             // left out of up to this many cycles

  // A batch planned in `generation`, of `samples` samples, was launched at `now_ns`.
  void RecordLaunch(int64_t generation, int samples, int64_t now_ns);
  // The flow of batches was interrupted (an epoch ended): the gap up to the next launch is not
  // measured.
  void Interrupt();
  // A CPU-side route spent `seconds` of thread time on `samples`.
  void RecordCpuSide(DecodeRoute route, int samples, double seconds);
  // The engines' calls took `seconds` (their turn on the engines) for `samples`; `initialized`:
  // they initialized an nvJPEG state (a new call size: 0.1-0.2 s once), and the window in
  // progress starts over after them instead of counting that against its share.
  void RecordEngines(int samples, double seconds, bool initialized = false);

  static constexpr int kKeptWindows = 128;
  std::vector<RouteWindow> windows() const;      // the last kKeptWindows measured, oldest first
  double cpu_share() const;                      // of a batch, the share sent to the CPU side
  double cpu_cost(DecodeRoute route) const;      // thread-seconds per image
  // The share at which both sides would finish together, times kModelFraction, on the share
  // grid; -1 before the engines' time per image is known.
  double balanced_share() const;

 private:
  enum class Phase { kHold, kProbe, kCheck };  // kCheck: back at the held share after a probe gained
  static const char* PhaseName(Phase p);
  void SetShare(double share);                   // starts a new generation
  void RestartWindow();                          // the window starts over, after settling launches
  void WindowDone(double rate, double busy, double engine_cost);
  void StartCycle(bool after_gain);
  void NextProbe();
  void Hold();
  double BalancedShare(double engine_cost) const;  // with that engine time per image, mu_ held
  void ProbeLost(double rate);                   // the probe at share_ gained nothing in its first
                                                 // window, which read `rate`
  static int GridIndex(double share);            // share's place on the kShareStep grid

  mutable std::mutex mu_;
  const bool has_hw_, has_hybrid_;
  const int cpu_threads_;
  const bool small_batch_;       // under kSmallBatch
  double engine_cost_ = 0;       // seconds of the engines' turn per image; 0: not measured yet
  double share_;                 // CPU side's share of the batch
  double cost_[kNumRoutes] = {0.0, 2.5e-3, 2.5e-3};
  bool pinned_ = false;                          // the share is held (SLUICE_ROUTE_SHARE)
  DecodeRoute side_ = DecodeRoute::kAuto;        // the CPU side's decoder, unless chosen (SLUICE_CPU_SIDE)
  int64_t batches_ = 0;
  double owed_ = 0;              // CPU-side samples the grains of earlier batches left over (+) or took (-)
  // The hill climb, under mu_.
  int64_t generation_ = 0;
  Phase phase_ = Phase::kHold;
  double base_share_ = 0, base_rate_ = 0;  // the share held, and its last measured rate
  double last_hold_rate_ = 0;              // the hold's window before the last, 0: none yet
  double last_hold_busy_ = 0, base_busy_ = 0;  // the engines' busy share in those windows,
  double last_hold_cost_ = 0, base_engine_cost_ = 0;  // and their time per image
  double alone_cost_ = 0;                  // their time per image at a share of 0; 0: not yet
  double first_probe_rate_ = 0;            // a probe's first window, when it gained; 0: none
  double probe_share_ = 0, probe_rate_ = 0;  // a probe that gained over two windows, in kCheck
  int direction_ = 1;                      // the step to try first: +1 up, -1 down
  double candidates_[4] = {};              // the shares the cycle in progress tries, in order
  int num_candidates_ = 0, next_candidate_ = 0;
  int hold_ = kHoldWindows;                // windows left to hold
  int hold_windows_ = 2 * kHoldWindows;    // the next hold's length
  static constexpr int kGrid = 17;         // the shares 0, 1/16, ..., 1
  int skip_left_[kGrid] = {};              // per share: cycles still to leave it out of
  int skip_len_[kGrid] = {};               // and how many its last loss by far left it out of
  const double window_seconds_;            // kWindowSeconds, or the knob's
  int settle_ = 0;                         // launches of this generation still to skip
  int restarts_ = 0;                       // windows of this generation started over
  int window_launches_ = 0;                // launches counted in the window
  int64_t window_ns_ = 0, window_samples_ = 0;  // the window's gaps between launches, and their samples
  double window_engine_seconds_ = 0;       // the engines' time recorded since the window began,
  int64_t window_engine_samples_ = 0;      // and its images
  int64_t last_launch_ns_ = -1;            // the last launch counted or marked; -1: none since a
                                           // share change or an interruption
  std::deque<RouteWindow> windows_;        // the last kKeptWindows
};

}  // namespace sluice

#endif  // SLUICE_PIPELINE_GPU_ROUTE_SCHEDULER_H_
