// EngineJob: a batch's samples for the JPEG engines; DecodeEngineJobs decodes the samples of one
// job, or of several queued jobs together (GatherQueue), in the engine calls of one engine thread.
//
//   std::vector<std::vector<int>> rejected = DecodeEngineJobs(jobs, t, decoders, scheduler, &times, name);
//   // rejected[j]: the samples of jobs[j] the engines gave back, for another decoder
//
// Thread-safety: engine thread t alone calls it for t (its decoder, stream and scratch); the
// times are atomics any thread may read.
#ifndef SLUICE_PIPELINE_GPU_ENGINE_JOBS_H_
#define SLUICE_PIPELINE_GPU_ENGINE_JOBS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "pipeline/gpu/decoders.h"
#include "pipeline/gpu/gpu_batch.h"
#include "pipeline/gpu/route_scheduler.h"

namespace sluice {

struct EngineJob {
  std::shared_ptr<GpuBatch> b;
  std::vector<int> members;  // its samples for the engines
};

// Where the engine threads' time goes outside their turns on the engines, in nanoseconds summed
// over the threads: waiting until a batch's memory may be written, and packing the decoded
// samples' resampling tables (the turns themselves: NvjpegHardwareDecoder's busy and turn-wait
// times).
struct EngineThreadTimes {
  std::atomic<int64_t> memory_wait_ns{0};
  std::atomic<int64_t> pack_ns{0};
};

// For each job whose batch is not cancelled: waits (on the host) until the batch's arena may be
// written, decodes its members on engine thread t, packs each decoded sample (a failure goes to
// the sample's status, prefixed by name(batch, sample)), and records the batch's hw_done on the
// engine stream (used_hw). The engines' time goes to `scheduler`, the waits and the packing to
// `times`. Returns, per job, the samples of the calls the engines rejected.
std::vector<std::vector<int>> DecodeEngineJobs(std::span<const EngineJob> jobs, int t, GpuDecoders* decoders,
                                               RouteScheduler* scheduler, EngineThreadTimes* times,
                                               const std::function<std::string(const GpuBatch&, int)>& name);

// For the trace (SLUICE_TRACE): marks `timing` kEngineDone from a host callback when `stream`
// reaches this point; nothing waits for it.
void MarkWhenEnginesFinish(const std::shared_ptr<BatchTiming>& timing, cudaStream_t stream);

}  // namespace sluice

#endif  // SLUICE_PIPELINE_GPU_ENGINE_JOBS_H_
