#include "pipeline/cpu/cpu_executor.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>

#include "core/clock.h"
#include "kernels/yuv/yuv_cpu.h"

namespace sluice {

struct CpuExecutor::CpuBatch : RingBatch {
  std::shared_ptr<uint8_t> images;  // pooled output buffer (fixed-size plans)
  std::vector<Tensor> outputs;      // one pooled tensor per sample (variable-size plans)
  std::atomic<int> remaining{0};    // samples not finished
  std::vector<std::vector<int>> groups;  // video clips: positions, by video (ClipSource::GroupByVideo)
};

CpuExecutor::CpuExecutor(std::shared_ptr<const Source> source, const Plan& plan, const LoaderOptions& options)
    : source_(std::move(source)), clips_(dynamic_cast<const ClipSource*>(source_.get())), plan_(plan),
      options_(options),
      processor_(plan, MakeFinishParams(plan, options.dtype, options.layout), options.dct_scaling),
      pool_(HostPool::Create()), scratch_gauge_(*options.num_threads) {
  if (plan.fixed_size()) {
    frame_bytes_ = static_cast<int64_t>(plan.out_height()) * plan.out_width() * 3 *
                   static_cast<int64_t>(DTypeSize(options.dtype));
    sample_bytes_ = frame_bytes_ * (clips_ != nullptr ? clips_->frames_per_clip() : 1);
  }
  for (int i = 0; i < *options.num_threads; ++i) scratch_.push_back(std::make_unique<WorkerScratch>());
}

Result<std::unique_ptr<CpuExecutor>> CpuExecutor::Create(std::shared_ptr<const Source> source, const Plan& plan,
                                                         const LoaderOptions& options, int io_max) {
  std::unique_ptr<CpuExecutor> e(new CpuExecutor(std::move(source), plan, options));
  if (e->clips_ != nullptr && !plan.fixed_size())
    return InvalidArgument("video clips need transforms that give every frame one size: end them with Resize((h, w)), "
                           "CenterCrop or RandomResizedCrop");
  SLUICE_ASSIGN_OR_RETURN(e->compute_pool_, ThreadPool::Create(*options.num_threads, "sluice-cpu"));
  SLUICE_ASSIGN_OR_RETURN(e->reader_, Reader::Create(e->source_, std::max(*options.io_threads, io_max),
                                                     options.max_file_bytes,
                                                     [pool = e->pool_](size_t n) { return pool->Allocate(n); },
                                                     &e->counters_));
  e->reader_->SetActive(*options.io_threads);
  return e;
}

bool CpuExecutor::OnOwnThread() const { return compute_pool_->OnWorkerThread() || reader_->OnOwnThread(); }

CpuExecutor::~CpuExecutor() {
  reader_.reset();
  compute_pool_.reset();
}

std::shared_ptr<RingBatch> CpuExecutor::NewBatch() { return std::make_shared<CpuBatch>(); }

void CpuExecutor::Start(const std::shared_ptr<RingBatch>& batch) {
  auto b = std::static_pointer_cast<CpuBatch>(batch);
  const int n = static_cast<int>(b->samples.size());
  b->remaining.store(n);
  if (!plan_.fixed_size()) {
    b->outputs.resize(static_cast<size_t>(n));
  } else if (!(b->images = pool_->Allocate(static_cast<size_t>(sample_bytes_ * n)))) {
    for (Status& s : b->status) s = ResourceExhausted("cannot allocate the output batch");
    return MarkDone(*b);
  }
  if (n == 0) return MarkDone(*b);
  if (clips_ != nullptr) {
    // Clips of one video together, in groups small enough that the batches in flight keep every
    // thread busy.
    const int in_flight = (*options_.prefetch + 1) * n, threads = *options_.num_threads;
    b->groups = clips_->GroupByVideo(b->samples, options_.seed, b->epoch, (in_flight + threads - 1) / threads);
    for (size_t g = 0; g < b->groups.size(); ++g)
      compute_pool_->Submit([this, b, g](int worker) { ProcessClips(b, g, worker); });
    return;
  }
  for (int i = 0; i < n; ++i) {
    reader_->Read(b->samples[static_cast<size_t>(i)], b->epoch, &b->cancelled,
                  [this, b, i](Result<SampleBytes> bytes, int) {
                    if (!bytes.ok()) {
                      if (bytes.status().code() != StatusCode::kCancelled)
                        b->status[static_cast<size_t>(i)] = bytes.status();
                      return FinishSample(*b);
                    }
                    compute_pool_->Submit([this, b, i, data = std::move(bytes).value()](int worker) mutable {
                      Process(b, i, std::move(data), worker);
                    });
                  });
  }
}

// Where sample i goes: its slot of the batch (fixed sizes), else a pooled tensor of its own.
Result<void*> CpuExecutor::Slot(CpuBatch& b, int i, int h, int w) {
  if (plan_.fixed_size()) {
    if (h != plan_.out_height() || w != plan_.out_width())
      return Internal("the plan produced ", w, "x", h, ", expected ", plan_.out_width(), "x", plan_.out_height());
    return static_cast<void*>(b.images.get() + sample_bytes_ * i);
  }
  const size_t bytes = static_cast<size_t>(h) * w * 3 * DTypeSize(options_.dtype);
  std::shared_ptr<uint8_t> buf = pool_->Allocate(bytes);
  if (!buf) return ResourceExhausted("cannot allocate ", bytes, " bytes for the output");
  void* data = buf.get();
  std::vector<int64_t> shape = options_.layout == Layout::kNCHW ? std::vector<int64_t>{3, h, w}
                                                                  : std::vector<int64_t>{h, w, 3};
  b.outputs[static_cast<size_t>(i)] = Tensor(std::shared_ptr<void>(std::move(buf), data), data, std::move(shape),
                                             options_.dtype);
  return data;
}

void CpuExecutor::Process(const std::shared_ptr<CpuBatch>& b, int i, SampleBytes bytes, int worker) {
  if (!b->cancelled.load(std::memory_order_relaxed)) {
    const int64_t index = b->samples[static_cast<size_t>(i)];
    const Status s = processor_.Process(
        bytes.data, bytes.size, SampleKey{options_.seed, static_cast<uint64_t>(b->epoch), static_cast<uint64_t>(index)},
        scratch_[static_cast<size_t>(worker)].get(), [&](int h, int w) { return Slot(*b, i, h, w); }, &counters_);
    if (!s.ok()) b->status[static_cast<size_t>(i)] = s.WithPrefix(source_->name(index));
    SettleScratch(scratch_[static_cast<size_t>(worker)].get(), worker, &scratch_gauge_);
  }
  bytes.owner.reset();  // back to the pool before the batch can be observed as done
  FinishSample(*b);
}

void CpuExecutor::ProcessClips(const std::shared_ptr<CpuBatch>& b, size_t g, int worker) {
  const std::vector<int>& group = b->groups[g];
  if (!b->cancelled.load(std::memory_order_relaxed)) {
    WorkerScratch* scratch = scratch_[static_cast<size_t>(worker)].get();
    const std::vector<Status> status = TransformClips(*b, group, scratch);
    for (size_t j = 0; j < group.size(); ++j) {
      const size_t i = static_cast<size_t>(group[j]);
      if (!status[j].ok()) b->status[i] = status[j].WithPrefix(source_->name(b->samples[i]));
    }
    SettleScratch(scratch, worker, &scratch_gauge_);
  }
  for (size_t j = 0; j < group.size(); ++j) FinishSample(*b);
}

std::vector<Status> CpuExecutor::TransformClips(CpuBatch& b, const std::vector<int>& group, WorkerScratch* scratch) {
  std::vector<int64_t> indices(group.size());
  for (size_t j = 0; j < group.size(); ++j) indices[j] = b.samples[static_cast<size_t>(group[j])];
  // Decoding is the time in DecodeClips less the time its frames spend being transformed.
  const int64_t start = NowNs(), cpu_start = ThreadCpuNs();
  int64_t inner = 0, inner_cpu = 0;
  ClipSource::Decoded decoded = clips_->DecodeClips(indices, options_.seed, b.epoch,
                                                   [&](size_t j, int k, const YuvView& frame) -> Status {
    if (b.cancelled.load(std::memory_order_relaxed)) return Cancelled("batch cancelled");
    scratch->decoded.resize(static_cast<size_t>(frame.width) * frame.height * 3);
    const MutableImageView rgb{scratch->decoded.data(), frame.height, frame.width, 3,
                               static_cast<ptrdiff_t>(frame.width) * 3};
    YuvToRgbCpu(frame, rgb);
    const int64_t t = NowNs(), c = ThreadCpuNs();
    const SampleKey key{options_.seed, static_cast<uint64_t>(b.epoch), static_cast<uint64_t>(indices[j])};
    uint8_t* const clip = b.images.get() + sample_bytes_ * group[j];
    const Status fs = processor_.ProcessPixels(
        rgb, key, scratch, [&](int h, int w) -> Result<void*> {
          if (h != plan_.out_height() || w != plan_.out_width())
            return Internal("the plan produced ", w, "x", h, ", expected ", plan_.out_width(), "x", plan_.out_height());
          return static_cast<void*>(clip + frame_bytes_ * k);
        },
        &counters_);
    inner += NowNs() - t;
    inner_cpu += ThreadCpuNs() - c;
    return fs;
  });
  counters_.decode_ns.fetch_add(NowNs() - start - inner, std::memory_order_relaxed);
  counters_.decode_cpu_ns.fetch_add(ThreadCpuNs() - cpu_start - inner_cpu, std::memory_order_relaxed);
  counters_.video_pictures.fetch_add(decoded.pictures, std::memory_order_relaxed);
  return std::move(decoded.status);
}

void CpuExecutor::FinishSample(CpuBatch& b) {
  if (b.remaining.fetch_sub(1) == 1) MarkDone(b);
}

// Good samples move down over failed ones.
void CpuExecutor::Assemble(RingBatch& batch, const std::vector<int>& kept, Batch* out) {
  auto& b = static_cast<CpuBatch&>(batch);
  const int64_t n = static_cast<int64_t>(kept.size());
  if (!plan_.fixed_size()) {
    std::vector<Tensor> outputs;
    for (int i : kept) outputs.push_back(std::move(b.outputs[static_cast<size_t>(i)]));
    out->image_list = TensorList(std::move(outputs));
    return;
  }
  for (int64_t k = 0; k < n; ++k)
    if (kept[static_cast<size_t>(k)] != k)
      std::memmove(b.images.get() + sample_bytes_ * k, b.images.get() + sample_bytes_ * kept[static_cast<size_t>(k)],
                   static_cast<size_t>(sample_bytes_));
  const int64_t H = plan_.out_height(), W = plan_.out_width();
  std::vector<int64_t> shape = options_.layout == Layout::kNCHW ? std::vector<int64_t>{n, 3, H, W}
                                                                  : std::vector<int64_t>{n, H, W, 3};
  if (clips_ != nullptr) shape.insert(shape.begin() + 1, clips_->frames_per_clip());  // (N, F, ...)
  std::shared_ptr<uint8_t> images = std::move(b.images);
  void* data = images.get();
  out->images = Tensor(std::shared_ptr<void>(images, data), data, std::move(shape), options_.dtype);
}

std::string CpuExecutor::Describe(const RingBatch& batch) const {
  return std::to_string(static_cast<const CpuBatch&>(batch).remaining.load()) + " samples pending";
}

void CpuExecutor::FillStats(LoaderStats* s) const {
  const HostPool::Usage u = pool_->usage();
  s->host_memory_in_use = u.in_use_bytes + scratch_gauge_.in_use();
  s->host_memory_peak = u.peak_bytes + scratch_gauge_.peak();
  s->host_memory_cached = u.cached_bytes;
}

}  // namespace sluice
