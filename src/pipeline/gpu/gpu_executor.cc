#include "pipeline/gpu/gpu_executor.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "codec/jpeg_cpu.h"
#include "core/env_knob.h"
#include "core/spaced.h"
#include "core/thread_nice.h"
#include "core/thread_pool.h"
#include "gpu/device.h"
#include "gpu/host_wait.h"
#include "io/reader.h"
#include "pipeline/gpu/admission.h"
#include "pipeline/gpu/batch_layout.h"
#include "pipeline/gpu/batch_sync.h"
#include "pipeline/gpu/decoders.h"
#include "pipeline/gpu/engine_jobs.h"
#include "pipeline/gpu/engine_times.h"
#include "pipeline/gpu/finish_lut.h"
#include "pipeline/gpu/gather_queue.h"
#include "pipeline/gpu/host_buffers.h"
#include "pipeline/gpu/launch.h"
#include "pipeline/gpu/pool_stats.h"
#include "pipeline/gpu/route_assignment.h"
#include "pipeline/gpu/route_scheduler.h"
#include "pipeline/load_tuner.h"
#include "pipeline/sample_processor.h"

namespace sluice {

namespace {

constexpr int kDecodeNice = 5;  // the CPU-side decoders' nice level while the engines are fed

using BatchPtr = std::shared_ptr<GpuBatch>;

class GpuExecutor : public BatchWork {
 public:
  GpuExecutor(std::shared_ptr<const Source> source, const Plan& plan, const LoaderOptions& options, int io_max)
      : source_(std::move(source)), plan_(plan), options_(options), io_max_(std::max(io_max, *options.io_threads)),
        finish_(MakeFinishParams(plan, options.dtype, options.layout)),
        processor_(plan, finish_, options.dct_scaling) {}
  ~GpuExecutor() override;

  Status Init();
  std::shared_ptr<RingBatch> NewBatch() override { return std::make_shared<GpuBatch>(); }
  void NewEpoch() override;
  void Start(const std::shared_ptr<RingBatch>& batch) override;
  bool Admit(const std::deque<std::shared_ptr<RingBatch>>& in_flight) override;
  void Assemble(RingBatch& batch, const std::vector<int>& kept, Batch* out) override;
  std::string Describe(const RingBatch& batch) const override;
  void Taken(RingBatch& batch) override;
  void FillStats(LoaderStats* stats) const override;
  void ResetStats() override;
  bool OnOwnThread() const override {
    return compute_pool_->OnWorkerThread() || hw_pool_->OnWorkerThread() || reader_->OnOwnThread();
  }
  // The tuner's I/O threads; the compute threads stay all (the route scheduler sizes their share).
  void SetActiveThreads(int /*compute*/, int io) override { reader_->SetActive(io); }

 private:
  Status InitFinish();
  void PinNearGpu(int dev, int threads);
  void Prepare(const BatchPtr& b, int i, Result<SampleBytes> bytes, int io_thread);
  void PlanBatch(const BatchPtr& b, int io_thread);
  Status SizeAndAllocate(GpuBatch* b);
  void DecodeOnEngines(std::vector<EngineJob> jobs, int engine_thread);
  void AfterEngines(const BatchPtr& b, const std::vector<int>& fallback, int engine_thread);
  void DecodeCpuSide(const BatchPtr& b, int i, int worker);
  void Done(const BatchPtr& b, int count);
  void Launch(const BatchPtr& b);
  std::string NameOf(const GpuBatch& b, int i) const { return source_->name(b.samples[static_cast<size_t>(i)]); }

  std::shared_ptr<const Source> source_;
  const Plan& plan_;
  LoaderOptions options_;
  const int io_max_;  // the I/O threads made; the tuner may use up to this many
  FinishParams finish_;
  SampleProcessor processor_;
  std::unique_ptr<RouteScheduler> scheduler_;
  int64_t sample_bytes_ = 0;
  std::atomic<int64_t> batch_estimate_{0};  // device bytes one batch takes (largest seen)
  // Engine calls that gather several batches' samples, up to this many (0: a batch's own calls).
  // An experiment, off until measured: SLUICE_ENGINE_GATHER (issue 21).
  int gather_ = 0;
  GatherQueue<EngineJob> engine_jobs_;
  // The pools' sweep as an epoch starts: at most once per SLUICE_SWEEP_MS (an experiment, 0).
  Spaced sweeps_{static_cast<int64_t>(EnvKnob("SLUICE_SWEEP_MS", 0) * 1e6)};

  std::shared_ptr<DevicePool> pool_;
  HostBuffers host_;
  std::unique_ptr<GpuDecoders> decoders_;
  std::vector<std::unique_ptr<CudaStream>> streams_;
  uint8_t* lut_dev_ = nullptr;
  size_t lut_bytes_ = 0;
  int pinned_cpus_ = 0;  // the CPUs near the GPU its threads are kept on; 0: not kept
  GpuFinish gpu_finish_;
  BatchTrace trace_;
  std::atomic<int64_t> route_samples_[kNumRoutes] = {};
  std::atomic<int64_t> route_pixels_[kNumRoutes] = {};  // of the samples' files
  EngineTimes engine_times_;  // since the last ResetStats

  std::vector<std::unique_ptr<ImageDecoder>> io_decoders_;
  std::vector<ResizeScratch> io_scratch_;  // per I/O thread (PackEarly)
  std::vector<std::unique_ptr<WorkerScratch>> scratch_;
  std::unique_ptr<ScratchGauge> scratch_gauge_;

  // Threads are joined in the reverse order of who submits to whom: the reader (its last read of
  // a batch plans it and submits its decodes), then the engine threads (their rejects go to the
  // compute threads), then the compute threads. Declared in the opposite order.
  std::unique_ptr<ThreadPool> compute_pool_;
  std::unique_ptr<ThreadPool> hw_pool_;
  std::unique_ptr<Reader> reader_;
};

Status GpuExecutor::Init() {
  const int dev = options_.device.index;
  SLUICE_RETURN_IF_ERROR(CheckCudaDevice(dev));
  SLUICE_CUDA_RETURN_IF_ERROR(cudaSetDevice(dev));
  SLUICE_RETURN_IF_ERROR(PreferBlockingWaits());
  if (plan_.fixed_size())
    sample_bytes_ = static_cast<int64_t>(plan_.out_height()) * plan_.out_width() * 3 *
                    static_cast<int64_t>(DTypeSize(options_.dtype));
  const int io = *options_.io_threads, threads = *options_.num_threads;
  SLUICE_ASSIGN_OR_RETURN(pool_, DevicePool::Create(dev, options_.gpu_memory_budget));
  host_ = HostBuffers::Create();
  SLUICE_ASSIGN_OR_RETURN(decoders_, GpuDecoders::Create(pool_.get(), options_.decode_route, threads));
  const bool hw = decoders_->has_hardware();
  scheduler_ = std::make_unique<RouteScheduler>(hw, decoders_->has_hybrid(), threads, options_.batch_size);
  // Streams for the batches in flight, and for a deeper prefetch the tuner may try.
  for (int i = 0; i < *options_.prefetch + 1 + LoadTuner::kPrefetchStep; ++i) {
    streams_.push_back(std::make_unique<CudaStream>());
    SLUICE_RETURN_IF_ERROR(streams_.back()->Create());
  }
  SLUICE_RETURN_IF_ERROR(InitFinish());
  batch_estimate_.store(2 * (sample_bytes_ > 0 ? sample_bytes_ : 1 << 20) * options_.batch_size);
  for (int i = 0; i < io_max_; ++i) io_decoders_.push_back(std::make_unique<ImageDecoder>());
  io_scratch_.resize(static_cast<size_t>(io_max_));
  for (int i = 0; i < threads; ++i) scratch_.push_back(std::make_unique<WorkerScratch>());
  scratch_gauge_ = std::make_unique<ScratchGauge>(threads);
  SLUICE_ASSIGN_OR_RETURN(compute_pool_, ThreadPool::Create(threads, "sluice-cpu"));
  SLUICE_ASSIGN_OR_RETURN(hw_pool_, ThreadPool::Create(GpuDecoders::kEngineThreads, "sluice-nvjpeg"));
  static const int gather = std::max(0, static_cast<int>(EnvKnob("SLUICE_ENGINE_GATHER", 0)));
  gather_ = gather;
  SLUICE_ASSIGN_OR_RETURN(
      reader_, Reader::Create(source_, io_max_, options_.max_file_bytes, [files = host_.files](size_t n) { return files->Allocate(n); }, &counters_));
  reader_->SetActive(io);
  PinNearGpu(dev, threads);
  return Status::OK();
}

// The loader's threads run on the CPUs near the GPU (its NUMA node) when this process may use
// others too, as a NUMA-aware launcher would place them: on a machine of several GPUs and
// sockets, threads that drift to the far socket read and feed the GPU across the interconnect.
// SLUICE_GPU_AFFINITY=0 leaves them where the system puts them.
void GpuExecutor::PinNearGpu(int dev, int threads) {
  static const bool pin = EnvKnob("SLUICE_GPU_AFFINITY", 1) != 0;
  const std::vector<int> near = pin ? GpuLocalCpus(dev, threads) : std::vector<int>();
  if (near.empty()) return;
  if (compute_pool_->PinTo(near) && hw_pool_->PinTo(near) && reader_->PinTo(near))
    pinned_cpus_ = static_cast<int>(near.size());
}

// The finish step's lookup tables, once, on the device.
Status GpuExecutor::InitFinish() {
  SLUICE_ASSIGN_OR_RETURN(const DeviceFinishLut lut, UploadFinishLut(finish_, pool_.get(), streams_[0]->get()));
  lut_dev_ = lut.data;
  lut_bytes_ = lut.bytes;
  gpu_finish_ = lut.finish;
  return Status::OK();
}

GpuExecutor::~GpuExecutor() {
  if (BatchTrace::Enabled()) std::fputs(trace_.Summary().c_str(), stderr);
  reader_.reset();
  hw_pool_.reset();
  compute_pool_.reset();
  if (pool_ == nullptr) return;
  cudaSetDevice(options_.device.index);
  for (auto& s : streams_) cudaStreamSynchronize(s->get());
  if (lut_dev_ != nullptr) pool_->Free(lut_dev_, lut_bytes_, nullptr);
  decoders_.reset();  // waits for the engine streams, whose callbacks use the scheduler
}

// Admit a batch only while the budget has room for it (admission.h).
bool GpuExecutor::Admit(const std::deque<std::shared_ptr<RingBatch>>& in_flight) {
  InFlightMemory m;
  for (const auto& r : in_flight) {
    const auto& b = static_cast<const GpuBatch&>(*r);
    if (b.sized.load())
      m.at_launch += b.at_launch.load();
    else
      ++m.unsized;
  }
  return AdmitsAnother(pool_->usage().in_use_bytes, m, batch_estimate_.load(), pool_->budget());
}

void GpuExecutor::Start(const std::shared_ptr<RingBatch>& batch) {
  BatchPtr b = std::static_pointer_cast<GpuBatch>(batch);
  b->stream = streams_[static_cast<size_t>(b->sequence) % streams_.size()]->get();
  const int n = static_cast<int>(b->samples.size());
  b->gpu.resize(static_cast<size_t>(n));
  b->pending.store(n);
  b->timing->Mark(BatchTrace::kScheduled);
  if (n == 0) return PlanBatch(b, -1);
  for (int i = 0; i < n; ++i)
    reader_->Read(b->samples[static_cast<size_t>(i)], b->epoch, &b->cancelled,
                  [this, b, i](Result<SampleBytes> bytes, int io_thread) {
                    Prepare(b, i, std::move(bytes), io_thread);
                  });
}

// On the I/O thread: the header and the geometry.
void GpuExecutor::Prepare(const BatchPtr& b, int i, Result<SampleBytes> bytes, int io_thread) {
  GpuSample& s = b->gpu[static_cast<size_t>(i)];
  Status& status = b->status[static_cast<size_t>(i)];
  if (!bytes.ok()) {
    if (bytes.status().code() != StatusCode::kCancelled) status = bytes.status();
  } else {
    s.bytes = std::move(bytes).value();
    StageTimer timer(&counters_, Stage::kDecode);
    const int64_t index = b->samples[static_cast<size_t>(i)];
    const Status st = processor_.Prepare(s.bytes.data, s.bytes.size,
                                         SampleKey{options_.seed, static_cast<uint64_t>(b->epoch),
                                                   static_cast<uint64_t>(index)},
                                         io_decoders_[static_cast<size_t>(io_thread)].get(), &s.info, &s.geo);
    if (!st.ok()) status = st.WithPrefix(NameOf(*b, i));
    // Whether the bitstream looks whole: truncated or damaged files go to the CPU decoder, which
    // names the damage as the CPU path does (nvJPEG would decode them to grey or garbage without
    // a word). A scan of the whole file, so here, in parallel.
    if (st.ok() && s.info.format == ImageFormat::kJpeg && options_.decode_route != DecodeRoute::kCpu)
      s.intact = s.info.progressive ? JpegHasEndMarker(s.bytes.data, s.bytes.size) &&
                                          JpegScanCount(s.bytes.data, s.bytes.size) <= kMaxJpegScans
                                    : JpegScanLooksIntact(s.bytes.data, s.bytes.size);
  }
  if (b->pending.fetch_sub(1) == 1) PlanBatch(b, io_thread);
}

Status GpuExecutor::SizeAndAllocate(GpuBatch* b) {
  cudaSetDevice(options_.device.index);
  AssignRoutes(b, options_.decode_route, decoders_->engine_max_side(), decoders_->has_hybrid(), options_.dct_scaling,
               scheduler_.get());
  const int64_t estimate = LayOutBatch(b, plan_, options_.dtype, sample_bytes_);
  for (int64_t e = batch_estimate_.load(); estimate > e && !batch_estimate_.compare_exchange_weak(e, estimate);) {
  }
  b->at_launch.store(static_cast<int64_t>(b->mid_bytes) + b->out_bytes);
  return AllocateBatch(b, pool_.get(), host_.staging.get());
}

// After the last read: routes and memory, then the decodes, each route on its threads.
void GpuExecutor::PlanBatch(const BatchPtr& b, int io_thread) {
  if (b->cancelled.load(std::memory_order_relaxed)) return MarkDone(*b);
  b->timing->Mark(BatchTrace::kPrepared);
  b->batch_status = SizeAndAllocate(b.get());
  b->sized.store(true);
  if (!b->batch_status.ok()) return Launch(b);  // releases what was allocated
  std::vector<int> hw, cpu_side;
  for (size_t i = 0; i < b->gpu.size(); ++i)
    if (b->status[i].ok()) (b->gpu[i].route == DecodeRoute::kHardware ? hw : cpu_side).push_back(static_cast<int>(i));
  // The CPU side starts first: packing the engine samples here (small batches) delays only them.
  const bool pack_early = io_thread >= 0 && PackEarly(options_.batch_size);
  b->pending.store(2 + static_cast<int>(cpu_side.size()));  // + the engines' part; given back if none
  for (int i : cpu_side) compute_pool_->Submit([this, b, i](int worker) { DecodeCpuSide(b, i, worker); });
  if (pack_early)
    hw = PackBeforeEngines(b.get(), std::move(hw), &io_scratch_[static_cast<size_t>(io_thread)],
                           [this](const GpuBatch& g, int i) { return NameOf(g, i); });
  b->timing->Mark(BatchTrace::kPlanned);
  if (hw.empty()) Done(b, 1);  // no engine part
  if (!hw.empty() && gather_ > 0) {  // an engine thread takes this batch's samples with others queued
    const int images = static_cast<int>(hw.size());
    engine_jobs_.Push(EngineJob{b, std::move(hw)}, images);
    hw_pool_->Submit([this](int t) { DecodeOnEngines(engine_jobs_.Take(gather_), t); });
  } else if (!hw.empty()) {
    hw_pool_->Submit([this, job = EngineJob{b, std::move(hw)}](int t) mutable {
      std::vector<EngineJob> one;
      one.push_back(std::move(job));
      DecodeOnEngines(std::move(one), t);
    });
  }
  Done(b, 1);
}

// The engine calls of one batch's samples, or (gathering) of several batches' together.
void GpuExecutor::DecodeOnEngines(std::vector<EngineJob> jobs, int engine_thread) {
  cudaSetDevice(options_.device.index);
  std::vector<std::vector<int>> fallback;
  {
    StageTimer timer(&counters_, Stage::kDecode);
    fallback = DecodeEngineJobs(jobs, engine_thread, decoders_.get(), scheduler_.get(), engine_times_.counters(),
                                [this](const GpuBatch& b, int i) { return NameOf(b, i); });
  }
  for (size_t j = 0; j < jobs.size(); ++j) AfterEngines(jobs[j].b, fallback[j], engine_thread);
}

// The samples the engines rejected go to libjpeg-turbo; the engines' part of the batch is done.
void GpuExecutor::AfterEngines(const BatchPtr& b, const std::vector<int>& fallback, int engine_thread) {
  for (int i : fallback) {  // back to full-image coordinates, for libjpeg-turbo
    GpuSample& s = b->gpu[static_cast<size_t>(i)];
    s.route = DecodeRoute::kCpu;
    ShiftRegion(&s.geo.segments[0], -s.roi.x, -s.roi.y);
  }
  b->pending.fetch_add(static_cast<int>(fallback.size()));
  for (int i : fallback) compute_pool_->Submit([this, b, i](int worker) { DecodeCpuSide(b, i, worker); });
  if (b->used_hw && BatchTrace::Enabled()) MarkWhenEnginesFinish(b->timing, decoders_->engine_stream(engine_thread));
  Done(b, 1);
}

void GpuExecutor::DecodeCpuSide(const BatchPtr& b, int i, int worker) {
  GpuSample& s = b->gpu[static_cast<size_t>(i)];
  if (decoders_->has_hardware() && options_.decode_route == DecodeRoute::kAuto) {
    NiceThisThreadOnce(kDecodeNice);  // decode threads yield to the threads that feed the engines
  }
  if (!b->cancelled.load(std::memory_order_relaxed)) {
    cudaSetDevice(options_.device.index);
    WorkerScratch* w = scratch_[static_cast<size_t>(worker)].get();
    const int64_t t0 = NowNs();
    Status st;
    if (s.route == DecodeRoute::kHybrid) {
      StageTimer timer(&counters_, Stage::kDecode);
      st = decoders_->DecodeHybrid(worker, s, b->stream);
      if (!st.ok()) {  // unsupported or damaged: libjpeg-turbo decides, and names the reason
        s.route = DecodeRoute::kCpu;
        ShiftRegion(&s.geo.segments[0], -s.roi.x, -s.roi.y);
      }
    }
    if (s.route == DecodeRoute::kCpu)
      st = DecodeOnCpu(processor_, &s, w, host_.staging.get(), pool_.get(), b->stream, &counters_);
    if (st.ok()) st = PackSample(*b, &s, &w->resize);
    if (!st.ok()) b->status[static_cast<size_t>(i)] = st.WithPrefix(NameOf(*b, i));
    SettleScratch(w, worker, scratch_gauge_.get());
    const int64_t t1 = NowNs();
    scheduler_->RecordCpuSide(s.route, 1, static_cast<double>(t1 - t0) * 1e-9);
    std::atomic<int64_t>& done = b->timing->trace[BatchTrace::kCpuSideDone];  // the batch's last
    for (int64_t f = done.load(); t1 > f && !done.compare_exchange_weak(f, t1);) {
    }
  }
  Done(b, 1);
}

void GpuExecutor::Done(const BatchPtr& b, int count) {
  if (b->pending.fetch_sub(count) == count) Launch(b);
}

void GpuExecutor::Launch(const BatchPtr& b) {
  cudaSetDevice(options_.device.index);
  {
    StageTimer timer(&counters_, Stage::kCollate);
    b->timing->Mark(BatchTrace::kLaunched);
    std::vector<int> kept;
    for (size_t i = 0; i < b->gpu.size(); ++i)
      if (b->status[i].ok()) kept.push_back(static_cast<int>(i));
    const bool cancelled = b->cancelled.load(std::memory_order_relaxed);
    if (b->batch_status.ok() && !cancelled) b->batch_status = AllocateOutputs(b.get(), pool_.get());
    b->at_launch.store(0);
    const bool launch = b->batch_status.ok() && !cancelled && !kept.empty();
    if (launch) b->batch_status = EnqueueKernels(b.get(), kept, plan_, gpu_finish_, sample_bytes_);
    if (launch && b->batch_status.ok() && b->route_generation >= 0)  // cancelled ones are not timed
      scheduler_->RecordLaunch(b->route_generation, static_cast<int>(kept.size()), NowNs());
    ReleaseBatch(b.get(), pool_.get());
  }
  MarkDone(*b);
}

void GpuExecutor::Assemble(RingBatch& batch, const std::vector<int>& kept, Batch* out) {
  auto& b = static_cast<GpuBatch&>(batch);
  cudaSetDevice(options_.device.index);
  for (int i : kept) {  // counted as handed out: batches read ahead into the next epoch are not yet
    const GpuSample& s = b.gpu[static_cast<size_t>(i)];
    const int r = RouteIndex(s.route);
    route_samples_[r].fetch_add(1, std::memory_order_relaxed);
    route_pixels_[r].fetch_add(int64_t{s.info.width} * s.info.height, std::memory_order_relaxed);
  }
  HandOverOutput(b, kept, plan_, options_, out);
}

std::string GpuExecutor::Describe(const RingBatch& batch) const {
  const auto& b = static_cast<const GpuBatch&>(batch);
  return std::to_string(b.pending.load()) + " parts pending;" + BatchTrace::Describe(b.timing->trace);
}

void GpuExecutor::Taken(RingBatch& batch) {
  if (!BatchTrace::Enabled()) return;
  auto& b = static_cast<GpuBatch&>(batch);
  b.timing->Mark(BatchTrace::kTaken);
  trace_.Add(b.timing->trace);
}

void GpuExecutor::NewEpoch() {
  scheduler_->Interrupt();
  if (!sweeps_.Due(NowNs())) return;
  host_.Sweep();
  decoders_->SweepPinned();
  pool_->TrimCache();
}

void GpuExecutor::FillStats(LoaderStats* s) const {
  host_.FillStats(s);
  s->host_memory_in_use += scratch_gauge_->in_use();
  s->host_memory_peak += scratch_gauge_->peak();
  s->pinned_memory_peak += decoders_->pinned_peak();
  s->pinned_memory_held += decoders_->pinned_held();
  FillPoolStats(pool_->usage(), s);
  for (int r = 0; r < kNumRoutes; ++r) {
    s->route_samples[r] = route_samples_[r].load();
    s->route_pixels[r] = route_pixels_[r].load();
  }
  s->route_windows = scheduler_->windows();
  s->engine_state_inits = decoders_->engine_state_inits();
  s->engine_state_s = decoders_->engine_state_seconds();
  s->engine_calls = decoders_->engine_calls();
  s->engine_pads = decoders_->engine_pads();
  s->gpu_local_cpus = pinned_cpus_;
  engine_times_.Fill(*decoders_, s);
}

void GpuExecutor::ResetStats() {
  for (auto& r : route_samples_) r.store(0);
  for (auto& r : route_pixels_) r.store(0);
  engine_times_.Reset(*decoders_);
}

}  // namespace

Result<std::unique_ptr<BatchWork>> CreateGpuExecutor(std::shared_ptr<const Source> source, const Plan& plan,
                                                     const LoaderOptions& options, int io_max) {
  auto e = std::make_unique<GpuExecutor>(std::move(source), plan, options, io_max);
  SLUICE_RETURN_IF_ERROR(e->Init());
  return std::unique_ptr<BatchWork>(std::move(e));
}

}  // namespace sluice
