#include "pipeline/gpu/engine_jobs.h"

#include <utility>

#include "core/clock.h"
#include "core/env_knob.h"
#include "gpu/cuda_util.h"
#include "pipeline/gpu/launch.h"
#include "pipeline/resolve_options.h"

namespace sluice {

std::vector<std::vector<int>> DecodeEngineJobs(std::span<const EngineJob> jobs, int t, GpuDecoders* decoders,
                                               RouteScheduler* scheduler, EngineThreadTimes* times,
                                               const std::function<std::string(const GpuBatch&, int)>& name) {
  std::vector<std::vector<int>> rejected(jobs.size());
  std::vector<GpuSample*> samples;
  std::vector<std::pair<size_t, int>> owner;  // per sample: its job, its place in the batch
  std::vector<bool> decoding(jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j) {
    GpuBatch& b = *jobs[j].b;
    decoding[j] = !b.cancelled.load(std::memory_order_relaxed);
    if (!decoding[j]) continue;
    b.timing->Mark(BatchTrace::kEngineStart);
    // The engines may write the arena when the call is made rather than in stream order (a
    // device-side wait did not hold them back in torchcodec PR 1634's measurements on the H100),
    // and the arena may be memory an earlier batch's kernel reads until the batch's stream
    // reaches the allocation. So the host waits for that point. We could not provoke the race
    // here (kernels delayed 20 ms gave identical batches without the wait), and the wait costs
    // nothing measurable: the point has almost always passed.
    const int64_t asked = NowNs();
    const cudaError_t ready = cudaEventSynchronize(b.alloc_ready);
    times->memory_wait_ns.fetch_add(NowNs() - asked, std::memory_order_relaxed);
    if (ready != cudaSuccess) b.batch_status = CudaStatus(ready, "cudaEventSynchronize");
    for (int i : jobs[j].members) {
      samples.push_back(&b.gpu[static_cast<size_t>(i)]);
      owner.emplace_back(j, i);
    }
  }
  if (!samples.empty()) {
    int decoded = 0;
    const int64_t busy = decoders->engine_busy_ns(t), inits = decoders->engine_state_inits(t);
    const std::vector<size_t> gave_back = decoders->DecodeOnEngines(samples, t, [&](size_t k) {
      const auto [j, i] = owner[k];
      GpuBatch& b = *jobs[j].b;
      if (!samples[k]->packed) {
        ScopedTimer packing(&times->pack_ns);
        const Status st = PackSample(b, samples[k], decoders->engine_scratch(t));
        if (!st.ok()) b.status[static_cast<size_t>(i)] = st.WithPrefix(name(b, i));
      }
      ++decoded;
    });
    for (size_t k : gave_back) rejected[owner[k].first].push_back(owner[k].second);
    scheduler->RecordEngines(decoded, static_cast<double>(decoders->engine_busy_ns(t) - busy) * 1e-9,
                             decoders->engine_state_inits(t) != inits);
  }
  for (size_t j = 0; j < jobs.size(); ++j) {
    if (!decoding[j]) continue;
    GpuBatch& b = *jobs[j].b;
    b.timing->Mark(BatchTrace::kEngineHostEnd);
    const cudaError_t e = cudaEventRecord(b.hw_done, decoders->engine_stream(t));
    if (e != cudaSuccess) b.batch_status = CudaStatus(e, "cudaEventRecord");
    b.used_hw = true;
  }
  return rejected;
}

bool PackEarly(int batch_size) {
  static const double knob = EnvKnob("SLUICE_PACK_EARLY", -1);
  return knob == 1 || (knob != 0 && batch_size <= kSmallBatch);
}

std::vector<int> PackBeforeEngines(GpuBatch* b, std::vector<int> members, ResizeScratch* scratch,
                                   const std::function<std::string(const GpuBatch&, int)>& name) {
  std::vector<int> kept;
  for (int i : members) {
    GpuSample* s = &b->gpu[static_cast<size_t>(i)];
    const Status st = PackSample(*b, s, scratch);
    s->packed = st.ok();
    if (st.ok()) {
      kept.push_back(i);
    } else {
      b->status[static_cast<size_t>(i)] = st.WithPrefix(name(*b, i));
    }
  }
  return kept;
}

void MarkWhenEnginesFinish(const std::shared_ptr<BatchTiming>& timing, cudaStream_t stream) {
  auto* hold = new std::shared_ptr<BatchTiming>(timing);
  const cudaError_t cb = cudaLaunchHostFunc(
      stream,
      [](void* p) {
        auto* h = static_cast<std::shared_ptr<BatchTiming>*>(p);
        (*h)->Mark(BatchTrace::kEngineDone);
        delete h;
      },
      hold);
  if (cb != cudaSuccess) delete hold;
}

}  // namespace sluice
