#include "pipeline/executor.h"

#include <algorithm>
#include <cstring>

#include "core/clock.h"
#include "core/file_util.h"

namespace sluice {

struct Executor::InFlight {
  int64_t epoch = 0;
  int64_t index = 0;
  std::vector<int64_t> samples;    // dataset indices
  std::vector<uint8_t> padding;    // per sample: a repeat filling the last batch
  std::shared_ptr<uint8_t> images;  // pooled output buffer (fixed-size plans)
  std::vector<Tensor> outputs;     // one pooled tensor per sample (variable-size plans)
  std::vector<Status> status;      // per sample
  int remaining = 0;               // guarded by Executor::mu_
  std::atomic<bool> cancelled{false};
};

Executor::Executor(const Source& source, const Plan& plan, const LoaderOptions& options)
    : source_(source), plan_(plan), options_(options),
      processor_(plan, MakeFinishParams(plan, options.dtype, options.layout),
                 options.dct_scaling),
      skips_(source), pool_(HostPool::Create()) {
  if (plan.fixed_size())
    sample_bytes_ = static_cast<int64_t>(plan.out_height()) * plan.out_width() * 3 *
                    static_cast<int64_t>(DTypeSize(options.dtype));
  const int threads = *options.num_threads, io = *options.io_threads;
  for (int i = 0; i < threads; ++i) scratch_.push_back(std::make_unique<WorkerScratch>());
  io_pool_ = std::make_unique<ThreadPool>(io, "sluice-io");
  compute_pool_ = std::make_unique<ThreadPool>(threads, "sluice-cpu");
}

Executor::~Executor() {
  CancelAll();
  compute_pool_.reset();
  io_pool_.reset();
}

void Executor::CancelAll() {
  for (auto& b : in_flight_) b->cancelled.store(true, std::memory_order_relaxed);
  std::unique_lock<std::mutex> lock(mu_);
  for (auto& b : in_flight_) done_cv_.wait(lock, [&] { return b->remaining == 0; });
  lock.unlock();
  in_flight_.clear();
}

void Executor::StartEpoch(std::shared_ptr<const EpochSchedule> schedule, int64_t first_batch) {
  CancelAll();
  schedule_ = std::move(schedule);
  epoch_ = schedule_->epoch();
  next_schedule_ = first_batch;
  TopUp();
}

void Executor::TopUp() {
  while (static_cast<int>(in_flight_.size()) < *options_.prefetch && next_schedule_ < schedule_->num_batches())
    Schedule(next_schedule_++);
}

void Executor::Schedule(int64_t batch) {
  auto b = std::make_shared<InFlight>();
  b->epoch = epoch_;
  b->index = batch;
  schedule_->Batch(batch, &b->samples, &b->padding);
  const int n = static_cast<int>(b->samples.size());
  b->status.resize(static_cast<size_t>(n));
  b->remaining = n;
  if (!plan_.fixed_size()) {
    b->outputs.resize(static_cast<size_t>(n));
  } else if (!(b->images = pool_->Allocate(static_cast<size_t>(sample_bytes_ * n)))) {
    for (auto& s : b->status) s = ResourceExhausted("cannot allocate the output batch");
    b->remaining = 0;
    in_flight_.push_back(std::move(b));
    return;
  }
  in_flight_.push_back(b);
  for (int i = 0; i < n; ++i) {
    io_pool_->Submit([this, b, i](int) {
      if (b->cancelled.load(std::memory_order_relaxed)) return FinishSample(b);
      const std::string& path = source_.samples()[static_cast<size_t>(b->samples[static_cast<size_t>(i)])].path;
      Result<FileBytes> bytes = [&] {
        ScopedTimer timer(&counters_.read_ns);
        return ReadFile(path, *pool_);
      }();
      if (!bytes.ok()) {
        b->status[static_cast<size_t>(i)] = bytes.status();
        return FinishSample(b);
      }
      counters_.bytes_read.fetch_add(static_cast<int64_t>(bytes->size), std::memory_order_relaxed);
      compute_pool_->Submit([this, b, i, fb = std::move(bytes).value()](int worker) mutable {
        ProcessSample(b, i, std::move(fb), worker);
      });
    });
  }
}

void Executor::ProcessSample(const std::shared_ptr<InFlight>& b, int i, FileBytes bytes, int worker) {
  if (!b->cancelled.load(std::memory_order_relaxed)) {
    const int64_t index = b->samples[static_cast<size_t>(i)];
    auto slot = [&](int h, int w) -> Result<void*> {
      if (plan_.fixed_size()) {
        if (h != plan_.out_height() || w != plan_.out_width())
          return Internal("the plan produced ", w, "x", h, ", expected ", plan_.out_width(), "x",
                          plan_.out_height());
        return static_cast<void*>(b->images.get() + sample_bytes_ * i);
      }
      const size_t bytes_out = static_cast<size_t>(h) * w * 3 * DTypeSize(options_.dtype);
      std::shared_ptr<uint8_t> buf = pool_->Allocate(bytes_out);
      if (!buf) return ResourceExhausted("cannot allocate ", bytes_out, " bytes for the output");
      void* data = buf.get();
      std::vector<int64_t> shape = options_.layout == Layout::kNCHW ? std::vector<int64_t>{3, h, w}
                                                                      : std::vector<int64_t>{h, w, 3};
      b->outputs[static_cast<size_t>(i)] =
          Tensor(std::shared_ptr<void>(std::move(buf), data), data, std::move(shape), options_.dtype);
      return data;
    };
    Status s = processor_.Process(bytes.data, bytes.size,
                                  SampleKey{options_.seed, static_cast<uint64_t>(b->epoch),
                                            static_cast<uint64_t>(index)},
                                  scratch_[static_cast<size_t>(worker)].get(), slot, &counters_);
    if (!s.ok()) b->status[static_cast<size_t>(i)] = s.WithPrefix(source_.samples()[static_cast<size_t>(index)].path);
  }
  bytes.owner.reset();  // back to the pool before the batch can be observed as done
  FinishSample(b);
}

void Executor::FinishSample(const std::shared_ptr<InFlight>& b) {
  std::lock_guard<std::mutex> lock(mu_);
  if (--b->remaining == 0) done_cv_.notify_all();
}

Result<std::optional<Batch>> Executor::Next() {
  if (epoch_ < 0) return FailedPrecondition("Next() called before StartEpoch()");
  if (in_flight_.empty()) return std::optional<Batch>();
  std::shared_ptr<InFlight> b = in_flight_.front();
  {
    const int64_t t0 = NowNs();
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [&] { return b->remaining == 0; });
    counters_.wait_ns.fetch_add(NowNs() - t0, std::memory_order_relaxed);
  }
  in_flight_.pop_front();
  TopUp();

  const int n = static_cast<int>(b->samples.size());
  if (options_.on_error == OnError::kRaise) {
    for (int i = 0; i < n; ++i)
      if (!b->status[static_cast<size_t>(i)].ok()) return b->status[static_cast<size_t>(i)];
  }
  // Compact: good samples move down over skipped ones. A batch whose samples were all skipped
  // still comes, empty, so that every rank yields as many batches.
  int kept = 0;
  std::vector<int64_t> indices;
  std::vector<uint8_t> padding;
  std::vector<Tensor> outputs;
  indices.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    if (!b->status[static_cast<size_t>(i)].ok()) {
      skips_.Record(b->samples[static_cast<size_t>(i)], b->epoch, b->status[static_cast<size_t>(i)]);
      continue;
    }
    if (!plan_.fixed_size()) {
      outputs.push_back(std::move(b->outputs[static_cast<size_t>(i)]));
    } else if (kept != i) {
      std::memmove(b->images.get() + sample_bytes_ * kept, b->images.get() + sample_bytes_ * i,
                   static_cast<size_t>(sample_bytes_));
    }
    indices.push_back(b->samples[static_cast<size_t>(i)]);
    padding.push_back(b->padding[static_cast<size_t>(i)]);
    ++kept;
  }

  Batch out;
  out.epoch = b->epoch;
  out.index = b->index;
  if (plan_.fixed_size()) {
    const int64_t H = plan_.out_height(), W = plan_.out_width();
    std::vector<int64_t> shape = options_.layout == Layout::kNCHW
                                     ? std::vector<int64_t>{kept, 3, H, W}
                                     : std::vector<int64_t>{kept, H, W, 3};
    std::shared_ptr<uint8_t> images = std::move(b->images);
    void* data = images.get();
    out.images = Tensor(std::shared_ptr<void>(images, data), data, std::move(shape), options_.dtype);
  } else {
    out.image_list = TensorList(std::move(outputs));
  }
  return HandOut(std::move(out), source_, std::move(indices), std::move(padding), &counters_);
}

LoaderStats Executor::Stats() const {
  LoaderStats s;
  counters_.Fill(&s);
  s.num_threads = *options_.num_threads;
  s.io_threads = *options_.io_threads;
  const HostPool::Usage u = pool_->usage();
  s.host_memory_in_use = u.in_use_bytes;
  s.host_memory_peak = u.peak_bytes;
  skips_.Fill(&s);
  return s;
}

void Executor::ResetStats() {
  counters_.Reset();
  skips_.Reset();
}

}  // namespace sluice
