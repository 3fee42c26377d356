#include "pipeline/batch_ring.h"

#include <chrono>
#include <cstdio>
#include <utility>

#include "core/clock.h"
#include "core/nvtx.h"
#include "pipeline/batch_trace.h"

namespace sluice {

void BatchWork::MarkDone(RingBatch& batch) { ring_->MarkDone(batch); }

BatchRing::BatchRing(const Source& source, const LoaderOptions& options, BatchWork* work, LoadTuner::Scope tuning)
    : source_(source), options_(options), work_(work), skips_(source),
      tuner_({*options.num_threads, *options.prefetch, *options.io_threads}, tuning),
      prefetch_(*options.prefetch), active_threads_(*options.num_threads), active_io_(*options.io_threads) {
  work_->ring_ = this;
}

BatchRing::~BatchRing() {
  Cancel();
  work_->ring_ = nullptr;
}

void BatchRing::MarkDone(RingBatch& batch) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!batch.done) NvtxEnd(batch.nvtx_span);
  batch.done = true;
  done_cv_.notify_all();
}

void BatchRing::Cancel() {
  CancelUnless([](const RingBatch&) { return false; });
  ahead_next_ = 0;
}

void BatchRing::CancelUnless(const std::function<bool(const RingBatch&)>& keep) {
  std::vector<std::shared_ptr<RingBatch>> dropped;
  for (auto& b : in_flight_)
    if (!keep(*b)) {
      b->cancelled.store(true, std::memory_order_relaxed);
      dropped.push_back(b);
    }
  std::unique_lock<std::mutex> lock(mu_);
  for (auto& b : dropped) done_cv_.wait(lock, [&] { return b->done; });
  std::erase_if(in_flight_, [&](const std::shared_ptr<RingBatch>& b) { return !keep(*b); });
}

void BatchRing::Abort(const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!aborted_) aborted_ = why;
  for (auto& b : in_flight_) b->cancelled.store(true, std::memory_order_relaxed);
  done_cv_.notify_all();
}

void BatchRing::StartEpoch(std::shared_ptr<const EpochSchedule> schedule, int64_t first_batch) {
  const bool continued = schedule != nullptr && schedule == ahead_ && first_batch == 0;
  if (continued) {  // keep what started ahead (all of this epoch, its first batches in order)
    CancelUnless([epoch = schedule->epoch()](const RingBatch& b) { return b.epoch == epoch && b.ahead; });
  } else {
    Cancel();
  }
  work_->NewEpoch();
  tuner_.Interrupt(NowNs());
  schedule_ = std::move(schedule);
  epoch_ = schedule_->epoch();
  next_out_ = first_batch;
  next_ = continued ? ahead_next_ : first_batch;
  for (auto& b : in_flight_) b->ahead = false;
  ahead_.reset();
  ahead_next_ = 0;
  TopUp();
}

void BatchRing::ReadAhead(std::shared_ptr<const EpochSchedule> next) {
  if (next != ahead_) {  // a different expectation: what started for the old one goes
    CancelUnless([](const RingBatch& b) { return !b.ahead; });
    ahead_next_ = 0;
  }
  ahead_ = std::move(next);
  TopUp();
}

void BatchRing::TopUp() {
  while (static_cast<int>(in_flight_.size()) < prefetch_) {
    const bool current = next_ < schedule_->num_batches();
    if (!current && (ahead_ == nullptr || ahead_next_ >= ahead_->num_batches())) break;
    if (!in_flight_.empty() && !work_->Admit(in_flight_)) break;
    if (current) {
      Schedule(*schedule_, next_++);
    } else {
      Schedule(*ahead_, ahead_next_++);
    }
  }
}

void BatchRing::Schedule(const EpochSchedule& schedule, int64_t index) {
  std::shared_ptr<RingBatch> b = work_->NewBatch();
  b->epoch = schedule.epoch();
  b->index = index;
  b->sequence = sequence_++;
  b->ahead = &schedule != schedule_.get();
  schedule.Batch(index, &b->samples, &b->padding);
  b->status.resize(b->samples.size());
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (aborted_) return;
    b->nvtx_span = NvtxStart("sluice batch");
    in_flight_.push_back(b);
  }
  work_->Start(b);
}

// A batch that takes minutes means something is stuck (a decoder call that never returns, a file
// system that hangs): say where every batch in flight stands, now and then.
bool BatchRing::Wait(const RingBatch& batch, std::optional<std::chrono::milliseconds> wait, int64_t* waited_ns) {
  NvtxRange range("sluice wait");  // the consumer waiting for a batch
  const int64_t t0 = NowNs();
  const auto ready = [&] { return batch.done || aborted_.has_value(); };
  std::unique_lock<std::mutex> lock(mu_);
  if (wait) {
    done_cv_.wait_for(lock, *wait, ready);
  } else {
    int64_t waited = 0, next_report = BatchTrace::Enabled() ? 10 : 30;
    while (!done_cv_.wait_for(lock, std::chrono::seconds(10), ready)) {
      if ((waited += 10) < next_report) continue;
      ReportStall(waited);
      next_report *= 2;
    }
  }
  *waited_ns = NowNs() - t0;
  work_->counters().wait_ns.fetch_add(*waited_ns, std::memory_order_relaxed);
  return batch.done && !aborted_;
}

void BatchRing::ReportStall(int64_t waited_s) const {
  std::string out = "sluice: waited " + std::to_string(waited_s) + " s for a batch (ms since each was scheduled):\n";
  for (const auto& b : in_flight_)
    out += "  batch " + std::to_string(b->index) + " of epoch " + std::to_string(b->epoch) + (b->done ? ", done" : "") +
           ": " + work_->Describe(*b) + "\n";
  std::fputs(out.c_str(), stderr);
}

Result<std::optional<Batch>> BatchRing::Next(std::optional<std::chrono::milliseconds> wait) {
  if (epoch_ < 0) return FailedPrecondition("Next() called before StartEpoch()");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (aborted_) return FailedPrecondition(*aborted_);
  }
  if (in_flight_.empty() || in_flight_.front()->ahead) return std::optional<Batch>();  // the epoch's end
  std::shared_ptr<RingBatch> b = in_flight_.front();
  int64_t waited_ns = 0;
  if (!Wait(*b, wait, &waited_ns)) {
    std::lock_guard<std::mutex> lock(mu_);
    if (aborted_) return FailedPrecondition(*aborted_);
    return DeadlineExceeded("the next batch is not ready yet");
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    in_flight_.pop_front();
  }
  ++next_out_;
  work_->Taken(*b);
  Tune(waited_ns);
  TopUp();
  return HandOut(*b);
}

void BatchRing::Tune(int64_t waited_ns) {
  const LoadTuner::Setting s = tuner_.Record(NowNs(), waited_ns);
  if (s.threads != active_threads_ || s.io != active_io_)
    work_->SetActiveThreads(active_threads_ = s.threads, active_io_ = s.io);
  prefetch_ = s.prefetch;  // a smaller window lets the batches in flight finish
}

// The batch's samples under on_error. A batch whose samples were all skipped still comes, empty,
// so that every rank yields as many batches.
Result<std::optional<Batch>> BatchRing::HandOut(RingBatch& b) {
  if (!b.batch_status.ok()) return b.batch_status;
  std::vector<int> kept;
  for (size_t i = 0; i < b.samples.size(); ++i) {
    if (b.status[i].ok()) {
      kept.push_back(static_cast<int>(i));
    } else if (options_.on_error == OnError::kRaise) {
      return b.status[i];
    }
  }
  for (size_t i = 0; i < b.samples.size(); ++i)
    if (!b.status[i].ok()) skips_.Record(b.samples[i], b.epoch, b.status[i]);
  Batch out;
  out.epoch = b.epoch;
  out.index = b.index;
  work_->Assemble(b, kept, &out);
  out.labels = Tensor::Empty({static_cast<int64_t>(kept.size())}, DType::kInt64);
  int64_t* labels = out.labels.data_as<int64_t>();
  for (size_t k = 0; k < kept.size(); ++k) {
    const size_t i = static_cast<size_t>(kept[k]);
    labels[k] = source_.label(b.samples[i]);
    out.indices.push_back(b.samples[i]);
    out.padding.push_back(b.padding[i]);
  }
  StageCounters& c = work_->counters();
  c.samples.fetch_add(static_cast<int64_t>(kept.size()), std::memory_order_relaxed);
  c.batches.fetch_add(1, std::memory_order_relaxed);
  return std::optional<Batch>(std::move(out));
}

LoaderStats BatchRing::Stats() const {
  LoaderStats s;
  work_->counters().Fill(&s);
  const LoadTuner::Setting tuned = tuner_.setting();
  s.num_threads = tuned.threads;
  s.prefetch = tuned.prefetch;
  s.io_threads = tuned.io;
  s.tuning = tuner_.why();
  s.tuning_settled = tuner_.settled();
  work_->FillStats(&s);
  skips_.Fill(&s);
  return s;
}

void BatchRing::ResetStats() {
  work_->counters().Reset();
  work_->ResetStats();
  skips_.Reset();
}

}  // namespace sluice
