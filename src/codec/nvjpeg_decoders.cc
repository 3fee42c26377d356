#include "codec/nvjpeg_decoders.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <mutex>
#include <vector>

#include "codec/jpeg_cpu.h"
#include "core/clock.h"
#include "core/env_knob.h"
#include "gpu/cuda_util.h"

namespace sluice {

namespace {
constexpr int kPadSide = 16;  // a pad decodes at most kPadSide x kPadSide pixels
constexpr size_t kPadBytes = kPadSide * kPadSide * 3;

bool Is(const char* a, const char* b) { return std::strcmp(a, b) == 0; }

// The host waits for earlier calls' GPU work before a call or a state's initialization, as DALI
// waits for its previous hardware decode: nvJPEG's hardware backend starts the engines at call
// time, not in stream order, and back-to-back calls without this wait hung a stream now and then
// with page-locked input (docs/benchmarks.md). Which call (experiment knob SLUICE_ENGINE_WAIT):
// 2 (default), the last call of any decoder taking the same turns (EngineTurn::last_call); 1, this
// decoder's last call; 0, none.
int EngineWait() {
  static const int wait = static_cast<int>(EnvKnob("SLUICE_ENGINE_WAIT", 2));
  return wait;
}
}  // namespace

bool HardwareDecodable(const ImageInfo& info) {
  if (info.format != ImageFormat::kJpeg || info.progressive || info.components != 3) return false;
  const char* s = info.subsampling;
  return Is(s, "444") || Is(s, "422") || Is(s, "420") || Is(s, "440");
}

bool HybridDecodable(const ImageInfo& info) {
  return info.format == ImageFormat::kJpeg && (info.components == 1 || info.components == 3);
}

// ---------------------------------------------------------------------------- hardware

Result<std::unique_ptr<NvjpegHardwareDecoder>> NvjpegHardwareDecoder::Create(NvjpegContext* ctx, int images_per_engine,
                                                                             int max_side, EnginePads pads,
                                                                             std::shared_ptr<EngineStatePool> states) {
  if (ctx->hardware_handle() == nullptr) return ctx->hardware_status();
  if (max_side < 1) return InvalidArgument("the engines' largest image side must be at least 1, not ", max_side);
  const NvjpegApi& api = ctx->api();
  if (states == nullptr) states = std::make_shared<EngineStatePool>(ctx, 1);
  std::unique_ptr<NvjpegHardwareDecoder> d(new NvjpegHardwareDecoder(ctx, max_side, pads, std::move(states)));
  d->width_ = ctx->hardware_engines() * images_per_engine;
  d->params_.resize(static_cast<size_t>(d->width_));
  for (auto& p : d->params_) {
    SLUICE_NVJPEG_RETURN_IF_ERROR(api.nvjpegDecodeParamsCreate(ctx->hardware_handle(), &p));
    SLUICE_NVJPEG_RETURN_IF_ERROR(api.nvjpegDecodeParamsSetOutputFormat(p, NVJPEG_OUTPUT_RGBI));
  }
  if (pads != EnginePads::kSmallestFile) SLUICE_RETURN_IF_ERROR(d->MakeTinyPad());
  return d;
}

Status NvjpegHardwareDecoder::MakeTinyPad() {
  const std::vector<uint8_t> grey(kPadBytes, 128);
  SLUICE_ASSIGN_OR_RETURN(const std::vector<uint8_t> jpg,
                          EncodeJpeg(ImageView{grey.data(), kPadSide, kPadSide, 3, kPadSide * 3}, 75, "420",
                                     /*progressive=*/false));
  void* p = nullptr;
  SLUICE_CUDA_RETURN_IF_ERROR(cudaHostAlloc(&p, jpg.size(), cudaHostAllocPortable));
  std::memcpy(p, jpg.data(), jpg.size());
  tiny_pad_ = static_cast<uint8_t*>(p);
  tiny_pad_size_ = jpg.size();
  return Status::OK();
}

NvjpegHardwareDecoder::~NvjpegHardwareDecoder() {
  const NvjpegApi& api = ctx_->api();
  if (last_call_ != nullptr) {
    EngineTurn& turn = ctx_->engine_turn();
    std::lock_guard<std::mutex> lock(turn.mu);
    if (turn.last_call == last_call_) turn.last_call = nullptr;
    cudaEventDestroy(last_call_);
  }
  if (pad_out_ != nullptr) {
    nvjpegDevAllocatorV2_t* alloc = ctx_->device_allocator();
    alloc->dev_free(alloc->dev_ctx, pad_out_, static_cast<size_t>(width_) * kPadBytes, nullptr);
  }
  if (tiny_pad_ != nullptr) cudaFreeHost(tiny_pad_);
  for (auto p : params_)
    if (p != nullptr) api.nvjpegDecodeParamsDestroy(p);
  std::lock_guard<std::mutex> turn(ctx_->engine_turn().mu);  // the pool's other decoders may be calling
  pool_.reset();  // the last decoder of a pool destroys its states
}

Result<EngineState*> NvjpegHardwareDecoder::AddState() {
  ScopedTimer timed(&state_ns_);
  return pool_->Add();  // pointers to the pool's other states stay valid
}

Status NvjpegHardwareDecoder::WaitForEarlierCalls() {
  cudaEvent_t last = EngineWait() == 2 ? ctx_->engine_turn().last_call : last_call_;
  if (EngineWait() != 0 && last != nullptr) SLUICE_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(last));
  return Status::OK();
}

Status NvjpegHardwareDecoder::RecordCall(cudaStream_t stream) {
  if (EngineWait() == 0) return Status::OK();
  if (last_call_ == nullptr) SLUICE_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&last_call_, cudaEventDisableTiming));
  SLUICE_CUDA_RETURN_IF_ERROR(cudaEventRecord(last_call_, stream));
  ctx_->engine_turn().last_call = last_call_;
  return Status::OK();
}

Status NvjpegHardwareDecoder::Initialize(EngineState* s, int n) {
  ScopedTimer timed(&state_ns_);
  SLUICE_RETURN_IF_ERROR(WaitForEarlierCalls());
  SLUICE_RETURN_IF_ERROR(EngineStatePool::WaitForLastCall(*s, nullptr));  // maybe another decoder's
  SLUICE_NVJPEG_RETURN_IF_ERROR(
      ctx_->api().nvjpegDecodeBatchedInitialize(ctx_->hardware_handle(), s->state, n, 1, NVJPEG_OUTPUT_RGBI));
  s->size = n;
  s->stale = false;
  ++inits_;
  return Status::OK();
}

Result<EngineState*> NvjpegHardwareDecoder::StateFor(int n, cudaStream_t stream) {
  std::vector<EngineState>& states = pool_->states();
  const bool full = static_cast<int>(states.size()) >= kMaxStates;
  EngineState* pick = nullptr;
  for (EngineState& s : states)
    if (s.size == n) pick = &s;
  if (pick != nullptr) pool_->padded_run().Exact();
  if (pick == nullptr) {  // the smallest initialized state this call can fill up with pads
    for (EngineState& s : states)
      if (!s.stale && s.size > n && (full || s.size - n <= kMaxPads) &&
          (pick == nullptr || s.size < pick->size))
        pick = &s;
    // A size padded call after call gets a state of its own (PaddedRun) where it fits within the
    // bound beside the state it was padded into (which MakeRoom then keeps: it was used last), so
    // that two sizes taking turns never initialize each other's state again and again. An
    // experiment knob sets the run's length (0: pads for ever, as before it).
    static const int run = static_cast<int>(EnvKnob("SLUICE_ENGINE_PADDED_CALLS", PaddedRun::kCalls));
    const bool bounded = pads_ == EnginePads::kTinyJpegBoundedSlots;
    if (pick != nullptr && bounded && !full && pick->size + n <= slot_bound() &&
        pool_->padded_run().Padded(n, run))
      pick = nullptr;
  }
  if (pick == nullptr && !full && pads_ == EnginePads::kTinyJpegBoundedSlots) {
    SLUICE_ASSIGN_OR_RETURN(pick, MakeRoom(n));
  }
  if (pick == nullptr && !full) {
    SLUICE_ASSIGN_OR_RETURN(pick, AddState());
  }
  if (pick == nullptr) return pick;
  pick->last_use = pool_->NextUse();
  if (pick->size < n || pick->stale) SLUICE_RETURN_IF_ERROR(Initialize(pick, n));
  SLUICE_RETURN_IF_ERROR(EngineStatePool::WaitForLastCall(*pick, stream));  // another decoder's call
  return pick;
}

int NvjpegHardwareDecoder::SlotsInUse() const {
  int slots = 0;
  for (const EngineState& s : pool_->states()) slots += std::max(s.size, 0);
  return slots;
}

int NvjpegHardwareDecoder::state_slots() const {
  std::lock_guard<std::mutex> turn(ctx_->engine_turn().mu);
  return SlotsInUse();
}

std::vector<int> NvjpegHardwareDecoder::state_sizes() const {
  std::lock_guard<std::mutex> turn(ctx_->engine_turn().mu);
  std::vector<int> sizes;
  for (const EngineState& s : pool_->states())
    if (s.size > 0 && !s.stale) sizes.push_back(s.size);
  return sizes;
}

int NvjpegHardwareDecoder::slot_bound() const {
  return pads_ == EnginePads::kTinyJpegBoundedSlots ? pool_->decoders() * (width_ + kMaxPads)
                                                    : std::numeric_limits<int>::max();
}

Result<EngineState*> NvjpegHardwareDecoder::MakeRoom(int n) {
  const int bound = slot_bound();
  std::vector<EngineState>& states = pool_->states();
  nvjpegJpegState_t reused = nullptr;  // the state to initialize again for n
  while (SlotsInUse() + n > bound) {
    EngineState* oldest = nullptr;
    for (EngineState& s : states)
      if (s.size > 0 && (oldest == nullptr || s.last_use < oldest->last_use)) oldest = &s;
    if (oldest == nullptr) break;  // n alone is within the bound (n <= width_)
    if (reused == nullptr) {
      reused = oldest->state;
      oldest->size = -1;  // its slots no longer count: Initialize gives it n
      continue;
    }
    // A second state must go: after the earlier calls, as Initialize waits before it frees a
    // state's buffers (nvJPEG frees them with cuMemFree, which waits for the device).
    ScopedTimer timed(&state_ns_);
    SLUICE_RETURN_IF_ERROR(WaitForEarlierCalls());
    SLUICE_RETURN_IF_ERROR(pool_->Destroy(oldest));
  }
  for (EngineState& s : states)
    if (s.state == reused) return &s;
  return static_cast<EngineState*>(nullptr);
}

Status NvjpegHardwareDecoder::Reserve(int n) {
  if (n < 1 || n > width_) return InvalidArgument("a state for calls of ", n, " images: the decoder takes 1 to ", width_);
  std::lock_guard<std::mutex> turn(ctx_->engine_turn().mu);
  for (const EngineState& s : pool_->states())
    if (s.size == n && !s.stale) return Status::OK();
  if (static_cast<int>(pool_->states().size()) >= kMaxStates)
    return ResourceExhausted("the hardware decoder has ", kMaxStates, " states already");
  SLUICE_ASSIGN_OR_RETURN(EngineState* fresh, AddState());
  return Initialize(fresh, n);
}

Status NvjpegHardwareDecoder::Decode(std::span<const NvjpegJob> jobs, cudaStream_t stream) {
  const int n = static_cast<int>(jobs.size());
  if (n == 0) return Status::OK();
  if (n > width_) return Internal("hardware decode of ", n, " images, more than ", width_, " at once");
  const int64_t asked = NowNs();
  std::lock_guard<std::mutex> turn(ctx_->engine_turn().mu);
  turn_wait_ns_.fetch_add(NowNs() - asked, std::memory_order_relaxed);
  ScopedTimer busy(&busy_ns_);  // the turn, however the call ends
  SLUICE_ASSIGN_OR_RETURN(EngineState* state, StateFor(n, stream));
  if (state != nullptr) return DecodeOneCall(jobs, state, stream);
  // Every state is made and all are smaller than n: calls of the largest one's size.
  std::vector<EngineState>& states = pool_->states();
  EngineState* largest = &*std::max_element(states.begin(), states.end(), [](const EngineState& a, const EngineState& b) {
    return a.size < b.size;
  });
  SLUICE_RETURN_IF_ERROR(EngineStatePool::WaitForLastCall(*largest, stream));
  for (int start = 0; start < n; start += largest->size) {
    if (largest->stale) SLUICE_RETURN_IF_ERROR(Initialize(largest, largest->size));
    SLUICE_RETURN_IF_ERROR(DecodeOneCall(jobs.subspan(static_cast<size_t>(start),
                                                      static_cast<size_t>(std::min(largest->size, n - start))),
                                         largest, stream));
  }
  return Status::OK();
}

Status NvjpegHardwareDecoder::DecodeOneCall(std::span<const NvjpegJob> jobs, EngineState* state, cudaStream_t stream) {
  const NvjpegApi& api = ctx_->api();
  const int n = static_cast<int>(jobs.size());
  const int m = state->size;  // n images, then m - n pads
  if (m > n && pad_out_ == nullptr) {  // the first padded call: the pads' scratch, once
    nvjpegDevAllocatorV2_t* alloc = ctx_->device_allocator();
    void* pad = nullptr;
    if (alloc->dev_malloc(alloc->dev_ctx, &pad, static_cast<size_t>(width_) * kPadBytes, stream) != 0)
      return ResourceExhausted("cannot allocate the hardware decoder's scratch memory");
    pad_out_ = static_cast<uint8_t*>(pad);
    // The engines write when the call is made, not in stream order: wait (once) until the
    // allocation is ready, as the executor does for the arena.
    SLUICE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  }
  const NvjpegJob* smallest = &jobs[0];
  for (const NvjpegJob& j : jobs)
    if (j.size < smallest->size) smallest = &j;
  std::vector<const unsigned char*> data(static_cast<size_t>(m));
  std::vector<size_t> lengths(static_cast<size_t>(m));
  std::vector<nvjpegImage_t> dest(static_cast<size_t>(m));
  for (int i = 0; i < m; ++i) {
    const NvjpegJob j = i < n ? jobs[static_cast<size_t>(i)] : Pad(*smallest, i - n);
    data[static_cast<size_t>(i)] = j.data;
    lengths[static_cast<size_t>(i)] = j.size;
    nvjpegImage_t& img = dest[static_cast<size_t>(i)];
    std::memset(&img, 0, sizeof(img));
    img.channel[0] = j.out;
    img.pitch[0] = j.pitch;
    SLUICE_NVJPEG_RETURN_IF_ERROR(api.nvjpegDecodeParamsSetROI(params_[static_cast<size_t>(i)], j.roi.x,
                                                               j.roi.y, j.roi.w, j.roi.h));
  }
  SLUICE_RETURN_IF_ERROR(WaitForEarlierCalls());
  calls_.fetch_add(1, std::memory_order_relaxed);
  const nvjpegStatus_t s = api.nvjpegDecodeBatchedEx(ctx_->hardware_handle(), state->state, data.data(),
                                                     lengths.data(), dest.data(), params_.data(), stream);
  if (s != NVJPEG_STATUS_SUCCESS) {
    state->stale = true;  // a failed batch needs a fresh initialization
    (void)EngineStatePool::RecordCall(state, stream);  // its work may still run
    return NvjpegStatus(s, "nvjpegDecodeBatchedEx");
  }
  pads_decoded_.fetch_add(m - n, std::memory_order_relaxed);
  SLUICE_RETURN_IF_ERROR(EngineStatePool::RecordCall(state, stream));
  return RecordCall(stream);
}

// Into scratch memory nobody reads: a corner of the smallest file, or the tiny JPEG.
NvjpegJob NvjpegHardwareDecoder::Pad(const NvjpegJob& smallest, int k) const {
  NvjpegJob j = smallest;
  if (tiny_pad_ != nullptr) {
    j.data = tiny_pad_;
    j.size = tiny_pad_size_;
    j.roi = Rect{0, 0, kPadSide, kPadSide};
  }
  j.roi.w = std::min(j.roi.w, kPadSide);
  j.roi.h = std::min(j.roi.h, kPadSide);
  j.out = pad_out_ + static_cast<size_t>(k) * kPadBytes;
  j.pitch = kPadSide * 3;
  return j;
}

// ---------------------------------------------------------------------------- hybrid

Result<std::unique_ptr<NvjpegHybridDecoder>> NvjpegHybridDecoder::Create(NvjpegContext* ctx, int workers) {
  const NvjpegApi& api = ctx->api();
  nvjpegHandle_t h = ctx->hybrid_handle();
  std::unique_ptr<NvjpegHybridDecoder> d(new NvjpegHybridDecoder(ctx));
  SLUICE_NVJPEG_RETURN_IF_ERROR(api.nvjpegDecoderCreate(h, NVJPEG_BACKEND_HYBRID, &d->decoder_));
  d->workers_.resize(static_cast<size_t>(workers));
  for (Worker& w : d->workers_) {
    for (Slot& s : w.slots) {
      SLUICE_NVJPEG_RETURN_IF_ERROR(api.nvjpegDecoderStateCreate(h, d->decoder_, &s.state));
      SLUICE_NVJPEG_RETURN_IF_ERROR(api.nvjpegBufferPinnedCreateV2(h, ctx->pinned_allocator(), &s.pinned));
      SLUICE_NVJPEG_RETURN_IF_ERROR(api.nvjpegBufferDeviceCreateV2(h, ctx->device_allocator(), &s.device));
      SLUICE_NVJPEG_RETURN_IF_ERROR(api.nvjpegStateAttachPinnedBuffer(s.state, s.pinned));
      SLUICE_NVJPEG_RETURN_IF_ERROR(api.nvjpegStateAttachDeviceBuffer(s.state, s.device));
      SLUICE_NVJPEG_RETURN_IF_ERROR(api.nvjpegJpegStreamCreate(h, &s.stream));
      SLUICE_NVJPEG_RETURN_IF_ERROR(api.nvjpegDecodeParamsCreate(h, &s.params));
      SLUICE_NVJPEG_RETURN_IF_ERROR(api.nvjpegDecodeParamsSetOutputFormat(s.params, NVJPEG_OUTPUT_RGBI));
      SLUICE_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming));
    }
  }
  return d;
}

NvjpegHybridDecoder::~NvjpegHybridDecoder() {
  const NvjpegApi& api = ctx_->api();
  for (Worker& w : workers_) {
    for (Slot& s : w.slots) {
      if (s.done != nullptr) {
        cudaEventSynchronize(s.done);
        cudaEventDestroy(s.done);
      }
      if (s.params != nullptr) api.nvjpegDecodeParamsDestroy(s.params);
      if (s.stream != nullptr) api.nvjpegJpegStreamDestroy(s.stream);
      if (s.state != nullptr) api.nvjpegJpegStateDestroy(s.state);
      if (s.pinned != nullptr) api.nvjpegBufferPinnedDestroy(s.pinned);
      if (s.device != nullptr) api.nvjpegBufferDeviceDestroy(s.device);
    }
  }
  if (decoder_ != nullptr) api.nvjpegDecoderDestroy(decoder_);
}

Status NvjpegHybridDecoder::Decode(int worker, const NvjpegJob& job, cudaStream_t stream) {
  const NvjpegApi& api = ctx_->api();
  nvjpegHandle_t h = ctx_->hybrid_handle();
  Worker& w = workers_[static_cast<size_t>(worker)];
  Slot& s = w.slots[w.next];
  w.next ^= 1;
  if (s.pending) {  // its buffers may still feed the GPU stages of an earlier image
    SLUICE_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(s.done));
    s.pending = false;
  }
  SLUICE_NVJPEG_RETURN_IF_ERROR(api.nvjpegJpegStreamParse(h, job.data, job.size, 0, 0, s.stream));
  SLUICE_NVJPEG_RETURN_IF_ERROR(api.nvjpegDecodeParamsSetROI(s.params, job.roi.x, job.roi.y, job.roi.w, job.roi.h));
  SLUICE_NVJPEG_RETURN_IF_ERROR(api.nvjpegDecodeJpegHost(h, decoder_, s.state, s.params, s.stream));
  nvjpegImage_t img;
  std::memset(&img, 0, sizeof(img));
  img.channel[0] = job.out;
  img.pitch[0] = job.pitch;
  SLUICE_NVJPEG_RETURN_IF_ERROR(api.nvjpegDecodeJpegTransferToDevice(h, decoder_, s.state, s.stream, stream));
  SLUICE_NVJPEG_RETURN_IF_ERROR(api.nvjpegDecodeJpegDevice(h, decoder_, s.state, &img, stream));
  SLUICE_CUDA_RETURN_IF_ERROR(cudaEventRecord(s.done, stream));
  s.pending = true;
  return Status::OK();
}

}  // namespace sluice
