// Executor: runs a Plan over a Source, batch after batch, on a thread pool.
//
// For each batch in flight: every sample is read on an I/O thread (read-ahead), then decoded and
// transformed on a compute thread straight into its slot of the batch's pooled buffer. Up to
// `prefetch` batches are in flight ahead of the consumer (bounded memory, back-pressure); the
// consumer's Next() waits only if the next batch is not finished yet. Tasks run in FIFO order,
// so earlier batches finish first.
//
// Thread-safety: StartEpoch/Next from one thread; Stats from any thread.
#ifndef SLUICE_PIPELINE_EXECUTOR_H_
#define SLUICE_PIPELINE_EXECUTOR_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "core/file_util.h"
#include "core/host_pool.h"
#include "core/thread_pool.h"
#include "pipeline/batch_executor.h"
#include "pipeline/plan.h"
#include "pipeline/sample_processor.h"
#include "pipeline/skip_log.h"
#include "pipeline/stage_counters.h"
#include "sluice/loader.h"

namespace sluice {

class Executor : public BatchExecutor {
 public:
  // `source` and `plan` must outlive the executor. `options` must be valid (Loader checks).
  Executor(const Source& source, const Plan& plan, const LoaderOptions& options);
  ~Executor() override;

  void StartEpoch(std::shared_ptr<const EpochSchedule> schedule, int64_t first_batch) override;
  Result<std::optional<Batch>> Next() override;
  LoaderStats Stats() const override;
  void ResetStats() override;

 private:
  struct InFlight;
  void TopUp();
  void Schedule(int64_t batch);
  void ProcessSample(const std::shared_ptr<InFlight>& b, int i, FileBytes bytes, int worker);
  void FinishSample(const std::shared_ptr<InFlight>& b);
  void CancelAll();

  const Source& source_;
  const Plan& plan_;
  LoaderOptions options_;
  SampleProcessor processor_;
  SkipLog skips_;
  std::shared_ptr<HostPool> pool_;
  std::shared_ptr<const EpochSchedule> schedule_;
  int64_t sample_bytes_ = 0;  // bytes of one output sample (fixed-size plans)

  int64_t epoch_ = -1;
  int64_t next_schedule_ = 0;
  std::deque<std::shared_ptr<InFlight>> in_flight_;

  mutable std::mutex mu_;          // guards InFlight::remaining
  std::condition_variable done_cv_;
  StageCounters counters_;

  std::vector<std::unique_ptr<WorkerScratch>> scratch_;
  // Declared last: destroyed first, so no task outlives the members it uses.
  std::unique_ptr<ThreadPool> io_pool_;
  std::unique_ptr<ThreadPool> compute_pool_;
};

}  // namespace sluice

#endif  // SLUICE_PIPELINE_EXECUTOR_H_
