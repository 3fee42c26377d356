// BatchRing: the batches a loader has in flight, the part the CPU and the GPU executor share.
//
// It keeps up to `prefetch` batches of the epoch's schedule in flight ahead of the consumer
// (started in order; a GPU executor may hold one back while its memory budget has no room), hands
// them out in order, waits for the next one (and, when that takes long, reports where every batch
// in flight stands), applies on_error to the samples that failed (raise: the first one's error;
// skip: the others are handed out and the failed ones logged), and assembles the batch: labels,
// indices, padding flags and the counters. The executor (a BatchWork) does the work of a batch:
// it starts it, marks it done, and gives its images.
//
// Told which schedule comes next (ReadAhead), the ring goes on into it once every batch of the
// current epoch has started, so that the next epoch's first batches are under way when this one
// ends (no pipeline restart at each epoch: short epochs lost 10-20% to it). Next() still ends the
// epoch at its last batch; StartEpoch with that very schedule keeps the batches started ahead,
// any other start cancels them.
//
//   BatchRing ring(source, options, &executor);   // options resolved (ResolveOptions)
//   ring.StartEpoch(schedule, 0);
//   ring.ReadAhead(next_schedule);                 // optional
//   while (auto batch = ring.Next(), batch.ok() && *batch) Use(**batch);
//
// Thread-safety: StartEpoch, Next and Cancel from one thread at a time; MarkDone, Abort and Stats
// from any thread. The destructor cancels the batches in flight and waits for them.
#ifndef SLUICE_PIPELINE_BATCH_RING_H_
#define SLUICE_PIPELINE_BATCH_RING_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/stage_counters.h"
#include "io/epoch_schedule.h"
#include "pipeline/load_tuner.h"
#include "pipeline/skip_log.h"
#include "sluice/batch.h"
#include "sluice/loader_options.h"
#include "sluice/loader_stats.h"
#include "sluice/source.h"

namespace sluice {

class BatchRing;

// One batch in flight. Executors derive their batch state from it.
struct RingBatch {
  virtual ~RingBatch() = default;
  int64_t epoch = 0, index = 0;    // its epoch, and its number in the epoch's schedule
  int64_t sequence = 0;            // its number among all the batches the ring started
  bool ahead = false;              // started for the schedule expected next (the ring's thread)
  std::vector<int64_t> samples;    // dataset indices
  std::vector<uint8_t> padding;    // per sample: 1 for a repeat filling the last batch
  std::vector<Status> status;      // per sample: why it failed (the error names the file)
  Status batch_status;             // the batch as a whole (memory, CUDA)
  std::atomic<bool> cancelled{false};
  bool done = false;               // guarded by the ring
  uint64_t nvtx_span = 0;          // its NVTX range "sluice batch", from scheduled to done
};

// What an executor does for the ring.
class BatchWork {
 public:
  virtual ~BatchWork() = default;
  // A new batch, of the executor's own type; the ring sets its epoch, index and samples.
  virtual std::shared_ptr<RingBatch> NewBatch() = 0;
  // Starts its work; MarkDone(batch) once nothing of it runs any more (also when cancelled).
  virtual void Start(const std::shared_ptr<RingBatch>& batch) = 0;
  // An epoch starts (the previous one's batches are cancelled): release what the last epoch left
  // unused (pooled buffers no batch took), so that memory held stays flat epoch after epoch.
  virtual void NewEpoch() {}
  // Whether one more batch may start beside those in flight (never asked when none is).
  virtual bool Admit(const std::deque<std::shared_ptr<RingBatch>>&) { return true; }
  // The images of a finished batch's `kept` samples (in that order) into `out`.
  virtual void Assemble(RingBatch& batch, const std::vector<int>& kept, Batch* out) = 0;
  // Where a batch in flight stands, for a stall report ("3 samples pending").
  virtual std::string Describe(const RingBatch& batch) const = 0;
  // The consumer took `batch` (for tracing).
  virtual void Taken(RingBatch&) {}
  // Whether the calling thread is one of the executor's own (a user function calling its loader).
  virtual bool OnOwnThread() const { return false; }
  // Only compute threads 0..n-1, and I/O threads 0..io-1, take work from now on (the ring's
  // LoadTuner; the executor made its I/O threads for the most the tuner may use).
  virtual void SetActiveThreads(int /*compute*/, int /*io*/) {}
  // The executor's part of the stats (memory, routes).
  virtual void FillStats(LoaderStats* stats) const = 0;
  virtual void ResetStats() {}
  // The time and volume counters of its stages (the ring adds the consumer's waits and the
  // batches handed out).
  StageCounters& counters() const { return counters_; }

 protected:
  void MarkDone(RingBatch& batch);
  mutable StageCounters counters_;

 private:
  friend class BatchRing;
  BatchRing* ring_ = nullptr;
};

class BatchRing {
 public:
  // `source`, `work` must outlive the ring; `options` resolved. `tuning`: what a LoadTuner
  // changes while the ring runs (none: the options hold).
  BatchRing(const Source& source, const LoaderOptions& options, BatchWork* work, LoadTuner::Scope tuning = {});
  ~BatchRing();
  BatchRing(const BatchRing&) = delete;
  BatchRing& operator=(const BatchRing&) = delete;

  // Cancels the batches of a previous epoch and starts `schedule` at batch `first_batch` (0, or
  // where a resumed run left off). REQUIRES: 0 <= first_batch <= schedule->num_batches().
  // With the schedule last given to ReadAhead and first_batch 0, the batches started ahead are
  // kept; every other batch in flight is cancelled.
  void StartEpoch(std::shared_ptr<const EpochSchedule> schedule, int64_t first_batch);
  // The schedule expected next: once every batch of the current one has started, its batches
  // start too (within the prefetch window). nullptr: none.
  void ReadAhead(std::shared_ptr<const EpochSchedule> next);
  // The next batch, nullopt at the end of the epoch; see Loader::Next for the errors. With `wait`,
  // DeadlineExceeded when the batch is not done within it (nothing is taken; call again).
  Result<std::optional<Batch>> Next(std::optional<std::chrono::milliseconds> wait = std::nullopt);
  // The number in the schedule of the batch Next() hands out next (batches before it were taken).
  int64_t next_out() const { return next_out_; }
  // Cancels every batch in flight and waits until they are done.
  void Cancel();
  // From any thread, without waiting: cancels every batch in flight, and a Next() waiting now or
  // called later returns FailedPrecondition(`why`). Nothing starts afterwards.
  void Abort(const std::string& why);

  LoaderStats Stats() const;
  void ResetStats();

 private:
  friend class BatchWork;
  void MarkDone(RingBatch& batch);
  void TopUp();
  void Schedule(const EpochSchedule& schedule, int64_t index);
  // Cancels the batches in flight that `keep` rejects and waits until they are done.
  void CancelUnless(const std::function<bool(const RingBatch&)>& keep);
  // Whether `batch` is done (false: `wait` ran out, or the ring was aborted); `*waited_ns`: how
  // long it waited (also added to the consumer's wait counter).
  bool Wait(const RingBatch& batch, std::optional<std::chrono::milliseconds> wait, int64_t* waited_ns);
  void ReportStall(int64_t waited_s) const;  // to stderr, with mu_ held
  Result<std::optional<Batch>> HandOut(RingBatch& batch);
  void Tune(int64_t waited_ns);  // after a hand-out: the tuner's setting, applied

  const Source& source_;
  LoaderOptions options_;
  BatchWork* work_;
  SkipLog skips_;
  std::shared_ptr<const EpochSchedule> schedule_;
  int64_t epoch_ = -1;
  int64_t next_ = 0;      // the next batch of the schedule to start
  int64_t next_out_ = 0;  // the next one to hand out
  std::shared_ptr<const EpochSchedule> ahead_;  // the schedule expected next (ReadAhead)
  int64_t ahead_next_ = 0;                      // its next batch to start
  int64_t sequence_ = 0;                        // batches started so far
  LoadTuner tuner_;
  int prefetch_;                                // batches kept in flight (the tuner's)
  int active_threads_, active_io_;               // compute and I/O threads taking work (the tuner's)
  std::deque<std::shared_ptr<RingBatch>> in_flight_;  // changed with mu_ held (Abort reads it)
  mutable std::mutex mu_;  // guards RingBatch::done, aborted_
  std::optional<std::string> aborted_;  // why, once Abort() was called
  std::condition_variable done_cv_;
};

}  // namespace sluice

#endif  // SLUICE_PIPELINE_BATCH_RING_H_
