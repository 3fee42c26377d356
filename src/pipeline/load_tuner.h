// LoadTuner: how many compute threads a loader keeps working and how many batches it keeps in
// flight, chosen while it runs from what the consumer sees: the share of its time spent waiting
// for batches, and the batches it takes per second.
//
// It starts where a loader without it runs (all threads, prefetch 2) and measures windows of at
// least kWindowBatches hand-outs and kWindowSeconds, after one window of warm-up; after each
// change of setting one more window passes unmeasured (a deeper prefetch first fills the ring).
// - The consumer waiting more than kLoaderBound of a window: the loader is the bottleneck. With
//   fewer threads than all, it goes back to all; at all threads it tries twice the I/O threads
//   (up to the scope's io_max; again while each doubling gains: reads from a slow file system)
//   with kPrefetchStep fewer batches in flight (down to kMinPrefetch: more reads in flight are
//   what a deeper prefetch bought, and both at once can cost, MoreIo), then kPrefetchStep more
//   batches in flight once; then it settles. Such a probe (more I/O
//   threads, a deeper prefetch) is kept when the consumer then takes kGain more batches per
//   second in kProbeWindows windows in a row: one window's gain may be its noise.
// - Waiting less than kConsumerBound: the consumer is the bottleneck (a training step slower than
//   loading). It tries a quarter of all the threads fewer (at most half of those it has), kept
//   while the consumer still waits less than kKeepWait and takes batches at least
//   (1 - kTolerance) as fast as at the best pace so far, and goes on down; the first try that
//   fails is undone and it settles. The threads it leaves idle are cores for the training process.
// - In between: it settles where it is.
// The time between epochs (validation, checkpoints) is left out of the windows (Interrupt); the
// wait for the next epoch's first batch counts, as every other wait does.
// Settled, it holds; kRestartWindows windows in a row with the consumer waiting more than
// kLoaderBound, when it settled with it waiting less, start the search again from all threads.
// Each decision and its reason are kept for stats (why()).
//
//   LoadTuner t({/*threads=*/16, /*prefetch=*/2, /*io=*/2}, {.threads = true, .prefetch = true, .io_max = 8});
//   LoadTuner::Setting s = t.Record(NowNs(), waited_ns);  // after each batch handed out
//
// Thread-safety: Record from one thread at a time; the readers from any thread.
#ifndef SLUICE_PIPELINE_LOAD_TUNER_H_
#define SLUICE_PIPELINE_LOAD_TUNER_H_

#include <cstdint>
#include <mutex>
#include <string>

namespace sluice {

class LoadTuner {
 public:
  struct Setting {
    int threads = 1;   // compute threads that take work
    int prefetch = 2;  // batches in flight
    int io = 2;        // I/O threads that take reads
    bool operator==(const Setting&) const = default;
  };
  // What it may change.
  struct Scope {
    bool threads = false, prefetch = false;
    int io_max = 0;  // the most I/O threads it may use; 0: I/O threads not tuned
    const char* fixed = "num_threads, io_threads and prefetch were given";  // why, with nothing to tune
  };
  // `start`: all the compute threads there are, the default prefetch and I/O threads. What is
  // not tuned stays there.
  LoadTuner(Setting start, Scope scope);

  // A batch was handed out at `now_ns` after the consumer waited `waited_ns` for it. Returns the
  // setting to use from now on.
  Setting Record(int64_t now_ns, int64_t waited_ns);

  // The consumer asks for a new epoch at `now_ns` (between epochs the loop may validate or
  // save): the time since the last hand-out is left out of the window, but not the wait from
  // now_ns for the epoch's first batch (a loader that restarts slowly at each epoch pays there).
  void Interrupt(int64_t now_ns);

  Setting setting() const;
  bool settled() const;
  std::string why() const;  // the last decision and its reason

  static constexpr int kWindowBatches = 8;
  static constexpr double kWindowSeconds = 0.5;
  static constexpr double kLoaderBound = 0.10;    // the consumer waited more than this: loader-bound
  static constexpr double kConsumerBound = 0.02;  // less than this: consumer-bound
  static constexpr double kKeepWait = 0.05;       // fewer threads are kept while it waits less than this
  static constexpr double kTolerance = 0.03;      // and takes batches this close to all threads' rate
  static constexpr double kGain = 0.03;           // more I/O threads or a deeper prefetch are kept when they gain this
  static constexpr int kPrefetchStep = 2;
  static constexpr int kMinPrefetch = 2;
  static constexpr int kProbeWindows = 2;         // windows in a row a probe must gain in
  static constexpr int kRestartWindows = 4;

 private:
  enum class Phase { kWarmup, kBase, kFewerThreads, kMoreIo, kDeeperPrefetch, kSettled };
  void WindowDone(double rate, double wait);
  void FromBase(double rate, double wait);
  void LoaderBound(double rate, double wait);  // at all threads: the next probe, or settle
  bool Tunes() const { return scope_.threads || scope_.prefetch || scope_.io_max > 0; }
  void TryFewerThreads();
  // `s` with twice the I/O threads (at most io_max) and, where the prefetch is tuned,
  // kPrefetchStep fewer batches in flight (at least kMinPrefetch). On the GPU path, which starts
  // at prefetch 4 for batches of 64 (GpuPrefetch), dataset (a) ran 2-10% faster at 8 I/O threads
  // and prefetch 2 than at (4, 4), and -1% to +5% at (8, 4), which a probe rarely kept (issue 19's
  // sweeps, docs/benchmarks.md).
  Setting MoreIo(Setting s) const;
  void StartProbe(Phase phase);   // the probe set in now_ (before_ the setting it left)
  // Whether a probe's window at `rate` decides it: false while it gained in fewer than
  // kProbeWindows windows in a row. *gained: whether it gained.
  bool ProbeDecided(double rate, bool* gained);
  void Settle(std::string why, bool loader_bound = false);

  mutable std::mutex mu_;
  const Setting all_;
  const Scope scope_;
  Setting now_, before_;               // the setting in use, and the one a probe left
  Phase phase_ = Phase::kWarmup;
  double pace_ = 0;                    // batches/s, the best on the way down: fewer threads must keep it
  double base_rate_ = 0;               // of the window that started a probe
  bool prefetch_tried_ = false, io_done_ = false;
  int probe_wins_ = 0;                 // windows in a row the probe in progress gained in
  bool settled_waiting_ = false;       // the consumer waited more than kLoaderBound when it settled
  int restart_windows_ = 0;
  std::string why_ = "measuring";
  int64_t window_start_ns_ = -1, window_wait_ns_ = 0;
  int64_t last_ns_ = -1;               // the last hand-out
  int64_t interrupted_ns_ = -1;        // a new epoch asked for since last_ns_: when; else -1
  bool settling_ = false;              // the setting changed: the next window is not measured
  int window_batches_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_PIPELINE_LOAD_TUNER_H_
