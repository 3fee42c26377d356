#include "sluice/loader.h"

#include <unistd.h>

#include <chrono>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "core/env_knob.h"
#include "core/timed_mutex.h"
#include "io/memory_cache.h"
#include "io/stream_session.h"
#include "pipeline/batch_ring.h"
#include "pipeline/cpu/cpu_executor.h"
#include "pipeline/gpu/clip_executor.h"
#include "pipeline/gpu/gpu_executor.h"
#include "pipeline/plan.h"
#include "pipeline/resolve_options.h"

namespace sluice {

class Loader::Impl {
 public:
  Impl(std::shared_ptr<const Source> source, Plan plan, LoaderOptions options, LoadTuner::Scope tuning)
      : source_(std::move(source)), plan_(std::move(plan)), options_(options), tuning_(tuning),
        shard_{source_->size(), options.shuffle, options.seed, options.batch_size, options.last_batch,
               options.rank, options.world_size, EpochOrderOf(source_)} {}

  static EpochOrderFn EpochOrderOf(const std::shared_ptr<const Source>& source) {
    return [source](bool shuffle, uint64_t seed, int64_t epoch, int world_size) {
      return source->EpochOrder(shuffle, seed, epoch, world_size);
    };
  }

  Status Start() {
    // Epoch 0's schedule: checks rank, world size and policy before any work starts.
    SLUICE_ASSIGN_OR_RETURN(EpochSchedule first, EpochSchedule::Create(shard_, 0));
    full_batches_ = first.num_batches();
    schedule_ = std::make_shared<const EpochSchedule>(std::move(first));
    if (options_.device.type == DeviceType::kCUDA) {
      if (plan_.has_functions())
        return Unsupported("user functions (Lambda) run on the CPU: make this loader with device=cpu "
                           "and copy its batches to the GPU (the Python Loader does)");
      if (plan_.cpu_only() != nullptr)
        return Unsupported(plan_.cpu_only(), " runs on the CPU: make this loader with device=cpu and copy its "
                           "batches to the GPU (the Python Loader does)");
      if (auto clips = std::dynamic_pointer_cast<const ClipSource>(source_)) {
        SLUICE_ASSIGN_OR_RETURN(executor_, CreateGpuClipExecutor(std::move(clips), plan_, options_));
      } else {
        SLUICE_ASSIGN_OR_RETURN(executor_, CreateGpuExecutor(source_, plan_, options_, tuning_.io_max));
      }
    } else {
      SLUICE_ASSIGN_OR_RETURN(executor_, CpuExecutor::Create(source_, plan_, options_, tuning_.io_max));
    }
    ring_ = std::make_unique<BatchRing>(*source_, options_, executor_.get(), tuning_);
    return Status::OK();
  }

  bool Forked() const { return getpid() != pid_; }

  bool OnOwnThread() const {
    std::lock_guard<std::mutex> lock(ring_mu_);
    return executor_ != nullptr && executor_->OnOwnThread();
  }

  // Why StartEpoch, Next or LoadState cannot run now, checked before taking drive_mu_ (a
  // forked child may have inherited it locked; a user function would wait for itself).
  Status Usable() const {
    if (Forked())
      return FailedPrecondition("this loader was created in process ", pid_, " and its threads run there; a "
                                "forked child (process ", getpid(), ") cannot use it: create the loader in the "
                                "child, or start children with the 'spawn' method");
    if (OnOwnThread()) return FailedPrecondition("a loader cannot be used from inside one of its own transforms");
    std::lock_guard<std::mutex> lock(ring_mu_);
    if (ring_ == nullptr || closed_) return FailedPrecondition("the loader is closed");
    return Status::OK();
  }

  // Stops the work at once (a waiting Next() returns), then, unless called from one of the
  // loader's own threads, waits for the driving call in progress and joins the threads. The ring
  // goes first: it waits for the batches in flight while the executor's threads and memory exist.
  void Close() {
    if (Forked()) return;  // the threads are the parent's
    {
      std::lock_guard<std::mutex> lock(ring_mu_);
      closed_ = true;
      if (ring_ == nullptr) return;
      ring_->Abort("the loader is closed");
      if (stream_ != nullptr) stream_->Stop();  // after Abort: reads that fail now end no batch handed out
      if (executor_->OnOwnThread()) return;  // joined by a later Close() or the destructor
    }
    std::lock_guard<TimedMutex> drive(drive_mu_);
    std::unique_ptr<BatchRing> ring;
    std::unique_ptr<BatchWork> executor;
    {
      std::lock_guard<std::mutex> lock(ring_mu_);
      ring = std::move(ring_);
      executor = std::move(executor_);
    }
    ring.reset();
    executor.reset();
  }

  uint64_t Digest() {
    std::call_once(digest_once_, [this] { digest_ = source_->Digest(); });
    return digest_;
  }

  Status LoadState(const LoaderState& st);
  Result<std::optional<Batch>> Next(std::optional<std::chrono::milliseconds> wait);

  std::shared_ptr<const Source> source_;
  std::shared_ptr<MemoryCache> cache_;  // the source, when options_.memory_cache_bytes > 0
  std::shared_ptr<StreamSession> stream_;  // the source, when it is a StreamSource
  Plan plan_;
  LoaderOptions options_;
  LoadTuner::Scope tuning_;  // what the ring's LoadTuner may change
  ShardOptions shard_;
  int64_t full_batches_ = 0;                       // batches of an epoch that is not resumed
  std::shared_ptr<const EpochSchedule> schedule_;  // of the epoch last started (epoch 0 before)
  std::shared_ptr<const EpochSchedule> ahead_;     // the next epoch's, read ahead (drive_mu_)
  std::vector<uint8_t> resumed_from_;              // its consumed positions, when it is resumed
  bool started_ = false;
  int64_t position_ = 0;                           // batches of it taken (or skipped by a resume)
  struct Resume {
    std::shared_ptr<const EpochSchedule> schedule;
    int64_t first_batch = 0;
    std::vector<uint8_t> resumed_from;
  };
  std::optional<Resume> resume_;                   // from LoadState, for the next StartEpoch
  std::once_flag digest_once_;
  uint64_t digest_ = 0;
  mutable std::mutex state_mu_;  // guards schedule_, started_, position_, resumed_from_, resume_
  const pid_t pid_ = getpid();                      // the process whose threads run the loader
  // drive_mu_ serializes StartEpoch, Next, State, LoadState and Close's teardown; ring_mu_ guards
  // ring_ and executor_ against a Close() from another thread (for Abort, stats, OnOwnThread).
  mutable TimedMutex drive_mu_;
  mutable std::mutex ring_mu_;
  bool closed_ = false;                            // guarded by ring_mu_
  std::unique_ptr<BatchWork> executor_;
  std::unique_ptr<BatchRing> ring_;  // over executor_; set while usable, reset by Close()
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
    // Elastic: the samples not yet delivered, sharded under this loader's settings. A streamed
    // source's order depends on the world size: the positions are carried over by sample.
    const std::vector<uint8_t> consumed = before->ConsumedAfter(st.batches);
    Result<EpochSchedule> fresh = EpochSchedule::Create(shard_, st.epoch);
    if (!fresh.ok()) return fresh.status().WithPrefix("load_state: cannot resume under these settings");
    std::vector<uint8_t> by_index(consumed.size(), 0);
    for (size_t p = 0; p < consumed.size(); ++p)
      if (consumed[p] != 0) by_index[static_cast<size_t>(before->order()[p])] = 1;
    r.resumed_from.assign(consumed.size(), 0);
    for (size_t p = 0; p < consumed.size(); ++p) r.resumed_from[p] = by_index[static_cast<size_t>(fresh->order()[p])];
  }
  Result<EpochSchedule> after = EpochSchedule::Create(shard_, st.epoch, r.resumed_from);
  if (!after.ok()) return after.status().WithPrefix("load_state: cannot resume under these settings");
  r.schedule = std::make_shared<const EpochSchedule>(std::move(after).value());
  std::lock_guard<std::mutex> lock(state_mu_);
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
  std::shared_ptr<StreamSession> stream;
  if (auto streamed = std::dynamic_pointer_cast<const StreamSource>(source)) {
    if (options.memory_cache_bytes > 0)
      return InvalidArgument("cache='memory' keeps files and indexed shards; streamed shards are kept by the "
                             "WebDataset's disk cache (cache_dir)");
    const LoaderOptions resolved = ResolveOptions(options);
    // Room for the shuffle window, the batches read ahead and a batch in the consumer's hands.
    const int64_t lookahead = streamed->options().layout.window +
                              int64_t{resolved.prefetch.value_or(2) + 2} * options.batch_size;
    stream = std::make_shared<StreamSession>(std::move(streamed), lookahead, options.max_file_bytes);
    source = stream;
  }
  std::shared_ptr<MemoryCache> cache;
  if (options.memory_cache_bytes > 0) {
    // The GPU path reads into page-locked buffers, which nvJPEG copies from faster: hits are
    // copied into them rather than handed out from the system's memory.
    const CacheHandOut hand_out = options.device.type == DeviceType::kCUDA ? CacheHandOut::kCopy : CacheHandOut::kShare;
    cache = std::make_shared<MemoryCache>(std::move(source), options.memory_cache_bytes, hand_out);
    source = cache;
  }
  auto impl = std::make_unique<Impl>(std::move(source), std::move(plan), ResolveOptions(options), TuningOf(options));
  impl->cache_ = std::move(cache);
  impl->stream_ = std::move(stream);
  SLUICE_RETURN_IF_ERROR(impl->Start());
  return std::unique_ptr<Loader>(new Loader(std::move(impl)));
}

Loader::Loader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

// In a forked child the parent's threads and locks are not there to join: the memory is left. On
// one of the loader's own threads (a user function dropped the last reference), the join cannot
// happen here: another thread does it.
Loader::~Loader() {
  if (impl_->Forked()) {
    static_cast<void>(impl_.release());
    return;
  }
  if (impl_->OnOwnThread()) {
    impl_->Close();  // cancels at once
    try {
      std::thread([impl = std::move(impl_)] { impl->Close(); }).detach();
    } catch (const std::system_error&) {
      static_cast<void>(impl_.release());  // no thread to join with: left, as after fork
    }
    return;
  }
  impl_->Close();
}

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
  SLUICE_RETURN_IF_ERROR(m.Usable());
  std::lock_guard<TimedMutex> drive(m.drive_mu_);
  SLUICE_RETURN_IF_ERROR(m.Usable());  // closed while this call waited
  std::optional<Impl::Resume> resume;
  std::shared_ptr<const EpochSchedule> schedule;
  {
    std::lock_guard<std::mutex> lock(m.state_mu_);
    resume = std::move(m.resume_);
    m.resume_.reset();
    schedule = m.schedule_;
  }
  int64_t position = 0;
  std::vector<uint8_t> resumed_from;
  if (resume && resume->schedule->epoch() == epoch) {
    schedule = std::move(resume->schedule);
    position = resume->first_batch;
    resumed_from = std::move(resume->resumed_from);
  } else if (m.ahead_ != nullptr && m.ahead_->epoch() == epoch) {
    schedule = m.ahead_;  // its first batches are under way
  } else if (schedule->epoch() != epoch || schedule->resumed()) {
    SLUICE_ASSIGN_OR_RETURN(EpochSchedule s, EpochSchedule::Create(m.shard_, epoch));
    schedule = std::make_shared<const EpochSchedule>(std::move(s));
  }
  {
    std::lock_guard<std::mutex> lock(m.state_mu_);
    m.schedule_ = schedule;
    m.position_ = position;
    m.resumed_from_ = std::move(resumed_from);
    m.started_ = true;
  }
  // This epoch goes on from the batches read ahead into it (the ring keeps them).
  const bool continued = schedule == m.ahead_ && position == 0;
  if (m.stream_ != nullptr) {
    // The streams are told what this epoch reads once the last epoch's reads have ended: its
    // batches still in flight are cancelled first, and so are those read ahead when this epoch
    // is not the one they were read for (their reads wait in the announced plan).
    m.stream_->Retire(/*announced_too=*/m.ahead_ != nullptr && !continued);
    if (!continued) m.ring_->Cancel();
    m.stream_->Plan(schedule->IndicesFrom(position), epoch);
  }
  m.ring_->StartEpoch(std::move(schedule), position);
  // The next epoch is read ahead as this one's last batches start; streamed shards are told what
  // it will read first, so that its streams start as this one ends (and serve those reads).
  m.ahead_.reset();
  static const bool read_ahead = EnvKnob("SLUICE_READ_AHEAD", 1) != 0;  // off: to measure its gain
  if (Result<EpochSchedule> next = EpochSchedule::Create(m.shard_, epoch + 1); next.ok()) {
    if (m.stream_ != nullptr) m.stream_->PlanNext(next->IndicesFrom(0), epoch + 1);
    if (read_ahead) m.ahead_ = std::make_shared<const EpochSchedule>(std::move(next).value());
  }
  m.ring_->ReadAhead(m.ahead_);
  return Status::OK();
}

Result<std::optional<Batch>> Loader::Next() { return impl_->Next(std::nullopt); }
Result<std::optional<Batch>> Loader::Next(std::chrono::milliseconds wait) { return impl_->Next(wait); }

Result<std::optional<Batch>> Loader::Impl::Next(std::optional<std::chrono::milliseconds> wait) {
  SLUICE_RETURN_IF_ERROR(Usable());
  std::unique_lock<TimedMutex> drive(drive_mu_, std::defer_lock);
  if (!wait) {
    drive.lock();
  } else if (!drive.try_lock_for(*wait)) {
    return DeadlineExceeded("another thread is taking a batch from this loader");
  }
  SLUICE_RETURN_IF_ERROR(Usable());
  Result<std::optional<Batch>> r = ring_->Next(wait);
  // A batch, or an error that dropped one (a bad file with on_error = kRaise), is a batch taken.
  std::lock_guard<std::mutex> lock(state_mu_);
  if (started_) position_ = ring_->next_out();
  return r;
}

LoaderState Loader::State() const {
  Impl& m = *impl_;
  std::unique_lock<std::mutex> lock(m.state_mu_, std::defer_lock);
  if (!m.Forked()) lock.lock();  // a forked child may have inherited it locked
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

Status Loader::LoadState(const LoaderState& state) {
  Impl& m = *impl_;
  SLUICE_RETURN_IF_ERROR(m.Usable());
  std::lock_guard<TimedMutex> drive(m.drive_mu_);
  return m.LoadState(state);
}

LoaderStats Loader::stats() const {
  if (impl_->Forked()) return LoaderStats{};  // the parent's locks may be held
  std::lock_guard<std::mutex> lock(impl_->ring_mu_);
  LoaderStats s = impl_->ring_ ? impl_->ring_->Stats() : LoaderStats{};
  if (impl_->cache_ != nullptr) {
    const MemoryCache::Counters c = impl_->cache_->counters();
    s.cache_hits = c.hits;
    s.cache_misses = c.misses;
    s.cache_bytes = c.bytes;
    s.cache_budget = c.budget;
  }
  if (impl_->stream_ != nullptr) {
    const StreamSession::Counters c = impl_->stream_->counters();
    s.stream_shards = c.shards;
    s.stream_shards_from_disk_cache = c.from_cache;
    s.stream_bytes = c.bytes;
    s.stream_held_peak = c.held_peak;
    const HostPool::Usage buffers = impl_->stream_->buffer_usage();
    s.stream_buffer_bytes = buffers.in_use_bytes + buffers.cached_bytes;
    if (const ShardDiskCache* disk = impl_->stream_->source().disk_cache()) {
      const ShardDiskCache::Counters d = disk->counters();
      s.disk_cache_hits = d.hits;
      s.disk_cache_misses = d.misses;
      s.disk_cache_evictions = d.evictions;
      s.disk_cache_bytes = d.bytes;
      s.disk_cache_budget = d.budget;
    }
  }
  return s;
}

void Loader::ResetStats() {
  if (impl_->Forked()) return;
  std::lock_guard<std::mutex> lock(impl_->ring_mu_);
  if (impl_->ring_) impl_->ring_->ResetStats();
  if (impl_->cache_ != nullptr) impl_->cache_->ResetCounters();
  if (impl_->stream_ != nullptr) impl_->stream_->ResetCounters();
}

void Loader::Close() { impl_->Close(); }

}  // namespace sluice
