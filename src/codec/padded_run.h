// PaddedRun: how many calls in a row asked for one call size that only a larger nvJPEG state
// held, so that each was filled up with pads. A size asked for kCalls times in a row is one the
// caller keeps using (the route scheduler holds or probes a share for a window of many batches),
// and then earns a state of its own (`auto` holding calls of 192 had padded each into a state of
// 208; on an H200 that removed 89% of its pads, for +0.5%, within noise: pads cost the engines
// little, but a probe's calls are no longer padded into the held share's state). A size that
// comes once (an epoch's short last batch) stays padded. Initializing a state after the first
// two took milliseconds (docs/benchmarks.md), and the scheduler starts a window over when one is
// made.
//
//   PaddedRun run;
//   if (padded && run.Padded(n)) { /* make a state of n */ } else if (!padded) run.Exact();
//
// Pure; not thread-safe (the engine state pool's, under the engine turn).
#ifndef SLUICE_CODEC_PADDED_RUN_H_
#define SLUICE_CODEC_PADDED_RUN_H_

namespace sluice {

class PaddedRun {
 public:
  static constexpr int kCalls = 4;

  // After a call of n images padded into a larger state: true once it is the `calls`-th such
  // call of n in a row (and for every later one until the run is broken); never if calls <= 0.
  bool Padded(int n, int calls = kCalls) {
    if (n != size_) size_ = n, count_ = 0;
    return ++count_ >= calls && calls > 0;
  }
  // After a call that took a state of its own size: the run is broken.
  void Exact() { size_ = -1, count_ = 0; }

 private:
  int size_ = -1;
  int count_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_CODEC_PADDED_RUN_H_
