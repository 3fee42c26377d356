#include "pipeline/gpu_executor.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <vector>

#include "codec/jpeg_cpu.h"
#include "codec/nvjpeg_decoders.h"
#include "core/clock.h"
#include "core/file_util.h"
#include "core/host_pool.h"
#include "core/thread_pool.h"
#include "gpu/cuda_util.h"
#include "gpu/device.h"
#include "gpu/device_pool.h"
#include "gpu/pinned.h"
#include "kernels/color/color_gpu.h"
#include "kernels/filter/filter_gpu.h"
#include "kernels/resize/resize_gpu.h"
#include "kernels/warp/warp_gpu.h"
#include "pipeline/batch_trace.h"
#include "pipeline/route_scheduler.h"
#include "pipeline/sample_processor.h"
#include "pipeline/skip_log.h"
#include "pipeline/stage_counters.h"

namespace sluice {

namespace {

constexpr size_t kAlign = 256;
constexpr int kDecodeNice = 5;   // and the CPU-side decoders' nice level there
size_t AlignUp(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

std::atomic<bool> g_skip_consumer_wait{false};

// The DeviceSync of one batch's output: the consumer's stream waits for the buffer's ready
// event, and the buffer's release follows that stream.
class BatchSync : public DeviceSync {
 public:
  explicit BatchSync(std::shared_ptr<DevicePool::SharedBuffer> buffer) : buffer_(std::move(buffer)) {}

  Status ConsumeOn(uintptr_t stream) override {
    const cudaStream_t s = DlpackStream(stream);
    if (!g_skip_consumer_wait.load(std::memory_order_relaxed))
      SLUICE_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(s, buffer_->ready, 0));
    buffer_->release_stream.store(s);
    return Status::OK();
  }

 private:
  std::shared_ptr<DevicePool::SharedBuffer> buffer_;
};

class GpuExecutor : public BatchExecutor {
 public:
  GpuExecutor(const Source& source, const Plan& plan, const LoaderOptions& options)
      : source_(source), plan_(plan), options_(options),
        finish_(MakeFinishParams(plan, options.dtype, options.layout)), processor_(plan, finish_, options.dct_scaling),
        skips_(source) {}
  ~GpuExecutor() override;

  Status Init();
  void StartEpoch(std::shared_ptr<const EpochSchedule> schedule, int64_t first_batch) override;
  Result<std::optional<Batch>> Next() override;
  LoaderStats Stats() const override;
  void ResetStats() override;

 private:
  struct Sample {
    int64_t index = 0;
    bool padding = false;        // a repeat filling the last batch
    FileBytes bytes;
    ImageInfo info;
    SampleGeometry geo;
    Status status;
    DecodeRoute route = DecodeRoute::kCpu;
    Rect roi;                    // hardware / hybrid: the region decoded (full resolution)
    uint8_t* region = nullptr;   // device pixels the kernel reads
    size_t region_bytes = 0;
    bool own_region = false;     // a separate allocation (CPU route), not in the arena
    bool intact = false;         // a JPEG whose bitstream looks whole (ReadAndPrepare checks)
    std::shared_ptr<uint8_t> staging;  // pinned upload buffer (CPU route)
    int64_t taps_off = 0;        // words into the tap table
    int64_t out_off = 0;         // variable-size outputs: byte offset in the output buffer
    int64_t mid_off = 0;         // colour steps: byte offset of its resampled RGB8 image in `mid`
    GpuResizeSample desc;        // out_h and out_w are the output's size in any case
    GpuWarpSample warp_desc;     // used instead of desc when the last segment warps
    bool warped = false;
  };
  struct InFlight {
    int64_t epoch = 0, index = 0;
    std::vector<Sample> samples;
    cudaStream_t stream = nullptr;
    std::atomic<int> pending{0};
    std::atomic<bool> cancelled{false};
    std::atomic<bool> sized{false};  // its memory is allocated (or failed): in the pool's usage
    Status status;               // the batch as a whole (memory, CUDA)
    uint8_t* arena = nullptr;
    size_t arena_bytes = 0;
    uint8_t* table_dev = nullptr;
    size_t table_bytes = 0, desc_bytes = 0;
    size_t color_off = 0;        // colour descriptors' offset in the table (has_color)
    size_t warp_off = 0;         // warp descriptors' offset in the table (has_warp)
    size_t erase_off = 0;        // erased rectangles' offset in the table (has_erase)
    size_t noise_off = 0;        // noise parameters' offset in the table (has_noise)
    size_t pass_off = 0;         // pixel passes: max_filters x (colour, filter) descriptors
    uint8_t* mid = nullptr;      // has_color: the resampled RGB8 images the colour kernel reads
    size_t mid_bytes = 0;        // with filters, two images per sample: [0, mid_half), [mid_half, ..)
    size_t mid_half = 0;
    std::shared_ptr<uint8_t> table_host;  // pinned: descriptors, then taps
    std::shared_ptr<DevicePool::SharedBuffer> output;
    cudaEvent_t alloc_ready = nullptr, hw_done = nullptr;
    bool used_hw = false;
    struct Timing {                           // for the scheduler (auto mode) and the trace;
      int64_t planned_ns = 0;                 // no CUDA objects, so a host callback may own it
      std::atomic<int64_t> hw_finished_ns{0};
      std::atomic<int64_t> cpu_finished_ns{0};
      std::atomic<int> parts{0};              // of the two, how many are known (see Timed)
      bool has_hw = false;
      BatchTrace::Times trace{};
      void Mark(BatchTrace::Point p) { trace[p].store(NowNs(), std::memory_order_relaxed); }
    };
    std::shared_ptr<Timing> timing = std::make_shared<Timing>();
    bool done = false;           // guarded by mu_
    ~InFlight() {
      if (alloc_ready != nullptr) cudaEventDestroy(alloc_ready);
      if (hw_done != nullptr) cudaEventDestroy(hw_done);
    }
  };
  using BatchPtr = std::shared_ptr<InFlight>;

  void TopUp();
  void Schedule(int64_t batch);
  void ReadAndPrepare(const BatchPtr& b, int i, int worker);
  void PlanBatch(const BatchPtr& b);
  Status AssignRoutesAndAllocate(const BatchPtr& b);
  void DecodeHardware(const BatchPtr& b, std::vector<int> members, int engine_thread);
  void DecodeCpuSide(const BatchPtr& b, int i, int worker);
  Status DecodeCpu(InFlight& b, Sample& s, WorkerScratch* w);
  Status PackSample(InFlight& b, Sample& s, ResizeScratch* scratch);
  void Done(const BatchPtr& b, int count);
  // Auto mode: called once when the batch's CPU side is done and once when its engine part is
  // (a host callback on the engine stream, so no thread waits for it); the second call tells the
  // scheduler which side finished later.
  void Timed(InFlight::Timing& t);
  void Launch(const BatchPtr& b);
  Status Enqueue(InFlight& b, const std::vector<int>& kept);
  void Release(InFlight& b);
  void MarkDone(const BatchPtr& b);
  void CancelAll();
  void ReportStall(int64_t waited_s) const;  // to stderr, with mu_ held
  const std::string& PathOf(const Sample& s) const {
    return source_.samples()[static_cast<size_t>(s.index)].path;
  }

  const Source& source_;
  const Plan& plan_;
  LoaderOptions options_;
  FinishParams finish_;
  SampleProcessor processor_;
  SkipLog skips_;
  std::unique_ptr<RouteScheduler> scheduler_;
  std::shared_ptr<const EpochSchedule> schedule_;
  int64_t sample_bytes_ = 0;
  std::atomic<int64_t> batch_estimate_{0};  // device bytes one batch takes (largest seen)

  std::shared_ptr<DevicePool> pool_;
  std::shared_ptr<HostPool> pinned_;
  std::shared_ptr<HostPool> host_;
  std::unique_ptr<NvjpegContext> nvjpeg_;
  // Two engine threads, each with its decoder state and stream. Their nvJPEG calls take turns
  // (NvjpegHardwareDecoder::Decode: concurrent calls can deadlock), but while one thread's call
  // runs, the other waits for its batch's memory and fills tap tables. Measured on (a): one
  // thread 14,700 images/s, two 17,300.
  static constexpr int kEngineThreads = 2;
  std::vector<std::unique_ptr<NvjpegHardwareDecoder>> hw_;
  std::vector<std::unique_ptr<CudaStream>> hw_streams_;
  std::unique_ptr<NvjpegHybridDecoder> hybrid_;
  std::vector<std::unique_ptr<CudaStream>> streams_;
  uint8_t* lut_dev_ = nullptr;
  size_t lut_bytes_ = 0;
  GpuFinish gpu_finish_;

  int64_t epoch_ = -1;
  int64_t next_schedule_ = 0;
  std::deque<BatchPtr> in_flight_;
  mutable std::mutex mu_;
  std::condition_variable done_cv_;
  StageCounters counters_;
  BatchTrace trace_;
  std::atomic<int64_t> route_samples_[kNumRoutes] = {};

  std::vector<std::unique_ptr<ImageDecoder>> io_decoders_;
  std::vector<std::unique_ptr<WorkerScratch>> scratch_;
  ResizeScratch hw_scratch_[kEngineThreads];  // the engine threads'

  // Declared last: destroyed first, so no task outlives the members it uses.
  std::unique_ptr<ThreadPool> hw_pool_;
  std::unique_ptr<ThreadPool> io_pool_;
  std::unique_ptr<ThreadPool> compute_pool_;
};

Status GpuExecutor::Init() {
  const int dev = options_.device.index;
  const DecodeRoute route = options_.decode_route;
  SLUICE_RETURN_IF_ERROR(CheckCudaDevice(dev));
  SLUICE_CUDA_RETURN_IF_ERROR(cudaSetDevice(dev));
  const int64_t bs = options_.batch_size;
  if (plan_.fixed_size())
    sample_bytes_ = static_cast<int64_t>(plan_.out_height()) * plan_.out_width() * 3 *
                    static_cast<int64_t>(DTypeSize(options_.dtype));
  const int io = *options_.io_threads, threads = *options_.num_threads;

  SLUICE_ASSIGN_OR_RETURN(pool_, DevicePool::Create(dev, options_.gpu_memory_budget));
  pinned_ = HostPool::Create(PinnedAllocator());
  host_ = HostPool::Create();

  if (route != DecodeRoute::kCpu) {
    Result<std::unique_ptr<NvjpegContext>> ctx = NvjpegContext::Create(pool_.get());
    if (ctx.ok()) {
      nvjpeg_ = std::move(ctx).value();
      if (route != DecodeRoute::kHybrid) {
        for (int t = 0; t < kEngineThreads; ++t) {
          Result<std::unique_ptr<NvjpegHardwareDecoder>> hw =
              NvjpegHardwareDecoder::Create(nvjpeg_.get());
          if (!hw.ok()) {
            hw_.clear();
            if (route == DecodeRoute::kHardware) return hw.status().WithPrefix("decode_route='hardware'");
            break;
          }
          hw_.push_back(std::move(hw).value());
          hw_streams_.push_back(std::make_unique<CudaStream>());
          SLUICE_RETURN_IF_ERROR(hw_streams_.back()->Create());
        }
      }
      SLUICE_ASSIGN_OR_RETURN(hybrid_, NvjpegHybridDecoder::Create(nvjpeg_.get(), threads));
    } else if (route != DecodeRoute::kAuto) {
      return ctx.status().WithPrefix(std::string("decode_route='") + DecodeRouteName(route) + "'");
    }
  }
  scheduler_ = std::make_unique<RouteScheduler>(threads, !hw_.empty(), hybrid_ != nullptr);

  for (int i = 0; i < *options_.prefetch + 1; ++i) {
    streams_.push_back(std::make_unique<CudaStream>());
    SLUICE_RETURN_IF_ERROR(streams_.back()->Create());
  }

  // The finish step's lookup tables, once.
  const FinishLut lut = FinishLut::Build(finish_);
  lut_bytes_ = sizeof(lut.f32) + sizeof(lut.f16);
  SLUICE_ASSIGN_OR_RETURN(void* lut_dev, pool_->Allocate(lut_bytes_, streams_[0]->get()));
  lut_dev_ = static_cast<uint8_t*>(lut_dev);
  SLUICE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(lut_dev_, lut.f32, sizeof(lut.f32), cudaMemcpyHostToDevice,
                                              streams_[0]->get()));
  SLUICE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(lut_dev_ + sizeof(lut.f32), lut.f16, sizeof(lut.f16),
                                              cudaMemcpyHostToDevice, streams_[0]->get()));
  SLUICE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(streams_[0]->get()));
  gpu_finish_ = GpuFinish{options_.dtype, options_.layout, reinterpret_cast<const float*>(lut_dev_),
                          reinterpret_cast<const uint16_t*>(lut_dev_ + sizeof(lut.f32))};
  batch_estimate_.store(2 * (sample_bytes_ > 0 ? sample_bytes_ : 1 << 20) * bs);

  for (int i = 0; i < io; ++i) io_decoders_.push_back(std::make_unique<ImageDecoder>());
  for (int i = 0; i < threads; ++i) scratch_.push_back(std::make_unique<WorkerScratch>());
  hw_pool_ = std::make_unique<ThreadPool>(kEngineThreads, "sluice-nvjpeg");
  io_pool_ = std::make_unique<ThreadPool>(io, "sluice-io");
  compute_pool_ = std::make_unique<ThreadPool>(threads, "sluice-cpu");
  return Status::OK();
}

GpuExecutor::~GpuExecutor() {
  CancelAll();
  if (BatchTrace::Enabled()) std::fputs(trace_.Summary().c_str(), stderr);
  compute_pool_.reset();
  io_pool_.reset();
  hw_pool_.reset();
  if (pool_ != nullptr) {
    cudaSetDevice(options_.device.index);
    for (auto& s : streams_) cudaStreamSynchronize(s->get());
    for (auto& s : hw_streams_) cudaStreamSynchronize(s->get());
    if (lut_dev_ != nullptr) pool_->Free(lut_dev_, lut_bytes_, nullptr);
  }
  hybrid_.reset();
  hw_.clear();
  nvjpeg_.reset();
}

void GpuExecutor::CancelAll() {
  for (auto& b : in_flight_) b->cancelled.store(true, std::memory_order_relaxed);
  std::unique_lock<std::mutex> lock(mu_);
  for (auto& b : in_flight_) done_cv_.wait(lock, [&] { return b->done; });
  lock.unlock();
  in_flight_.clear();
}

void GpuExecutor::StartEpoch(std::shared_ptr<const EpochSchedule> schedule, int64_t first_batch) {
  CancelAll();
  schedule_ = std::move(schedule);
  epoch_ = schedule_->epoch();
  next_schedule_ = first_batch;
  TopUp();
}

void GpuExecutor::TopUp() {
  while (static_cast<int>(in_flight_.size()) < *options_.prefetch && next_schedule_ < schedule_->num_batches()) {
    // Admit a batch only while the budget has room for it (unless nothing is in flight): the
    // pool's usage, plus an estimate (with a quarter of headroom, as batches vary) for this
    // batch and for each admitted batch that has not allocated yet.
    int64_t unsized = 1;
    for (const BatchPtr& b : in_flight_) unsized += b->sized.load() ? 0 : 1;
    if (!in_flight_.empty() &&
        pool_->usage().in_use_bytes + unsized * (batch_estimate_.load() * 5 / 4) > pool_->budget())
      break;
    Schedule(next_schedule_++);
  }
}

void GpuExecutor::Schedule(int64_t batch) {
  auto b = std::make_shared<InFlight>();
  b->epoch = epoch_;
  b->index = batch;
  b->stream = streams_[static_cast<size_t>(batch) % streams_.size()]->get();
  std::vector<int64_t> indices;
  std::vector<uint8_t> padding;
  schedule_->Batch(batch, &indices, &padding);
  const int n = static_cast<int>(indices.size());
  b->samples.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    b->samples[static_cast<size_t>(i)].index = indices[static_cast<size_t>(i)];
    b->samples[static_cast<size_t>(i)].padding = padding[static_cast<size_t>(i)] != 0;
  }
  b->pending.store(n);
  b->timing->Mark(BatchTrace::kScheduled);
  in_flight_.push_back(b);
  for (int i = 0; i < n; ++i) io_pool_->Submit([this, b, i](int worker) { ReadAndPrepare(b, i, worker); });
}

void GpuExecutor::ReadAndPrepare(const BatchPtr& b, int i, int worker) {
  Sample& s = b->samples[static_cast<size_t>(i)];
  if (!b->cancelled.load(std::memory_order_relaxed)) {
    Result<FileBytes> bytes = [&] {
      ScopedTimer timer(&counters_.read_ns);
      return ReadFile(PathOf(s), *host_);
    }();
    if (!bytes.ok()) {
      s.status = bytes.status();
    } else {
      counters_.bytes_read.fetch_add(static_cast<int64_t>(bytes->size), std::memory_order_relaxed);
      s.bytes = std::move(bytes).value();
      ScopedTimer timer(&counters_.decode_ns);
      const Status st = processor_.Prepare(
          s.bytes.data, s.bytes.size,
          SampleKey{options_.seed, static_cast<uint64_t>(b->epoch), static_cast<uint64_t>(s.index)},
          io_decoders_[static_cast<size_t>(worker)].get(), &s.info, &s.geo);
      if (!st.ok()) s.status = st.WithPrefix(PathOf(s));
      // Whether the bitstream looks whole: truncated or damaged files go to the CPU decoder,
      // which names the damage as the CPU path does (nvJPEG would decode them to grey or
      // garbage without a word). A scan of the whole file, so here, in parallel.
      if (st.ok() && s.info.format == ImageFormat::kJpeg && options_.decode_route != DecodeRoute::kCpu)
        s.intact = s.info.progressive ? JpegHasEndMarker(s.bytes.data, s.bytes.size)
                                      : JpegScanLooksIntact(s.bytes.data, s.bytes.size);
    }
  }
  if (b->pending.fetch_sub(1) == 1) PlanBatch(b);
}

Status GpuExecutor::AssignRoutesAndAllocate(const BatchPtr& bp) {
  InFlight& b = *bp;
  cudaSetDevice(options_.device.index);
  // Routes.
  std::vector<int> ok, hw_eligible;
  for (int i = 0; i < static_cast<int>(b.samples.size()); ++i) {
    Sample& s = b.samples[static_cast<size_t>(i)];
    if (!s.status.ok()) continue;
    ok.push_back(i);
    // One resampling pass, no rotation, and a bitstream that looks whole.
    const bool simple = s.geo.num_segments == 1 && s.info.orientation == 1 && s.intact;
    const bool hw = !hw_.empty() && simple && HardwareDecodable(s.info);
    const bool hy = hybrid_ != nullptr && simple && HybridDecodable(s.info);
    s.route = hy ? DecodeRoute::kHybrid : DecodeRoute::kCpu;
    if (hw) hw_eligible.push_back(i);
    if (options_.decode_route == DecodeRoute::kHardware && hw) s.route = DecodeRoute::kHardware;
    if (options_.decode_route == DecodeRoute::kCpu) s.route = DecodeRoute::kCpu;
  }
  if (options_.decode_route == DecodeRoute::kAuto) {
    const RouteScheduler::Split split =
        scheduler_->Plan(static_cast<int>(ok.size()), static_cast<int>(hw_eligible.size()));
    for (int k = 0; k < split.hardware; ++k) b.samples[static_cast<size_t>(hw_eligible[static_cast<size_t>(k)])].route = DecodeRoute::kHardware;
    const DecodeRoute other = split.cpu_side == DecodeRoute::kHybrid ? DecodeRoute::kCpu : DecodeRoute::kHybrid;
    int explore = split.explore;
    for (int i : ok) {
      Sample& s = b.samples[static_cast<size_t>(i)];
      if (s.route != DecodeRoute::kHybrid) continue;  // hybrid-decodable, not on the engines
      s.route = explore-- > 0 ? other : split.cpu_side;
    }
  }
  // Sizes: the arena of regions the nvJPEG routes decode into, the tap table, the output.
  int64_t taps_words = 0, out_bytes = 0;
  for (int i : ok) {
    Sample& s = b.samples[static_cast<size_t>(i)];
    if (s.route != DecodeRoute::kCpu) {
      s.roi = ReadRegion(s.geo.segments[0]);
      ShiftRegion(&s.geo.segments[0], s.roi.x, s.roi.y);
      s.region_bytes = static_cast<size_t>(s.roi.w) * s.roi.h * 3;
      s.region = reinterpret_cast<uint8_t*>(b.arena_bytes);  // offset until the arena exists
      b.arena_bytes += AlignUp(s.region_bytes);
    }
    const int last = s.geo.num_segments - 1;
    const size_t pixels = static_cast<size_t>(s.geo.out_width(last)) * static_cast<size_t>(s.geo.out_height(last));
    if (plan_.has_color()) {
      s.mid_off = static_cast<int64_t>(b.mid_bytes);
      b.mid_bytes += AlignUp(pixels * 3);
    }
    s.taps_off = taps_words;
    taps_words += ResizeTapWords(s.geo.segments[static_cast<size_t>(last)]);
    if (!plan_.fixed_size()) {
      s.out_off = out_bytes;
      out_bytes += static_cast<int64_t>(AlignUp(pixels * 3 * DTypeSize(options_.dtype)));
    }
  }
  if (plan_.fixed_size()) out_bytes = sample_bytes_ * static_cast<int64_t>(b.samples.size());
  b.desc_bytes = AlignUp(sizeof(GpuResizeSample) * b.samples.size());
  b.table_bytes = b.desc_bytes + static_cast<size_t>(taps_words) * sizeof(int32_t);
  if (plan_.has_color()) {
    b.color_off = AlignUp(b.table_bytes);
    b.table_bytes = b.color_off + sizeof(GpuColorSample) * b.samples.size();
  }
  if (plan_.has_warp()) {
    b.warp_off = AlignUp(b.table_bytes);
    b.table_bytes = b.warp_off + sizeof(GpuWarpSample) * b.samples.size();
  }
  if (plan_.has_erase()) {
    b.erase_off = AlignUp(b.table_bytes);
    b.table_bytes = b.erase_off + sizeof(EraseOps) * b.samples.size();
  }
  if (plan_.has_noise()) {
    b.noise_off = AlignUp(b.table_bytes);
    b.table_bytes = b.noise_off + sizeof(NoiseParams) * b.samples.size();
  }
  if (plan_.max_filters() > 0) {
    b.pass_off = AlignUp(b.table_bytes);
    b.table_bytes = b.pass_off + (sizeof(GpuColorSample) + sizeof(GpuFilterSample)) * b.samples.size() *
                                     static_cast<size_t>(plan_.max_filters());
    b.mid_half = b.mid_bytes;
    b.mid_bytes *= 2;  // the filters write the other image
  }
  int64_t estimate = static_cast<int64_t>(b.arena_bytes + b.table_bytes + b.mid_bytes) + out_bytes;
  for (int64_t e = batch_estimate_.load(); estimate > e && !batch_estimate_.compare_exchange_weak(e, estimate);) {
  }

  b.table_host = pinned_->Allocate(b.table_bytes);
  if (!b.table_host) return ResourceExhausted("cannot allocate ", b.table_bytes, " bytes of pinned memory");
  SLUICE_ASSIGN_OR_RETURN(void* table, pool_->Allocate(b.table_bytes, b.stream));
  b.table_dev = static_cast<uint8_t*>(table);
  if (b.arena_bytes > 0) {
    SLUICE_ASSIGN_OR_RETURN(void* arena, pool_->Allocate(b.arena_bytes, b.stream));
    b.arena = static_cast<uint8_t*>(arena);
  }
  if (b.mid_bytes > 0) {
    SLUICE_ASSIGN_OR_RETURN(void* mid, pool_->Allocate(b.mid_bytes, b.stream));
    b.mid = static_cast<uint8_t*>(mid);
  }
  SLUICE_ASSIGN_OR_RETURN(b.output, pool_->AllocateShared(static_cast<size_t>(std::max<int64_t>(out_bytes, 1)), b.stream));
  for (int i : ok) {
    Sample& s = b.samples[static_cast<size_t>(i)];
    if (s.route != DecodeRoute::kCpu) s.region = b.arena + reinterpret_cast<uintptr_t>(s.region);
  }
  SLUICE_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&b.alloc_ready, cudaEventDisableTiming));
  SLUICE_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&b.hw_done, cudaEventDisableTiming));
  SLUICE_CUDA_RETURN_IF_ERROR(cudaEventRecord(b.alloc_ready, b.stream));
  return Status::OK();
}

void GpuExecutor::PlanBatch(const BatchPtr& b) {
  if (b->cancelled.load(std::memory_order_relaxed)) return MarkDone(b);
  b->timing->Mark(BatchTrace::kPrepared);
  b->status = AssignRoutesAndAllocate(b);
  b->sized.store(true);
  if (!b->status.ok()) return Launch(b);  // releases what was allocated
  std::vector<int> hw, cpu_side;
  for (int i = 0; i < static_cast<int>(b->samples.size()); ++i) {
    const Sample& s = b->samples[static_cast<size_t>(i)];
    if (!s.status.ok()) continue;
    (s.route == DecodeRoute::kHardware ? hw : cpu_side).push_back(i);
  }
  b->timing->planned_ns = NowNs();
  b->timing->Mark(BatchTrace::kPlanned);
  b->timing->has_hw = !hw.empty();
  b->pending.store(1 + (hw.empty() ? 0 : 1) + static_cast<int>(cpu_side.size()));
  if (!hw.empty())
    hw_pool_->Submit([this, b, hw = std::move(hw)](int t) mutable { DecodeHardware(b, std::move(hw), t); });
  for (int i : cpu_side) compute_pool_->Submit([this, b, i](int worker) { DecodeCpuSide(b, i, worker); });
  Done(b, 1);
}

void GpuExecutor::DecodeHardware(const BatchPtr& b, std::vector<int> members, int engine_thread) {
  cudaSetDevice(options_.device.index);
  NvjpegHardwareDecoder& hw = *hw_[static_cast<size_t>(engine_thread)];
  const cudaStream_t stream = hw_streams_[static_cast<size_t>(engine_thread)]->get();
  std::vector<int> fallback;
  int decoded = 0;
  if (!b->cancelled.load(std::memory_order_relaxed)) {
    ScopedTimer timer(&counters_.decode_ns);
    b->timing->Mark(BatchTrace::kEngineStart);
    // The engines may write the arena when the call is made rather than in stream order (a
    // device-side wait did not hold them back in torchcodec PR 1634's measurements on the
    // H100), and the arena may be memory an earlier batch's kernel reads until the batch's
    // stream reaches the allocation. So the host waits for that point. We could not provoke
    // the race here (kernels delayed 20 ms gave identical batches without the wait), and the
    // wait costs nothing measurable: the point has almost always passed.
    const cudaError_t ready = cudaEventSynchronize(b->alloc_ready);
    if (ready != cudaSuccess) b->status = CudaStatus(ready, "cudaEventSynchronize");
    // Calls of equal size, each at most batch_width() images.
    const size_t width = static_cast<size_t>(hw.batch_width());
    const size_t calls = (members.size() + width - 1) / width;
    const size_t per_call = (members.size() + calls - 1) / calls;
    std::vector<NvjpegJob> jobs;
    for (size_t start = 0; start < members.size(); start += per_call) {
      const size_t end = std::min(members.size(), start + per_call);
      jobs.clear();
      for (size_t k = start; k < end; ++k) {
        Sample& s = b->samples[static_cast<size_t>(members[k])];
        jobs.push_back(NvjpegJob{s.bytes.data, s.bytes.size, s.roi, s.region, static_cast<size_t>(s.roi.w) * 3});
      }
      if (hw.Decode(jobs, stream).ok()) {
        for (size_t k = start; k < end; ++k) {
          Sample& s = b->samples[static_cast<size_t>(members[k])];
          const Status st = PackSample(*b, s, &hw_scratch_[engine_thread]);
          if (!st.ok()) s.status = st.WithPrefix(PathOf(s));
          ++decoded;
        }
      } else {  // the engines rejected a file of this chunk: decode the chunk another way
        for (size_t k = start; k < end; ++k) fallback.push_back(members[k]);
      }
    }
    b->timing->Mark(BatchTrace::kEngineHostEnd);
    const cudaError_t e = cudaEventRecord(b->hw_done, stream);
    if (e != cudaSuccess) b->status = CudaStatus(e, "cudaEventRecord");
    b->used_hw = true;
    route_samples_[RouteIndex(DecodeRoute::kHardware)].fetch_add(decoded, std::memory_order_relaxed);
  }
  for (int i : fallback) {
    Sample& s = b->samples[static_cast<size_t>(i)];
    s.route = DecodeRoute::kCpu;
    ShiftRegion(&s.geo.segments[0], -s.roi.x, -s.roi.y);  // back to full-image coordinates
  }
  b->pending.fetch_add(static_cast<int>(fallback.size()));
  for (int i : fallback) compute_pool_->Submit([this, b, i](int worker) { DecodeCpuSide(b, i, worker); });
  if (b->used_hw && (options_.decode_route == DecodeRoute::kAuto || BatchTrace::Enabled())) {
    // When the engines finish, for the scheduler, from a host callback: nothing waits for it.
    // (The destructor waits for the engine streams, so `this` outlives the callback.)
    using Hold = std::pair<GpuExecutor*, std::shared_ptr<InFlight::Timing>>;
    auto* hold = new Hold(this, b->timing);
    const cudaError_t cb = cudaLaunchHostFunc(
        stream,
        [](void* p) {
          auto* h = static_cast<Hold*>(p);
          h->second->hw_finished_ns.store(NowNs());
          h->second->Mark(BatchTrace::kEngineDone);
          h->first->Timed(*h->second);
          delete h;
        },
        hold);
    if (cb != cudaSuccess) {
      delete hold;
      Timed(*b->timing);
    }
  }
  Done(b, 1);
}

void GpuExecutor::DecodeCpuSide(const BatchPtr& b, int i, int worker) {
  Sample& s = b->samples[static_cast<size_t>(i)];
  if (!hw_.empty() && options_.decode_route == DecodeRoute::kAuto) {
    // Decode threads yield to the threads that feed the engines (a few nice levels lower).
    thread_local bool lowered = false;
    if (!lowered) {
      lowered = true;
      setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), kDecodeNice);
    }
  }
  if (!b->cancelled.load(std::memory_order_relaxed)) {
    cudaSetDevice(options_.device.index);
    WorkerScratch* w = scratch_[static_cast<size_t>(worker)].get();
    const int64_t t0 = NowNs();
    Status st;
    if (s.route == DecodeRoute::kHybrid) {
      ScopedTimer timer(&counters_.decode_ns);
      st = hybrid_->Decode(worker, NvjpegJob{s.bytes.data, s.bytes.size, s.roi, s.region,
                                             static_cast<size_t>(s.roi.w) * 3},
                           b->stream);
      if (!st.ok()) {  // unsupported or damaged: libjpeg-turbo decides, and names the reason
        s.route = DecodeRoute::kCpu;
        ShiftRegion(&s.geo.segments[0], -s.roi.x, -s.roi.y);
      }
    }
    if (s.route == DecodeRoute::kCpu) st = DecodeCpu(*b, s, w);
    if (st.ok()) st = PackSample(*b, s, &w->resize);
    if (!st.ok()) s.status = st.WithPrefix(PathOf(s));
    route_samples_[RouteIndex(s.route)].fetch_add(1, std::memory_order_relaxed);
    const int64_t t1 = NowNs();
    scheduler_->RecordCpuSide(s.route, 1, static_cast<double>(t1 - t0) * 1e-9);
    for (int64_t f = b->timing->cpu_finished_ns.load();
         t1 > f && !b->timing->cpu_finished_ns.compare_exchange_weak(f, t1);) {
    }
    b->timing->trace[BatchTrace::kCpuSideDone].store(b->timing->cpu_finished_ns.load());
  }
  Done(b, 1);
}

Status GpuExecutor::DecodeCpu(InFlight& b, Sample& s, WorkerScratch* w) {
  {
    Result<ImageInfo> header = w->decoder.ReadHeader(s.bytes.data, s.bytes.size);  // this decoder's turn
    if (!header.ok()) return header.status();
  }
  SLUICE_ASSIGN_OR_RETURN(const ImageView view,
                          processor_.DecodeRegion(s.info, &s.geo, s.geo.num_segments - 1, w, &counters_));
  ScopedTimer timer(&counters_.collate_ns);
  const size_t row = static_cast<size_t>(view.width) * 3;
  s.region_bytes = row * static_cast<size_t>(view.height);
  s.staging = pinned_->Allocate(s.region_bytes);
  if (!s.staging) return ResourceExhausted("cannot allocate ", s.region_bytes, " bytes of pinned memory");
  for (int y = 0; y < view.height; ++y) std::memcpy(s.staging.get() + row * static_cast<size_t>(y), view.row(y), row);
  SLUICE_ASSIGN_OR_RETURN(void* region, pool_->Allocate(s.region_bytes, b.stream));
  s.region = static_cast<uint8_t*>(region);
  s.own_region = true;
  s.roi = Rect{0, 0, view.width, view.height};
  SLUICE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(s.region, s.staging.get(), s.region_bytes,
                                              cudaMemcpyHostToDevice, b.stream));
  return Status::OK();
}

Status GpuExecutor::PackSample(InFlight& b, Sample& s, ResizeScratch* scratch) {
  const int last = s.geo.num_segments - 1;
  const ResizeParams& p = s.geo.segments[static_cast<size_t>(last)];
  const WarpParams& warp = s.geo.warps[static_cast<size_t>(last)];
  GpuResizeSample& d = s.desc;
  d.in = s.region;
  d.in_pitch = static_cast<int64_t>(s.roi.w) * 3;
  d.in_h = s.roi.h;
  d.in_w = s.roi.w;
  d.out_h = s.geo.out_height(last);
  d.out_w = s.geo.out_width(last);
  std::memcpy(d.fill, p.fill, sizeof(d.fill));
  int32_t* taps = reinterpret_cast<int32_t*>(b.table_host.get() + b.desc_bytes) + s.taps_off;
  s.warped = warp.enabled;
  if (!warp.enabled) return PackResizeTaps(p, s.taps_off, taps, scratch, &d);
  GpuWarpSample& wd = s.warp_desc;
  wd.in = d.in;
  wd.in_pitch = d.in_pitch;
  wd.in_h = d.in_h;
  wd.in_w = d.in_w;
  PackWarpSample(p, warp, s.taps_off, taps, scratch, &wd);
  return Status::OK();
}

void GpuExecutor::Done(const BatchPtr& b, int count) {
  if (b->pending.fetch_sub(count) == count) Launch(b);
}

void GpuExecutor::Timed(InFlight::Timing& t) {
  if (t.parts.fetch_add(1) + 1 != (t.has_hw ? 2 : 1)) return;
  const int64_t hw = t.hw_finished_ns.load(), cpu = t.cpu_finished_ns.load();
  scheduler_->RecordBatch(hw > 0 ? static_cast<double>(hw - t.planned_ns) * 1e-9 : -1,
                          cpu > 0 ? static_cast<double>(cpu - t.planned_ns) * 1e-9 : -1);
}

void GpuExecutor::Launch(const BatchPtr& b) {
  cudaSetDevice(options_.device.index);
  ScopedTimer timer(&counters_.collate_ns);
  b->timing->Mark(BatchTrace::kLaunched);
  std::vector<int> kept;
  for (int i = 0; i < static_cast<int>(b->samples.size()); ++i)
    if (b->samples[static_cast<size_t>(i)].status.ok()) kept.push_back(i);
  if (b->status.ok() && !b->cancelled.load(std::memory_order_relaxed) && !kept.empty())
    b->status = Enqueue(*b, kept);
  if (options_.decode_route == DecodeRoute::kAuto && b->timing->planned_ns > 0) Timed(*b->timing);
  Release(*b);
  MarkDone(b);
}

Status GpuExecutor::Enqueue(InFlight& b, const std::vector<int>& kept) {
  auto* descs = reinterpret_cast<GpuResizeSample*>(b.table_host.get());
  auto* colors = reinterpret_cast<GpuColorSample*>(b.table_host.get() + b.color_off);
  auto* warps = reinterpret_cast<GpuWarpSample*>(b.table_host.get() + b.warp_off);
  auto* erases = reinterpret_cast<EraseOps*>(b.table_host.get() + b.erase_off);
  auto* noises = reinterpret_cast<NoiseParams*>(b.table_host.get() + b.noise_off);
  // Pass k's descriptors: colour runs, then filters, n (= samples) of each per pass.
  const size_t n = b.samples.size();
  const int max_filters = plan_.max_filters();
  std::vector<GpuColorSample*> pass_colors(static_cast<size_t>(max_filters));
  std::vector<GpuFilterSample*> pass_filters(static_cast<size_t>(max_filters));
  std::vector<int> num_pass_colors(static_cast<size_t>(max_filters), 0), num_pass_filters(static_cast<size_t>(max_filters), 0);
  auto pass_color_dev = [&](size_t k) {
    return reinterpret_cast<const GpuColorSample*>(b.table_dev + b.pass_off) + k * n;
  };
  auto pass_filter_dev = [&](size_t k) {
    return reinterpret_cast<const GpuFilterSample*>(b.table_dev + b.pass_off + sizeof(GpuColorSample) * n *
                                                   static_cast<size_t>(max_filters)) + k * n;
  };
  for (size_t k = 0; k < pass_colors.size(); ++k) {
    pass_colors[k] = reinterpret_cast<GpuColorSample*>(b.table_host.get() + b.pass_off) + k * n;
    pass_filters[k] = reinterpret_cast<GpuFilterSample*>(b.table_host.get() + b.pass_off + sizeof(GpuColorSample) * n *
                                                         static_cast<size_t>(max_filters)) + k * n;
  }
  int64_t max_filter_pixels = 0;
  uint8_t* out = static_cast<uint8_t*>(b.output->data);
  const bool color = plan_.has_color();
  int max_tiles = 0, num_resized = 0, num_warped = 0;
  int64_t max_pixels = 0;
  for (size_t j = 0; j < kept.size(); ++j) {
    const Sample& s = b.samples[static_cast<size_t>(kept[j])];
    uint8_t* slot = out + (plan_.fixed_size() ? sample_bytes_ * static_cast<int64_t>(j) : s.out_off);
    void* dst = color ? b.mid + s.mid_off : slot;
    // Erasing and noise run in whichever kernel writes the finished sample.
    const EraseOps* erase = nullptr;
    if (plan_.has_erase()) {
      erases[j] = s.geo.erase;
      erase = reinterpret_cast<const EraseOps*>(b.table_dev + b.erase_off) + j;
    }
    const NoiseParams* noise = nullptr;
    if (plan_.has_noise() && s.geo.noise.enabled) {
      noises[j] = s.geo.noise;
      noise = reinterpret_cast<const NoiseParams*>(b.table_dev + b.noise_off) + j;
    }
    const int64_t pixels = static_cast<int64_t>(s.desc.out_h) * s.desc.out_w;
    if (s.warped) {
      GpuWarpSample& w = warps[num_warped++];
      w = s.warp_desc;
      w.out = dst;
      w.erase = color ? nullptr : erase;
      w.noise = color ? nullptr : noise;
      max_pixels = std::max(max_pixels, pixels);
    } else {
      GpuResizeSample& d = descs[num_resized++];
      d = s.desc;
      d.out = dst;
      d.erase = color ? nullptr : erase;
      d.noise = color ? nullptr : noise;
      max_tiles = std::max(max_tiles, ResizeTiles(d));
    }
    // Pixel passes: colour steps in place, then a filter into the sample's other image.
    uint8_t* cur = b.mid + s.mid_off;
    for (int k = 0; k < s.geo.passes.num; ++k) {
      const size_t pk = static_cast<size_t>(k);
      uint8_t* next = cur == b.mid + s.mid_off ? cur + b.mid_half : b.mid + s.mid_off;
      if (s.geo.passes.before[pk].num_steps > 0)
        pass_colors[pk][num_pass_colors[pk]++] =
            GpuColorSample{cur, cur, s.desc.out_h, s.desc.out_w, s.geo.passes.before[pk], nullptr, nullptr};
      GpuFilterSample& fd = pass_filters[pk][num_pass_filters[pk]++];
      fd.in = cur;
      fd.out = next;
      fd.h = s.desc.out_h;
      fd.w = s.desc.out_w;
      fd.step = s.geo.passes.filters[pk];
      max_filter_pixels = std::max(max_filter_pixels, pixels);
      cur = next;
    }
    if (color) colors[j] = GpuColorSample{cur, slot, s.desc.out_h, s.desc.out_w, s.geo.color, erase, noise};
  }
  SLUICE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(b.table_dev, b.table_host.get(), b.table_bytes,
                                              cudaMemcpyHostToDevice, b.stream));
  if (b.used_hw) SLUICE_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(b.stream, b.hw_done, 0));
  // One resampling kernel (two when some samples warp and others not), writing the finished
  // samples; with colour steps, RGB8 images that the colour + finish kernel then reads.
  const GpuFinish rgb8{DType::kUInt8, Layout::kNHWC, nullptr, nullptr};
  const auto* taps = reinterpret_cast<const int32_t*>(b.table_dev + b.desc_bytes);
  SLUICE_CUDA_RETURN_IF_ERROR(LaunchResizeFinish(reinterpret_cast<const GpuResizeSample*>(b.table_dev), num_resized,
                                                 max_tiles, taps, color ? rgb8 : gpu_finish_, b.stream));
  SLUICE_CUDA_RETURN_IF_ERROR(LaunchWarpFinish(reinterpret_cast<const GpuWarpSample*>(b.table_dev + b.warp_off),
                                               num_warped, max_pixels, taps, color ? rgb8 : gpu_finish_, b.stream));
  // The pixel passes, pass k over the samples that have it: colour steps in place, then a filter.
  for (size_t k = 0; k < pass_colors.size(); ++k) {
    SLUICE_CUDA_RETURN_IF_ERROR(LaunchColorFinish(pass_color_dev(k), num_pass_colors[k], rgb8, b.stream));
    SLUICE_CUDA_RETURN_IF_ERROR(LaunchFilter(pass_filter_dev(k), num_pass_filters[k], max_filter_pixels, b.stream));
  }
  if (color)
    SLUICE_CUDA_RETURN_IF_ERROR(LaunchColorFinish(reinterpret_cast<const GpuColorSample*>(b.table_dev + b.color_off),
                                                  static_cast<int>(kept.size()), gpu_finish_, b.stream));
  return Status::OK();
}

void GpuExecutor::Release(InFlight& b) {
  // The output's ready event (after the kernel, or after its allocation when nothing ran): the
  // buffer owns it; consumers wait on it, and an unclaimed buffer is freed after it.
  if (b.output != nullptr && b.output->ready == nullptr) {
    cudaEvent_t ready = nullptr;
    if (cudaEventCreateWithFlags(&ready, cudaEventDisableTiming) == cudaSuccess) {
      cudaEventRecord(ready, b.stream);
      b.output->ready = ready;
    } else {
      cudaStreamSynchronize(b.stream);
    }
  }
  // Everything the kernel reads goes back stream-ordered after it; host buffers once the stream
  // has passed this point (a host callback, which makes no CUDA calls).
  if (b.used_hw && b.hw_done != nullptr) cudaStreamWaitEvent(b.stream, b.hw_done, 0);
  if (b.table_dev != nullptr) pool_->Free(b.table_dev, b.table_bytes, b.stream);
  if (b.arena != nullptr) pool_->Free(b.arena, b.arena_bytes, b.stream);
  if (b.mid != nullptr) pool_->Free(b.mid, b.mid_bytes, b.stream);
  b.table_dev = b.arena = b.mid = nullptr;
  auto* keep = new std::vector<std::shared_ptr<uint8_t>>();
  if (b.table_host) keep->push_back(std::move(b.table_host));
  for (Sample& s : b.samples) {
    if (s.own_region) pool_->Free(s.region, s.region_bytes, b.stream);
    s.own_region = false;
    if (s.staging) keep->push_back(std::move(s.staging));
    if (s.bytes.owner) keep->push_back(std::move(s.bytes.owner));
  }
  const cudaError_t e = cudaLaunchHostFunc(
      b.stream, [](void* p) { delete static_cast<std::vector<std::shared_ptr<uint8_t>>*>(p); }, keep);
  if (e != cudaSuccess) {
    cudaStreamSynchronize(b.stream);
    delete keep;
  }
}

void GpuExecutor::ReportStall(int64_t waited_s) const {
  std::string out = "sluice: waited " + std::to_string(waited_s) + " s for a batch (ms since each was scheduled):\n";
  for (const BatchPtr& b : in_flight_)
    out += "  batch " + std::to_string(b->index) + " of epoch " + std::to_string(b->epoch) + ", " +
           std::to_string(b->pending.load()) + " parts pending" + (b->done ? ", done" : "") + ":" +
           BatchTrace::Describe(b->timing->trace) + "\n";
  std::fputs(out.c_str(), stderr);
}

void GpuExecutor::MarkDone(const BatchPtr& b) {
  std::lock_guard<std::mutex> lock(mu_);
  b->done = true;
  done_cv_.notify_all();
}

Result<std::optional<Batch>> GpuExecutor::Next() {
  if (epoch_ < 0) return FailedPrecondition("Next() called before StartEpoch()");
  cudaSetDevice(options_.device.index);
  if (in_flight_.empty()) return std::optional<Batch>();
  BatchPtr b = in_flight_.front();
  {
    const int64_t t0 = NowNs();
    std::unique_lock<std::mutex> lock(mu_);
    // A batch that takes minutes means something is stuck (an nvJPEG call that never returns,
    // a file system that hangs): say where every batch in flight stands, now and then.
    int64_t waited = 0, next_report = BatchTrace::Enabled() ? 10 : 30;
    while (!done_cv_.wait_for(lock, std::chrono::seconds(10), [&] { return b->done; })) {
      if ((waited += 10) < next_report) continue;
      ReportStall(waited);
      next_report *= 2;
    }
    counters_.wait_ns.fetch_add(NowNs() - t0, std::memory_order_relaxed);
  }
  in_flight_.pop_front();
  if (BatchTrace::Enabled()) {
    b->timing->Mark(BatchTrace::kTaken);
    trace_.Add(b->timing->trace);
  }
  TopUp();
  if (!b->status.ok()) return b->status;

  std::vector<int64_t> indices;
  std::vector<uint8_t> padding;
  std::vector<int> kept;
  for (int i = 0; i < static_cast<int>(b->samples.size()); ++i) {
    const Sample& s = b->samples[static_cast<size_t>(i)];
    if (!s.status.ok()) {
      if (options_.on_error == OnError::kRaise) return s.status;
      continue;
    }
    kept.push_back(i);
    indices.push_back(s.index);
    padding.push_back(s.padding ? 1 : 0);
  }
  for (const Sample& s : b->samples)
    if (!s.status.ok()) skips_.Record(s.index, b->epoch, s.status);
  // A batch whose samples were all skipped still comes, empty, so every rank yields as many.

  auto sync = std::make_shared<BatchSync>(b->output);
  std::shared_ptr<void> owner(b->output, b->output->data);
  const Device device = options_.device;
  const int64_t n = static_cast<int64_t>(kept.size());
  Batch out;
  out.epoch = b->epoch;
  out.index = b->index;
  if (plan_.fixed_size()) {
    const int64_t H = plan_.out_height(), W = plan_.out_width();
    std::vector<int64_t> shape = options_.layout == Layout::kNCHW ? std::vector<int64_t>{n, 3, H, W}
                                                                    : std::vector<int64_t>{n, H, W, 3};
    out.images = Tensor(owner, b->output->data, std::move(shape), options_.dtype, device, sync);
  } else {
    std::vector<Tensor> list;
    for (int i : kept) {
      const Sample& s = b->samples[static_cast<size_t>(i)];
      const int64_t h = s.desc.out_h, w = s.desc.out_w;
      std::vector<int64_t> shape = options_.layout == Layout::kNCHW ? std::vector<int64_t>{3, h, w}
                                                                      : std::vector<int64_t>{h, w, 3};
      list.emplace_back(owner, static_cast<uint8_t*>(b->output->data) + s.out_off, std::move(shape),
                        options_.dtype, device, sync);
    }
    out.image_list = TensorList(std::move(list));
  }
  return HandOut(std::move(out), source_, std::move(indices), std::move(padding), &counters_);
}

LoaderStats GpuExecutor::Stats() const {
  LoaderStats s;
  counters_.Fill(&s);
  s.num_threads = *options_.num_threads;
  s.io_threads = *options_.io_threads;
  const HostPool::Usage host = host_->usage();
  s.host_memory_in_use = host.in_use_bytes;
  s.host_memory_peak = host.peak_bytes;
  const DevicePool::Usage dev = pool_->usage();
  s.gpu_memory_in_use = dev.in_use_bytes;
  s.gpu_memory_peak = std::max(dev.peak_reserved_bytes, dev.peak_bytes);
  s.pinned_memory_peak = pinned_->usage().peak_bytes + (nvjpeg_ ? nvjpeg_->pinned_peak() : 0);
  for (int r = 0; r < kNumRoutes; ++r) s.route_samples[r] = route_samples_[r].load();
  skips_.Fill(&s);
  return s;
}

void GpuExecutor::ResetStats() {
  counters_.Reset();
  for (auto& r : route_samples_) r.store(0);
  skips_.Reset();
}

}  // namespace

Result<std::unique_ptr<BatchExecutor>> CreateGpuExecutor(const Source& source, const Plan& plan,
                                                         const LoaderOptions& options) {
  auto e = std::make_unique<GpuExecutor>(source, plan, options);
  SLUICE_RETURN_IF_ERROR(e->Init());
  return std::unique_ptr<BatchExecutor>(std::move(e));
}

void SetSkipConsumerWaitForTesting(bool skip) { g_skip_consumer_wait.store(skip); }

}  // namespace sluice
