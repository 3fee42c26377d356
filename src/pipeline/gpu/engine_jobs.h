// EngineJob: a batch's samples for the JPEG engines; DecodeEngineJobs decodes the samples of one
// job, or of several queued jobs together (GatherQueue), in the engine calls of one engine thread.
//
//   std::vector<std::vector<int>> rejected = DecodeEngineJobs(jobs, t, decoders, scheduler, name);
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
#include "pipeline/gpu/gpu_batch.h"
#include "pipeline/gpu/route_scheduler.h"

namespace sluice {

struct EngineJob {
  std::shared_ptr<GpuBatch> b;
  std::vector<int> members;  // its samples for the engines
};

// For each job whose batch is not cancelled: waits (on the host) until the batch's arena may be
// written, decodes its members on engine thread t, packs each decoded sample (a failure goes to
// the sample's status, prefixed by name(batch, sample)), and records the batch's hw_done on the
// engine stream (used_hw). The engines' time goes to `scheduler`. Returns, per job, the samples
// of the calls the engines rejected.
std::vector<std::vector<int>> DecodeEngineJobs(std::span<const EngineJob> jobs, int t, GpuDecoders* decoders,
                                               RouteScheduler* scheduler,
                                               const std::function<std::string(const GpuBatch&, int)>& name);

}  // namespace sluice

#endif  // SLUICE_PIPELINE_GPU_ENGINE_JOBS_H_
