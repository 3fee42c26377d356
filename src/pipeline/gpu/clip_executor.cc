#include "pipeline/gpu/clip_executor.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "core/clock.h"
#include "core/thread_pool.h"
#include "gpu/cuda_util.h"
#include "gpu/device.h"
#include "gpu/device_pool.h"
#include "kernels/resize/resize_gpu.h"
#include "kernels/yuv/yuv_resize_gpu.h"
#include "pipeline/gpu/batch_sync.h"
#include "pipeline/gpu/finish_lut.h"
#include "pipeline/gpu/pool_stats.h"
#include "video/nvcuvid_api.h"
#include "video/nvdec_pictures.h"

namespace sluice {

namespace {

// What a transform list needs that the clip path lacks, or null.
const char* Missing(const Plan& plan) {
  if (!plan.fixed_size()) return "a list without a fixed output size (end it with Resize((h, w)) or a crop)";
  if (plan.has_functions() || plan.cpu_only() != nullptr) return "user functions and CPU-only transforms";
  if (plan.has_color() || plan.max_filters() > 0) return "colour and filter transforms";
  if (plan.has_warp()) return "rotations and affine warps";
  if (plan.has_erase() || plan.has_noise()) return "erasing and noise";
  return nullptr;
}

struct ClipBatch : RingBatch {
  ~ClipBatch() override {
    if (allocated != nullptr) cudaEventDestroy(allocated);
  }
  cudaStream_t stream = nullptr;
  std::shared_ptr<DevicePool::SharedBuffer> output;
  cudaEvent_t allocated = nullptr;  // recorded on `stream` after the output's allocation
  std::vector<std::vector<int>> groups;  // positions of the clips, by video
  std::atomic<int> pending{0};           // groups not done
};

// A decode session's memory: its clips' frame descriptors and tap tables, and a picture the CPU
// decoded (a video NVDEC refuses) copied to the device.
struct Session {
  CudaStream stream;
  NvdecDecoderSlot decoder;  // kept from clip to clip
  uint8_t* yuv = nullptr;
  size_t yuv_bytes = 0;
  uint8_t* table = nullptr;
  size_t table_bytes = 0;
  std::vector<uint8_t> host;
  ResizeScratch scratch;
};

class GpuClipExecutor : public BatchWork {
 public:
  GpuClipExecutor(std::shared_ptr<const ClipSource> clips, const Plan& plan, const LoaderOptions& options)
      : clips_(std::move(clips)), plan_(plan), options_(options), finish_(MakeFinishParams(plan, options.dtype, options.layout)) {}
  ~GpuClipExecutor() override;
  Status Init();

  std::shared_ptr<RingBatch> NewBatch() override { return std::make_shared<ClipBatch>(); }
  void Start(const std::shared_ptr<RingBatch>& batch) override;
  void Assemble(RingBatch& batch, const std::vector<int>& kept, Batch* out) override;
  std::string Describe(const RingBatch& batch) const override {
    return std::to_string(static_cast<const ClipBatch&>(batch).pending.load()) + " videos' clips pending";
  }
  bool OnOwnThread() const override { return sessions_pool_->OnWorkerThread(); }
  void FillStats(LoaderStats* stats) const override;

 private:
  // The clips of one video (positions `group` of the batch), decoded in one pass: their statuses.
  void ProcessGroup(const std::shared_ptr<ClipBatch>& b, size_t g, int worker);
  std::vector<Status> RunGroup(ClipBatch& b, const std::vector<int>& group, Session* s);
  // The clips' frame descriptors (clip j's frame k at j * frames + k) and their taps, packed and
  // uploaded to the session's table; a clip whose geometry cannot be drawn gets its error in
  // `status` and no descriptors.
  struct FrameKernels {
    const GpuResizeSample* descs = nullptr;  // device
    const int32_t* taps = nullptr;           // the tap tables the descriptors index (device)
    std::vector<int> tiles;                  // per clip
  };
  Result<FrameKernels> UploadDescriptors(const ClipBatch& b, const std::vector<int>& group, int w, int h, Session* s,
                                         std::vector<Status>* status);
  Status Grow(uint8_t** p, size_t* have, size_t want, cudaStream_t stream);
  // A picture in host memory copied to the session's device buffer (rows packed, I420 or NV12 as it was).
  Result<YuvView> Upload(const YuvView& host, Session* s);
  void Finish(ClipBatch& b);

  std::shared_ptr<const ClipSource> clips_;
  const Plan& plan_;
  LoaderOptions options_;
  FinishParams finish_;
  int64_t frame_bytes_ = 0, clip_bytes_ = 0;
  std::shared_ptr<DevicePool> pool_;
  std::vector<std::unique_ptr<CudaStream>> streams_;  // the batches', round robin
  std::vector<std::unique_ptr<Session>> sessions_;
  uint8_t* lut_dev_ = nullptr;
  size_t lut_bytes_ = 0;
  GpuFinish gpu_finish_;
  std::unique_ptr<ThreadPool> sessions_pool_;  // last: joined first
};

Status GpuClipExecutor::Init() {
  const int dev = options_.device.index;
  SLUICE_RETURN_IF_ERROR(CheckCudaDevice(dev));
  if (const char* missing = Missing(plan_))
    return Unsupported("video clips on the GPU path: ", missing, " not there yet");
  if (Result<const NvcuvidApi*> nv = NvcuvidApi::Get(); !nv.ok())
    return Unsupported("video clips on the GPU path need NVDEC: ", nv.status().message());
  SLUICE_CUDA_RETURN_IF_ERROR(cudaSetDevice(dev));
  frame_bytes_ = static_cast<int64_t>(plan_.out_height()) * plan_.out_width() * 3 * static_cast<int64_t>(DTypeSize(options_.dtype));
  clip_bytes_ = frame_bytes_ * clips_->frames_per_clip();
  SLUICE_ASSIGN_OR_RETURN(pool_, DevicePool::Create(dev, options_.gpu_memory_budget));
  for (int i = 0; i < *options_.prefetch + 1; ++i) {
    streams_.push_back(std::make_unique<CudaStream>());
    SLUICE_RETURN_IF_ERROR(streams_.back()->Create());
  }
  SLUICE_ASSIGN_OR_RETURN(const DeviceFinishLut lut, UploadFinishLut(finish_, pool_.get(), streams_[0]->get()));
  lut_dev_ = lut.data;
  lut_bytes_ = lut.bytes;
  gpu_finish_ = lut.finish;
  // Decode sessions: one thread and stream each, a few (the engines number up to 7 or 8).
  const int sessions = std::clamp(*options_.num_threads, 1, 8);
  for (int i = 0; i < sessions; ++i) {
    sessions_.push_back(std::make_unique<Session>());
    SLUICE_RETURN_IF_ERROR(sessions_.back()->stream.Create());
  }
  SLUICE_ASSIGN_OR_RETURN(sessions_pool_, ThreadPool::Create(sessions, "sluice-nvdec"));
  return Status::OK();
}

GpuClipExecutor::~GpuClipExecutor() {
  sessions_pool_.reset();
  if (pool_ == nullptr) return;
  cudaSetDevice(options_.device.index);
  for (auto& s : streams_) cudaStreamSynchronize(s->get());
  for (auto& s : sessions_) {
    cudaStreamSynchronize(s->stream.get());
    if (s->table != nullptr) pool_->Free(s->table, s->table_bytes, nullptr);
    if (s->yuv != nullptr) pool_->Free(s->yuv, s->yuv_bytes, nullptr);
  }
  if (lut_dev_ != nullptr) pool_->Free(lut_dev_, lut_bytes_, nullptr);
}

void GpuClipExecutor::Start(const std::shared_ptr<RingBatch>& batch) {
  auto b = std::static_pointer_cast<ClipBatch>(batch);
  cudaSetDevice(options_.device.index);
  b->stream = streams_[static_cast<size_t>(b->sequence) % streams_.size()]->get();
  const int n = static_cast<int>(b->samples.size());
  Result<std::shared_ptr<DevicePool::SharedBuffer>> out = pool_->AllocateShared(static_cast<size_t>(clip_bytes_) * std::max(n, 1), b->stream);
  // The sessions' streams write it: they wait for the allocation (an event, not the host).
  cudaError_t e = cudaSuccess;
  if (out.ok() && b->allocated == nullptr) e = cudaEventCreateWithFlags(&b->allocated, cudaEventDisableTiming);
  if (out.ok() && e == cudaSuccess) e = cudaEventRecord(b->allocated, b->stream);
  if (!out.ok() || e != cudaSuccess) {
    b->batch_status = out.ok() ? CudaStatus(e, "cudaEventRecord") : out.status();
    return MarkDone(*b);
  }
  b->output = std::move(out).value();
  // Clips of one video go together, in groups small enough that the batches in flight keep every
  // session busy.
  const int in_flight = static_cast<int>(streams_.size()) * n;
  const int sessions = static_cast<int>(sessions_.size());
  b->groups = clips_->GroupByVideo(b->samples, options_.seed, b->epoch, (in_flight + sessions - 1) / sessions);
  b->pending.store(static_cast<int>(b->groups.size()));
  if (n == 0) return Finish(*b);
  for (size_t g = 0; g < b->groups.size(); ++g)
    sessions_pool_->Submit([this, b, g](int worker) { ProcessGroup(b, g, worker); });
}

void GpuClipExecutor::ProcessGroup(const std::shared_ptr<ClipBatch>& b, size_t g, int worker) {
  const std::vector<int>& group = b->groups[g];
  if (!b->cancelled.load(std::memory_order_relaxed)) {
    Session* s = sessions_[static_cast<size_t>(worker)].get();
    StageTimer timer(&counters_, Stage::kDecode);
    std::vector<Status> status = RunGroup(*b, group, s);
    // Whatever it queued is done before the batch can be observed as done.
    if (const cudaError_t e = cudaStreamSynchronize(s->stream.get()); e != cudaSuccess)
      for (Status& st : status)
        if (st.ok()) st = CudaStatus(e, "cudaStreamSynchronize");
    for (size_t j = 0; j < group.size(); ++j) {
      const size_t i = static_cast<size_t>(group[j]);
      if (!status[j].ok()) b->status[i] = status[j].WithPrefix(clips_->name(b->samples[i]));
    }
  }
  if (b->pending.fetch_sub(1) == 1) Finish(*b);
}

Status GpuClipExecutor::Grow(uint8_t** p, size_t* have, size_t want, cudaStream_t stream) {
  if (*have >= want) return Status::OK();
  if (*p != nullptr) pool_->Free(*p, *have, stream);
  *p = nullptr;
  *have = 0;
  SLUICE_ASSIGN_OR_RETURN(void* q, pool_->Allocate(want, stream));
  *p = static_cast<uint8_t*>(q);
  *have = want;
  return Status::OK();
}

Result<YuvView> GpuClipExecutor::Upload(const YuvView& host, Session* s) {
  const size_t w = static_cast<size_t>(host.width), h = static_cast<size_t>(host.height);
  const size_t cw = (w + 1) / 2, ch = (h + 1) / 2;
  const cudaStream_t stream = s->stream.get();
  SLUICE_RETURN_IF_ERROR(Grow(&s->yuv, &s->yuv_bytes, w * h + 2 * cw * ch, stream));
  const bool nv12 = host.uv_step == 2 && host.v == host.u + 1;
  if (!nv12 && host.uv_step != 1) return Internal("a picture whose chroma is neither I420 nor NV12");
  uint8_t* const y = s->yuv;
  uint8_t* const u = s->yuv + w * h;
  uint8_t* const v = nv12 ? u + 1 : u + cw * ch;
  YuvView dev = host;
  dev.y = y, dev.u = u, dev.v = v;
  dev.y_stride = static_cast<ptrdiff_t>(w);
  dev.uv_stride = static_cast<ptrdiff_t>(nv12 ? 2 * cw : cw);
  dev.device = true;
  // From pageable memory: each copy waits for the stream's earlier work (the last picture's
  // kernels) and has taken the bytes when it returns.
  auto copy = [&](uint8_t* dst, const uint8_t* src, ptrdiff_t pitch, size_t width, size_t rows) {
    return cudaMemcpy2DAsync(dst, width, src, static_cast<size_t>(pitch), width, rows, cudaMemcpyHostToDevice, stream);
  };
  SLUICE_CUDA_RETURN_IF_ERROR(copy(y, host.y, host.y_stride, w, h));
  SLUICE_CUDA_RETURN_IF_ERROR(copy(u, host.u, host.uv_stride, nv12 ? 2 * cw : cw, ch));
  if (!nv12) SLUICE_CUDA_RETURN_IF_ERROR(copy(v, host.v, host.uv_stride, cw, ch));
  return dev;
}

Result<GpuClipExecutor::FrameKernels> GpuClipExecutor::UploadDescriptors(const ClipBatch& b,
                                                                         const std::vector<int>& group, int w, int h,
                                                                         Session* s, std::vector<Status>* status) {
  const size_t n = group.size(), frames = static_cast<size_t>(clips_->frames_per_clip());
  std::vector<SampleGeometry> geo(n);
  int64_t words = 0;
  for (size_t j = 0; j < n; ++j) {
    const int64_t index = b.samples[static_cast<size_t>(group[j])];
    const SampleKey key{options_.seed, static_cast<uint64_t>(b.epoch), static_cast<uint64_t>(index)};
    Status& st = (*status)[j];
    st = plan_.Draw(w, h, key, &geo[j]);
    if (st.ok() && (geo[j].num_segments != 1 || geo[j].warps[0].enabled))
      st = Unsupported("video clips on the GPU path: a transform list of more than one resampling pass");
    if (st.ok()) words += ResizeTapWords(geo[j].segments[0]);
  }
  const size_t descs = sizeof(GpuResizeSample) * n * frames;
  const size_t taps_at = (descs + 15) / 16 * 16;
  const size_t bytes = taps_at + sizeof(int32_t) * static_cast<size_t>(words);
  s->host.resize(bytes);
  auto* taps = reinterpret_cast<int32_t*>(s->host.data() + taps_at);
  FrameKernels k;
  k.tiles.assign(n, 0);
  int64_t offset = 0;
  for (size_t j = 0; j < n; ++j) {
    if (!(*status)[j].ok()) continue;
    const ResizeParams& p = geo[j].segments[0];
    GpuResizeSample d{};
    d.in_h = h;
    d.in_w = w;
    d.out_h = geo[j].out_height(0);
    d.out_w = geo[j].out_width(0);
    std::memcpy(d.fill, p.fill, sizeof(d.fill));
    SLUICE_RETURN_IF_ERROR(PackResizeTaps(p, offset, taps + offset, &s->scratch, &d));
    offset += ResizeTapWords(p);
    k.tiles[j] = ResizeTiles(d);
    auto* slot = static_cast<uint8_t*>(b.output->data) + clip_bytes_ * group[j];
    for (size_t f = 0; f < frames; ++f) {
      d.out = slot + frame_bytes_ * static_cast<int64_t>(f);
      std::memcpy(s->host.data() + sizeof(GpuResizeSample) * (j * frames + f), &d, sizeof(d));
    }
  }
  const cudaStream_t stream = s->stream.get();
  SLUICE_RETURN_IF_ERROR(Grow(&s->table, &s->table_bytes, bytes, stream));
  SLUICE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(s->table, s->host.data(), bytes, cudaMemcpyHostToDevice, stream));
  k.descs = reinterpret_cast<const GpuResizeSample*>(s->table);
  k.taps = reinterpret_cast<const int32_t*>(s->table + taps_at);
  return k;
}

std::vector<Status> GpuClipExecutor::RunGroup(ClipBatch& b, const std::vector<int>& group, Session* s) {
  std::vector<Status> status(group.size());
  auto fail_all = [&](const Status& st) { return std::vector<Status>(group.size(), st); };
  if (const cudaError_t e = cudaSetDevice(options_.device.index); e != cudaSuccess) return fail_all(CudaStatus(e, "cudaSetDevice"));
  const cudaStream_t stream = s->stream.get();
  if (const cudaError_t e = cudaStreamWaitEvent(stream, b.allocated, 0); e != cudaSuccess)
    return fail_all(CudaStatus(e, "cudaStreamWaitEvent"));
  const Clip first = clips_->ClipAt(b.samples[static_cast<size_t>(group[0])], options_.seed, b.epoch);
  const VideoIndex& video = clips_->index_of(static_cast<size_t>(first.video));
  const int w = video.width, h = video.height;
  Result<FrameKernels> kernels = UploadDescriptors(b, group, w, h, s, &status);
  if (!kernels.ok()) return fail_all(kernels.status());
  // The clips whose descriptors were made, decoded together.
  std::vector<size_t> live;
  std::vector<int64_t> indices;
  for (size_t j = 0; j < group.size(); ++j) {
    if (!status[j].ok()) continue;
    live.push_back(j);
    indices.push_back(b.samples[static_cast<size_t>(group[j])]);
  }
  const FrameKernels& fk = *kernels;
  const int frames = clips_->frames_per_clip();
  const ClipSource::Decoded decoded = clips_->DecodeClips(
      indices, options_.seed, b.epoch,
      [&](size_t jj, int k, const YuvView& frame) -> Status {
        if (b.cancelled.load(std::memory_order_relaxed)) return Cancelled("batch cancelled");
        if (frame.width != w || frame.height != h)
          return Unsupported("a frame of ", frame.width, "x", frame.height, " in a ", w, "x", h, " stream");
        const size_t j = live[jj];
        YuvView picture = frame;
        if (!frame.device) {
          SLUICE_ASSIGN_OR_RETURN(picture, Upload(frame, s));
        }
        SLUICE_CUDA_RETURN_IF_ERROR(LaunchYuvResizeFinish(picture, fk.descs + j * static_cast<size_t>(frames) + static_cast<size_t>(k), 1,
                                                          fk.tiles[j], fk.taps, gpu_finish_, stream));
        return Status::OK();
      },
      stream, &s->decoder);
  counters_.video_pictures.fetch_add(decoded.pictures, std::memory_order_relaxed);
  for (size_t jj = 0; jj < live.size(); ++jj) status[live[jj]] = decoded.status[jj];
  return status;
}

// Every group's work has finished (each session waited for its stream): the output is ready.
void GpuClipExecutor::Finish(ClipBatch& b) {
  cudaSetDevice(options_.device.index);
  cudaEvent_t ready = nullptr;
  if (cudaEventCreateWithFlags(&ready, cudaEventDisableTiming) == cudaSuccess) {
    cudaEventRecord(ready, b.stream);
    b.output->ready = ready;
  }
  MarkDone(b);
}

// Kept clips move down over failed ones (on the batch's stream, before the ready event again).
void GpuClipExecutor::Assemble(RingBatch& batch, const std::vector<int>& kept, Batch* out) {
  auto& b = static_cast<ClipBatch&>(batch);
  cudaSetDevice(options_.device.index);
  auto* base = static_cast<uint8_t*>(b.output->data);
  const int64_t n = static_cast<int64_t>(kept.size());
  bool moved = false;
  for (int64_t k = 0; k < n; ++k) {
    if (kept[static_cast<size_t>(k)] == k) continue;
    cudaMemcpyAsync(base + clip_bytes_ * k, base + clip_bytes_ * kept[static_cast<size_t>(k)],
                    static_cast<size_t>(clip_bytes_), cudaMemcpyDeviceToDevice, b.stream);
    moved = true;
  }
  if (moved && b.output->ready != nullptr) cudaEventRecord(b.output->ready, b.stream);
  const int64_t F = clips_->frames_per_clip(), H = plan_.out_height(), W = plan_.out_width();
  std::vector<int64_t> shape = options_.layout == Layout::kNCHW ? std::vector<int64_t>{n, F, 3, H, W}
                                                                  : std::vector<int64_t>{n, F, H, W, 3};
  auto sync = std::make_shared<BatchSync>(b.output);
  std::shared_ptr<void> owner(b.output, b.output->data);
  out->images = Tensor(owner, b.output->data, std::move(shape), options_.dtype, options_.device, sync);
}

void GpuClipExecutor::FillStats(LoaderStats* s) const {
  FillPoolStats(pool_->usage(), s);
}

}  // namespace

Result<std::unique_ptr<BatchWork>> CreateGpuClipExecutor(std::shared_ptr<const ClipSource> clips, const Plan& plan,
                                                         const LoaderOptions& options) {
  auto e = std::make_unique<GpuClipExecutor>(std::move(clips), plan, options);
  SLUICE_RETURN_IF_ERROR(e->Init());
  return std::unique_ptr<BatchWork>(std::move(e));
}

}  // namespace sluice
