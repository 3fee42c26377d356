// EngineJob: a batch's samples for the JPEG engines; DecodeEngineJobs decodes the samples of one
// job, or of several queued jobs together (GatherQueue), in the engine calls of one engine thread.
//
//   std::vector<std::vector<int>> rejected = DecodeEngineJobs(jobs, t, decoders, scheduler, times, name);
//   // rejected[j]: the samples of jobs[j] the engines gave back, for another decoder
//
// Thread-safety: engine thread t alone calls it for t (its decoder, stream and scratch).
#ifndef SLUICE_PIPELINE_GPU_ENGINE_JOBS_H_
#define SLUICE_PIPELINE_GPU_ENGINE_JOBS_H_

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "pipeline/gpu/decoders.h"
#include "pipeline/gpu/engine_times.h"
#include "pipeline/gpu/gpu_batch.h"
#include "pipeline/gpu/route_scheduler.h"

namespace sluice {

struct EngineJob {
  std::shared_ptr<GpuBatch> b;
  std::vector<int> members;  // its samples for the engines
};

// For each job whose batch is not cancelled: waits (on the host) until the batch's arena may be
// written, decodes its members on engine thread t, packs each decoded sample not packed yet (a
// failure goes to the sample's status, prefixed by name(batch, sample)), and records the batch's
// hw_done on the engine stream (used_hw). The engines' time goes to `scheduler`, the waits and
// the packing to `times`. Returns, per job, the samples of the calls the engines rejected.
std::vector<std::vector<int>> DecodeEngineJobs(std::span<const EngineJob> jobs, int t, GpuDecoders* decoders,
                                               RouteScheduler* scheduler, EngineThreadTimes* times,
                                               const std::function<std::string(const GpuBatch&, int)>& name);

// Whether the thread that plans a batch packs its engine samples' resampling tables (before the
// engine calls) rather than the engine thread (after them), for batches of `batch_size`: for
// batches of up to kSmallBatch (64), where the engine threads set the rate (VOC-like set, Resize
// 640, batches of 32 and 64, two H200s: hardware +8-17%, auto +8-37%, the engine threads' CPU per
// engine image halved); not above, where the packing delayed each batch's engine calls (batch 256 on 143-KiB
// files: auto -10%, hardware level). SLUICE_PACK_EARLY: 1 always, 0 never (read once).
bool PackEarly(int batch_size);

// Packs `members` (engine samples of batch b, planned: their geometry and arena place are set)
// on the calling thread, so that the engine threads need not; a sample whose packing fails gets
// the error in its status, prefixed by name(b, sample), and leaves the list. Returns the rest.
std::vector<int> PackBeforeEngines(GpuBatch* b, std::vector<int> members, ResizeScratch* scratch,
                                   const std::function<std::string(const GpuBatch&, int)>& name);

// For the trace (SLUICE_TRACE): marks `timing` kEngineDone from a host callback when `stream`
// reaches this point; nothing waits for it.
void MarkWhenEnginesFinish(const std::shared_ptr<BatchTiming>& timing, cudaStream_t stream);

}  // namespace sluice

#endif  // SLUICE_PIPELINE_GPU_ENGINE_JOBS_H_
