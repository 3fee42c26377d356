#include "sluice/loader.h"

#include <optional>
#include <utility>
#include <vector>

#include "pipeline/batch_ring.h"
#include "pipeline/cpu/cpu_executor.h"
#include "pipeline/gpu/gpu_executor.h"
#include "pipeline/plan.h"
#include "pipeline/resolve_options.h"

namespace sluice {

class Loader::Impl {
 public:
  Impl(std::shared_ptr<const Source> source, Plan plan, LoaderOptions options)
      : source_(std::move(source)), plan_(std::move(plan)), options_(options),
        shard_{source_->size(), options.shuffle, options.seed, options.batch_size, options.last_batch,
               options.rank, options.world_size} {}

  Status Start() {
    // Epoch 0's schedule: checks rank, world size and policy before any work starts.
    SLUICE_ASSIGN_OR_RETURN(EpochSchedule first, EpochSchedule::Create(shard_, 0));
    full_batches_ = first.num_batches();
    schedule_ = std::make_shared<const EpochSchedule>(std::move(first));
    if (options_.device.type == DeviceType::kCUDA) {
      if (plan_.has_functions())
        return Unsupported("user functions (Lambda) run on the CPU: make this loader with device=cpu "
                           "and copy its batches to the GPU (the Python Loader does)");
      SLUICE_ASSIGN_OR_RETURN(executor_, CreateGpuExecutor(source_, plan_, options_));
    } else {
      executor_ = std::make_unique<CpuExecutor>(source_, plan_, options_);
    }
    ring_ = std::make_unique<BatchRing>(*source_, options_, executor_.get());
    return Status::OK();
  }

  // The ring first: it cancels the batches in flight and waits for them, while the executor's
  // threads and memory still exist.
  void Close() {
    ring_.reset();
    executor_.reset();
  }

  uint64_t Digest() {
    if (!digest_) digest_ = source_->Digest();
    return *digest_;
  }

  Status LoadState(const LoaderState& st);

  std::shared_ptr<const Source> source_;
  Plan plan_;
  LoaderOptions options_;
  ShardOptions shard_;
  int64_t full_batches_ = 0;                       // batches of an epoch that is not resumed
  std::shared_ptr<const EpochSchedule> schedule_;  // of the epoch last started (epoch 0 before)
  std::vector<uint8_t> resumed_from_;              // its consumed positions, when it is resumed
  bool started_ = false;
  int64_t position_ = 0;                           // batches of it taken (or skipped by a resume)
  struct Resume {
    std::shared_ptr<const EpochSchedule> schedule;
    int64_t first_batch = 0;
    std::vector<uint8_t> resumed_from;
  };
  std::optional<Resume> resume_;                   // from LoadState, for the next StartEpoch
  std::optional<uint64_t> digest_;
  std::unique_ptr<BatchWork> executor_;
  std::unique_ptr<BatchRing> ring_;  // over executor_
};

Status Loader::Impl::LoadState(const LoaderState& st) {
  const char* what = "load_state: ";
  if (st.num_samples != source_->size())
    return InvalidArgument(what, "the state is from a dataset of ", st.num_samples,
                           " samples; this loader's has ", source_->size());
  if (st.dataset_digest != Digest())
    return InvalidArgument(what, "the state is from another dataset: the same number of samples (",
                           st.num_samples, "), other files or labels");
  if (st.shuffle != shard_.shuffle)
    return InvalidArgument(what, "the state was taken with shuffle=", st.shuffle ? "true" : "false",
                           "; this loader has shuffle=", shard_.shuffle ? "true" : "false");
  if (st.seed != shard_.seed)
    return InvalidArgument(what, "the state was taken with seed ", st.seed, "; this loader has seed ",
                           shard_.seed, " (other augmentations, and another order when shuffling)");
  if (st.epoch < 0 || st.batches < 0 || st.batches > st.epoch_batches)
    return InvalidArgument(what, "malformed state: epoch ", st.epoch, ", ", st.batches, " of ",
                           st.epoch_batches, " batches taken");
  // The interrupted run's schedule, rebuilt: it says which positions were delivered.
  ShardOptions saved = shard_;
  saved.batch_size = st.batch_size;
  saved.world_size = st.world_size;
  saved.last_batch = st.last_batch;
  saved.rank = 0;
  Result<EpochSchedule> before = EpochSchedule::Create(saved, st.epoch, st.resumed_from);
  if (!before.ok()) return before.status().WithPrefix("load_state: malformed state");
  if (before->num_batches() != st.epoch_batches)
    return InvalidArgument(what, "malformed state: its settings give ", before->num_batches(),
                           " batches in epoch ", st.epoch, ", it says ", st.epoch_batches);
  Resume r;
  if (st.batch_size == shard_.batch_size && st.world_size == shard_.world_size &&
      st.last_batch == shard_.last_batch) {
    // The same schedule: continue at the next batch, exactly as the uninterrupted run.
    r.resumed_from = st.resumed_from;
    r.first_batch = st.batches;
  } else if (st.batches == st.epoch_batches) {
    // A finished epoch (with "drop", samples were left out on purpose): nothing remains.
    r.resumed_from.assign(static_cast<size_t>(source_->size()), 1);
  } else {
    // Elastic: the positions not yet delivered, sharded under this loader's settings.
    r.resumed_from = before->ConsumedAfter(st.batches);
  }
  Result<EpochSchedule> after = EpochSchedule::Create(shard_, st.epoch, r.resumed_from);
  if (!after.ok()) return after.status().WithPrefix("load_state: cannot resume under these settings");
  r.schedule = std::make_shared<const EpochSchedule>(std::move(after).value());
  resume_ = std::move(r);
  return Status::OK();
}


Result<std::unique_ptr<Loader>> Loader::Create(std::shared_ptr<const Source> source,
                                               std::vector<transforms::Transform> transforms,
                                               LoaderOptions options) {
  if (source == nullptr || source->size() == 0) return InvalidArgument("the dataset is empty");
  if (source->size() >= (int64_t{1} << 32))
    return InvalidArgument("datasets of 2^32 samples or more are not supported");
  SLUICE_ASSIGN_OR_RETURN(Plan plan, Plan::Create(std::move(transforms)));
  SLUICE_RETURN_IF_ERROR(CheckOptions(options, plan));
  auto impl = std::make_unique<Impl>(std::move(source), std::move(plan), ResolveOptions(options));
  SLUICE_RETURN_IF_ERROR(impl->Start());
  return std::unique_ptr<Loader>(new Loader(std::move(impl)));
}

Loader::Loader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Loader::~Loader() { impl_->Close(); }

int64_t Loader::num_samples() const { return impl_->source_->size(); }
int64_t Loader::num_batches() const { return impl_->full_batches_; }
std::optional<std::pair<int, int>> Loader::output_size() const {
  if (!impl_->plan_.fixed_size()) return std::nullopt;
  return std::make_pair(impl_->plan_.out_height(), impl_->plan_.out_width());
}
const Source& Loader::source() const { return *impl_->source_; }
const LoaderOptions& Loader::options() const { return impl_->options_; }

Status Loader::StartEpoch(int64_t epoch) {
  if (epoch < 0) return InvalidArgument("epoch must be >= 0, got ", epoch);
  Impl& m = *impl_;
  std::optional<Impl::Resume> resume = std::move(m.resume_);
  m.resume_.reset();
  m.position_ = 0;
  m.resumed_from_.clear();
  if (resume && resume->schedule->epoch() == epoch) {
    m.schedule_ = std::move(resume->schedule);
    m.position_ = resume->first_batch;
    m.resumed_from_ = std::move(resume->resumed_from);
  } else if (m.schedule_->epoch() != epoch || m.schedule_->resumed()) {
    SLUICE_ASSIGN_OR_RETURN(EpochSchedule s, EpochSchedule::Create(m.shard_, epoch));
    m.schedule_ = std::make_shared<const EpochSchedule>(std::move(s));
  }
  if (m.ring_ == nullptr) return FailedPrecondition("the loader is closed");
  m.started_ = true;
  m.ring_->StartEpoch(m.schedule_, m.position_);
  return Status::OK();
}

Result<std::optional<Batch>> Loader::Next() {
  if (impl_->ring_ == nullptr) return FailedPrecondition("the loader is closed");
  Result<std::optional<Batch>> r = impl_->ring_->Next();
  // A batch, or an error that dropped one (a bad file with on_error = kRaise), is a batch taken.
  if (impl_->started_ && (!r.ok() || r->has_value())) ++impl_->position_;
  return r;
}

LoaderState Loader::State() const {
  Impl& m = *impl_;
  LoaderState st;
  st.epoch = m.schedule_->epoch();
  st.batches = m.position_;
  st.epoch_batches = m.schedule_->num_batches();
  st.num_samples = m.source_->size();
  st.dataset_digest = m.Digest();
  st.shuffle = m.shard_.shuffle;
  st.seed = m.shard_.seed;
  st.batch_size = m.shard_.batch_size;
  st.world_size = m.shard_.world_size;
  st.last_batch = m.shard_.last_batch;
  st.resumed_from = m.resumed_from_;
  return st;
}

Status Loader::LoadState(const LoaderState& state) { return impl_->LoadState(state); }

LoaderStats Loader::stats() const { return impl_->ring_ ? impl_->ring_->Stats() : LoaderStats{}; }
void Loader::ResetStats() {
  if (impl_->ring_) impl_->ring_->ResetStats();
}

void Loader::Close() { impl_->Close(); }

}  // namespace sluice
