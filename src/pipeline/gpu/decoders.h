// GpuDecoders: the GPU path's nvJPEG decoders: the context, two engine threads' hardware decoders
// (each with its stream and tap scratch; one pool of nvJPEG states for both) and the hybrid
// decoder. Their nvJPEG calls take turns (NvjpegHardwareDecoder::Decode: concurrent calls can
// deadlock), but while one engine thread's call runs, the other waits for its batch's memory and
// fills tap tables. Measured on (a): one engine thread 14,700 images/s, two 17,300. (The
// experiment knob SLUICE_ENGINE_HANDLES=2 gives the second thread a handle of its own: decoders.cc.)
//
// Thread-safety: engine thread t alone uses engine t; DecodeHybrid runs on the CPU-side decode
// threads, each with its worker index.
#ifndef SLUICE_PIPELINE_GPU_DECODERS_H_
#define SLUICE_PIPELINE_GPU_DECODERS_H_

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "codec/nvjpeg_decoders.h"
#include "core/host_pool.h"
#include "gpu/cuda_util.h"
#include "gpu/device_pool.h"
#include "kernels/resize/resize_cpu.h"
#include "pipeline/gpu/gpu_batch.h"
#include "pipeline/sample_processor.h"

namespace sluice {

class GpuDecoders {
 public:
  static constexpr int kEngineThreads = 2;
  // The largest image side the engines take: it bounds the buffers nvJPEG grows for each image
  // slot (see NvjpegHardwareDecoder::Decode); larger images go to the hybrid decoder or the CPU.
  static constexpr int kEngineMaxSide = 1024;

  // The decoders `route` may use, for `threads` CPU-side decode threads, with memory from `pool`.
  // Without nvJPEG (or its engines), "auto" goes on with what there is; a pinned route that
  // cannot be had is an error naming it.
  static Result<std::unique_ptr<GpuDecoders>> Create(DevicePool* pool, DecodeRoute route, int threads);
  ~GpuDecoders();  // waits for the engine streams

  bool has_hardware() const { return !hw_.empty(); }
  // The largest image side the engines take; 0 without engines.
  int engine_max_side() const { return hw_.empty() ? 0 : hw_[0]->max_side(); }
  bool has_hybrid() const { return hybrid_ != nullptr; }
  cudaStream_t engine_stream(int t) const { return hw_streams_[static_cast<size_t>(t)]->get(); }
  ResizeScratch* engine_scratch(int t) { return &hw_scratch_[t]; }
  int64_t pinned_peak() const {
    return (nvjpeg_ ? nvjpeg_->pinned_peak() : 0) + (second_handle_ ? second_handle_->pinned_peak() : 0);
  }
  int64_t pinned_held() const {
    return (nvjpeg_ ? nvjpeg_->pinned_held() : 0) + (second_handle_ ? second_handle_->pinned_held() : 0);
  }
  // Nanoseconds engine thread t's decode calls held the engines, since creation.
  int64_t engine_busy_ns(int t) const { return hw_[static_cast<size_t>(t)]->busy_ns(); }
  // Nanoseconds the engine threads' decode calls held the engines, since creation.
  int64_t engine_busy_ns() const {
    int64_t ns = 0;
    for (const auto& hw : hw_) ns += hw->busy_ns();
    return ns;
  }
  // Nanoseconds the engine threads' decode calls waited for their turn, since creation.
  int64_t engine_turn_wait_ns() const {
    int64_t ns = 0;
    for (const auto& hw : hw_) ns += hw->turn_wait_ns();
    return ns;
  }
  // nvJPEG states engine thread t (or all of them) initialized, since creation: one per call size
  // and thread (at most kMaxStates each), plus one after each call the engines rejected.
  int64_t engine_state_inits(int t) const { return hw_[static_cast<size_t>(t)]->state_initializations(); }
  int64_t engine_state_inits() const {
    int64_t n = 0;
    for (const auto& hw : hw_) n += hw->state_initializations();
    return n;
  }
  // Seconds the engine threads spent on their states (made, initialized, destroyed), since creation.
  double engine_state_seconds() const {
    int64_t ns = 0;
    for (const auto& hw : hw_) ns += hw->state_ns();
    return static_cast<double>(ns) * 1e-9;
  }
  // The engine threads' nvJPEG calls, since creation.
  int64_t engine_calls() const {
    int64_t n = 0;
    for (const auto& hw : hw_) n += hw->calls();
    return n;
  }
  // The pads those calls decoded, since creation.
  int64_t engine_pads() const {
    int64_t n = 0;
    for (const auto& hw : hw_) n += hw->pads_decoded();
    return n;
  }
  // Frees nvJPEG's idle pinned buffers that no decode took since the previous call (a new epoch).
  void SweepPinned() {
    if (nvjpeg_) nvjpeg_->SweepPinned();
    if (second_handle_) second_handle_->SweepPinned();
  }

  // Decodes `samples` (of one batch or several) on the engines (engine thread t), in calls of at
  // most the decoder's batch width (EngineCallSizes), into their regions; calls `decoded(k)` for
  // each samples[k] a call decoded. Returns the positions k of the calls the engines rejected.
  // REQUIRES: the samples' arenas may be written (their batches' alloc_ready have passed).
  std::vector<size_t> DecodeOnEngines(std::span<GpuSample* const> samples, int t,
                                      const std::function<void(size_t)>& decoded);

  // Huffman on this thread, the rest on `stream`. Fails for a file the hybrid decoder rejects.
  Status DecodeHybrid(int worker, const GpuSample& s, cudaStream_t stream) {
    return hybrid_->Decode(worker, NvjpegJob{s.bytes.data, s.bytes.size, s.roi, s.region,
                                             static_cast<size_t>(s.roi.w) * 3},
                           stream);
  }

 private:
  GpuDecoders() = default;
  std::unique_ptr<NvjpegContext> nvjpeg_;
  std::unique_ptr<NvjpegContext> second_handle_;  // engine thread 1's (SLUICE_ENGINE_HANDLES=2)
  std::vector<std::unique_ptr<NvjpegHardwareDecoder>> hw_;
  std::vector<std::unique_ptr<CudaStream>> hw_streams_;
  std::unique_ptr<NvjpegHybridDecoder> hybrid_;
  ResizeScratch hw_scratch_[kEngineThreads];
  bool full_calls_first_ = false;  // EngineCallSizes' choice (experiment knob SLUICE_ENGINE_SPLIT)
};

// The CPU route: libjpeg-turbo decodes the region s's last segment reads (with w's decoder, whose
// turn it is), into pinned memory from `pinned`, uploaded on `stream` into memory from `pool`,
// which s then owns (s->own_region); with SLUICE_CPU_ZEROCOPY=1 (an experiment) s->region is the
// pinned buffer itself, read by the kernel across the bus.
Status DecodeOnCpu(const SampleProcessor& processor, GpuSample* s, WorkerScratch* w, HostPool* pinned, DevicePool* pool,
                   cudaStream_t stream, StageCounters* counters);

}  // namespace sluice

#endif  // SLUICE_PIPELINE_GPU_DECODERS_H_
