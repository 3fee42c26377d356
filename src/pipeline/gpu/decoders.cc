#include "pipeline/gpu/decoders.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "codec/engine_call_split.h"
#include "core/env_knob.h"

namespace sluice {

namespace {
EnginePads PadsFromKnob(int knob) {
  if (knob == 0) return EnginePads::kSmallestFile;
  if (knob == 1) return EnginePads::kTinyJpeg;
  return EnginePads::kTinyJpegBoundedSlots;
}
}  // namespace

Result<std::unique_ptr<GpuDecoders>> GpuDecoders::Create(DevicePool* pool, DecodeRoute route, int threads) {
  std::unique_ptr<GpuDecoders> d(new GpuDecoders());
  if (route == DecodeRoute::kCpu) return d;
  Result<std::unique_ptr<NvjpegContext>> ctx = NvjpegContext::Create(pool);
  if (!ctx.ok()) {
    if (route == DecodeRoute::kAuto) return d;
    return ctx.status().WithPrefix(std::string("decode_route='") + DecodeRouteName(route) + "'");
  }
  d->nvjpeg_ = std::move(ctx).value();
  // How a turn's images are split into calls (an experiment knob): 0, balanced; 1, full calls of
  // the largest state first where balanced calls would initialize a state again.
  static const bool full_calls_first = EnvKnob("SLUICE_ENGINE_SPLIT", 0) == 1;
  d->full_calls_first_ = full_calls_first;
  // The engine threads' calls take turns, so one pool of states serves both (an experiment knob:
  // 0, a pool each, which initialized each call size once per thread).
  static const bool shared_states = EnvKnob("SLUICE_ENGINE_SHARED_STATES", 1) == 1;
  // An experiment knob: 2, the second engine thread on an nvJPEG handle of its own (a context
  // and states of its own); with SLUICE_ENGINE_TURNS=1 its calls may then overlap the first's
  // (codec/engine_turn.h; bench/engine_capacity.py measures that in a bare loop). Both on, on an
  // H200: `hardware` 1.02x on (a) and 1.07x on (b), `auto` no gain, so both stay off.
  static const bool own_handles = EnvKnob("SLUICE_ENGINE_HANDLES", 1) == 2;
  if (own_handles && route != DecodeRoute::kHybrid) {
    SLUICE_ASSIGN_OR_RETURN(d->second_handle_, NvjpegContext::Create(pool));
  }
  std::shared_ptr<EngineStatePool> states;
  if (shared_states && route != DecodeRoute::kHybrid && !own_handles)
    states = std::make_shared<EngineStatePool>(d->nvjpeg_.get(), kEngineThreads);
  for (int t = 0; route != DecodeRoute::kHybrid && t < kEngineThreads; ++t) {
    NvjpegContext* handle = t == 1 && d->second_handle_ ? d->second_handle_.get() : d->nvjpeg_.get();
    static const int per_engine = std::max(1, static_cast<int>(EnvKnob("SLUICE_ENGINE_IMAGES", 32)));
    static const int max_side = std::max(1, static_cast<int>(EnvKnob("SLUICE_ENGINE_MAX_SIDE", kEngineMaxSide)));
    // What fills a call up to its state, and how many states (an experiment knob): 0, a corner
    // of its smallest file; 1, a tiny JPEG; 2 (the default), a tiny JPEG, the states' slots bounded.
    static const EnginePads pads = PadsFromKnob(static_cast<int>(EnvKnob("SLUICE_ENGINE_PAD", 2)));
    Result<std::unique_ptr<NvjpegHardwareDecoder>> hw =
        NvjpegHardwareDecoder::Create(handle, per_engine, max_side, pads, states);
    if (!hw.ok()) {
      d->hw_.clear();
      if (route == DecodeRoute::kHardware) return hw.status().WithPrefix("decode_route='hardware'");
      break;
    }
    // Probes: states for more call sizes than the loader makes (do several states slow calls?).
    static const std::vector<int> reserved = EnvKnobInts("SLUICE_ENGINE_STATES");
    for (int n : reserved) SLUICE_RETURN_IF_ERROR((*hw)->Reserve(n).WithPrefix("SLUICE_ENGINE_STATES"));
    d->hw_.push_back(std::move(hw).value());
    // An experiment knob: the engine streams at the device's greatest priority, so that nvJPEG's
    // kernels around the engines' work (a colour conversion per image) wait less behind the
    // batches' own kernels, as they may where the transforms are heavy (the seed pipeline).
    static const bool high_priority = EnvKnob("SLUICE_ENGINE_PRIORITY", 0) == 1;
    d->hw_streams_.push_back(std::make_unique<CudaStream>());
    SLUICE_RETURN_IF_ERROR(d->hw_streams_.back()->Create(high_priority));
  }
  SLUICE_ASSIGN_OR_RETURN(d->hybrid_, NvjpegHybridDecoder::Create(d->nvjpeg_.get(), threads));
  return d;
}

GpuDecoders::~GpuDecoders() {
  for (auto& s : hw_streams_) cudaStreamSynchronize(s->get());
  hybrid_.reset();
  hw_.clear();
  second_handle_.reset();
  nvjpeg_.reset();
}

std::vector<size_t> GpuDecoders::DecodeOnEngines(std::span<GpuSample* const> samples, int t,
                                                 const std::function<void(size_t)>& decoded) {
  NvjpegHardwareDecoder& hw = *hw_[static_cast<size_t>(t)];
  // Balanced calls need no state sizes: only the experiment knob reads them (a vector a turn).
  const std::vector<int> states = full_calls_first_ ? hw.state_sizes() : std::vector<int>{};
  const std::vector<int> sizes = EngineCallSizes(static_cast<int>(samples.size()), hw.batch_width(), states,
                                                 hw.slot_bound(), NvjpegHardwareDecoder::kMaxPads, full_calls_first_);
  std::vector<size_t> rejected;
  std::vector<NvjpegJob> jobs;
  size_t start = 0;
  for (const int size : sizes) {
    const size_t end = start + static_cast<size_t>(size);
    jobs.clear();
    for (size_t k = start; k < end; ++k) {
      const GpuSample& s = *samples[k];
      jobs.push_back(NvjpegJob{s.bytes.data, s.bytes.size, s.roi, s.region, static_cast<size_t>(s.roi.w) * 3});
    }
    const bool ok = hw.Decode(jobs, engine_stream(t)).ok();
    for (size_t k = start; k < end; ++k) {
      if (ok) {
        decoded(k);
      } else {  // the engines rejected a file of this call: decode the call another way
        rejected.push_back(k);
      }
    }
    start = end;
  }
  return rejected;
}

Status DecodeOnCpu(const SampleProcessor& processor, GpuSample* s, WorkerScratch* w, HostPool* pinned, DevicePool* pool,
                   cudaStream_t stream, StageCounters* counters) {
  {
    Result<ImageInfo> header = w->decoder.ReadHeader(s->bytes.data, s->bytes.size);  // this decoder's turn
    if (!header.ok()) return header.status();
  }
  SLUICE_ASSIGN_OR_RETURN(const ImageView view,
                          processor.DecodeRegion(s->info, &s->geo, s->geo.num_segments - 1, w, counters));
  StageTimer timer(counters, Stage::kCollate);
  const size_t row = static_cast<size_t>(view.width) * 3;
  s->region_bytes = row * static_cast<size_t>(view.height);
  s->staging = pinned->Allocate(s->region_bytes);
  if (!s->staging) return ResourceExhausted("cannot allocate ", s->region_bytes, " bytes of pinned memory");
  for (int y = 0; y < view.height; ++y) std::memcpy(s->staging.get() + row * static_cast<size_t>(y), view.row(y), row);
  s->roi = Rect{0, 0, view.width, view.height};
  // Experiment knob SLUICE_CPU_ZEROCOPY=1: the finishing kernel reads the pinned buffer across the
  // bus (pinned memory is mapped at the same address under unified addressing, and the batch keeps
  // it until its kernel is done), so the sample makes no CUDA call here at all.
  static const bool zero_copy = EnvKnob("SLUICE_CPU_ZEROCOPY", 0) == 1;
  if (zero_copy) {
    s->region = s->staging.get();
    return Status::OK();
  }
  SLUICE_ASSIGN_OR_RETURN(void* region, pool->Allocate(s->region_bytes, stream));
  s->region = static_cast<uint8_t*>(region);
  s->own_region = true;
  SLUICE_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(s->region, s->staging.get(), s->region_bytes, cudaMemcpyHostToDevice, stream));
  return Status::OK();
}

}  // namespace sluice
