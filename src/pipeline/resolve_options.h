// The loader's options, checked and resolved once, at Loader::Create: every value is checked
// here (errors name the option), and every policy that picks a value (the automatic thread
// counts and prefetch depth) is decided here, not in the executors.
//
// Thread-safety: pure functions.
#ifndef SLUICE_PIPELINE_RESOLVE_OPTIONS_H_
#define SLUICE_PIPELINE_RESOLVE_OPTIONS_H_

#include <algorithm>

#include "pipeline/load_tuner.h"
#include "pipeline/plan.h"
#include "sluice/loader_options.h"
#include "sluice/status.h"

namespace sluice {

// InvalidArgument naming the option and its value when one is out of range or contradicts the
// plan (Normalize or GaussianNoise with a uint8 output); FailedPrecondition when the CUDA device
// cannot be used.
Status CheckOptions(const LoaderOptions& options, const Plan& plan);

// `options` with every automatic value set. REQUIRES: CheckOptions(options, ...) is OK.
LoaderOptions ResolveOptions(LoaderOptions options);

// The GPU path's automatic prefetch: batches enough to hold kImagesAhead images, at least 2 and
// at most 8, and at least 4 for batches of up to kSmallBatch. Each batch makes its own engine
// calls, so small batches need more of them in flight to keep the engines fed: with batches of 32
// (Resize 640, 4 H200s, issue 21), prefetch 4 gave 25,000 / 70,400 images/s on 1 / 4 GPUs against
// 21,900 / 65,600 with 2, and 8 less than 4; with batches of 64 (dataset (b), one H200, issue
// 19's sweeps), 4 came out above 2 in 7 of 8 calls (by 1-13% in the six that recorded both
// rows). From batches of 128 up it stays 2: a third batch ahead of 256 only cost memory.
inline constexpr int kImagesAhead = 128;
inline constexpr int kSmallBatch = 64;
constexpr int GpuPrefetch(int batch_size) {
  return std::clamp((kImagesAhead + batch_size - 1) / batch_size, batch_size <= kSmallBatch ? 4 : 2, 8);
}

// What the loader's LoadTuner may change while it runs: the automatic values (those the caller
// left unset; up to kMaxTunedIoThreads I/O threads). On the GPU path the compute threads stay
// where ResolveOptions put them (the RouteScheduler tunes the split of the decoding between
// them and the engines); I/O threads are tuned as on the CPU path, and so is the prefetch of
// batches of up to kSmallBatch. Larger batches keep prefetch 2: in the 8 rows of batch 256 of
// two H200 calls (issue 16) the tuner's try of 4 gave -20% to +1%, never the 3% it takes to be
// kept, and the pools then peaked at 2.4-4.2x what they held in use at the end (896 against
// 211 MiB on dataset (a)). Without the try the pool peaked at 576 MiB on (a), the process at
// 1,300 MiB instead of 1,588 (one H200 call, 2026-11-29, docs/benchmarks.md).
inline constexpr int kMaxTunedIoThreads = 8;

// The GPU path's automatic I/O threads (which also parse headers there): 4 for batches of up to
// kSmallBatch, whose prefetch is 4 (there 4 came out above 8 on dataset (b) in issue 19's sweeps),
// kMaxTunedIoThreads for larger ones, whose prefetch is 2. Starting at 4, the tuner must see 8
// gain 3% in two windows in a row beside the route scheduler's own probes: in one H200 call
// (2026-11-30, issue 16, batch 256) it took 8 in both of its rows on dataset (a) and in none of
// its five on the seed pipeline, where 8 given gave 20,087 / 20,123 images/s against 19,082 /
// 19,544 with 4 given (the engines busy 98-99% against 96%).
constexpr int GpuIoThreads(int batch_size) { return batch_size <= kSmallBatch ? 4 : kMaxTunedIoThreads; }

LoadTuner::Scope TuningOf(const LoaderOptions& given);

}  // namespace sluice

#endif  // SLUICE_PIPELINE_RESOLVE_OPTIONS_H_
