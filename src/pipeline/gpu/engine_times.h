// EngineTimes: where the threads that feed the JPEG engines spend their time since the last
// Reset, for LoaderStats: in their turns on the engines and waiting for one (the decoders'
// counters), waiting until a batch's memory may be written and packing decoded samples (counted
// here, by DecodeEngineJobs). When the engines idle, this says whether their threads were busy.
//
//   EngineTimes clock;
//   DecodeEngineJobs(jobs, t, decoders, scheduler, clock.counters(), name);
//   clock.Fill(*decoders, &stats);  // engine_busy_s, engine_turn_wait_s, engine_memory_wait_s, engine_pack_s
//
// Thread-safety: relaxed atomics; any thread may count, fill or reset.
#ifndef SLUICE_PIPELINE_GPU_ENGINE_TIMES_H_
#define SLUICE_PIPELINE_GPU_ENGINE_TIMES_H_

#include <atomic>
#include <cstdint>

#include "pipeline/gpu/decoders.h"
#include "sluice/loader_stats.h"

namespace sluice {

// Nanoseconds summed over the engine threads, outside their turns.
struct EngineThreadTimes {
  std::atomic<int64_t> memory_wait_ns{0};  // until a batch's memory may be written
  std::atomic<int64_t> pack_ns{0};         // packing decoded samples' resampling tables
};

class EngineTimes {
 public:
  EngineThreadTimes* counters() { return &times_; }
  // From now on: the decoders' counts as they are become the base, the others start at 0.
  void Reset(const GpuDecoders& decoders);
  void Fill(const GpuDecoders& decoders, LoaderStats* s) const;

 private:
  EngineThreadTimes times_;
  std::atomic<int64_t> busy_base_ns_{0};       // decoders.engine_busy_ns() at the last Reset
  std::atomic<int64_t> turn_wait_base_ns_{0};  // decoders.engine_turn_wait_ns() at the last Reset
};

}  // namespace sluice

#endif  // SLUICE_PIPELINE_GPU_ENGINE_TIMES_H_
