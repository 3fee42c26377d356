// CpuExecutor: the CPU path's work on the batch ring's batches. Every sample of a batch is read by
// the Reader (ahead, on the I/O threads), then decoded and transformed on a compute thread
// straight into its slot of the batch's pooled output buffer (SampleProcessor); the batch is done
// when its last sample is. Compute tasks run in FIFO order, so earlier batches finish first.
// A video clip source (video/clip_source.h) is not read: each clip is decoded on a compute thread
// and every frame transformed with the clip's draws into its slot (the batch is N x F frames).
//
// Thread-safety: the ring calls it from one thread; its tasks run on its own threads.
#ifndef SLUICE_PIPELINE_CPU_CPU_EXECUTOR_H_
#define SLUICE_PIPELINE_CPU_CPU_EXECUTOR_H_

#include <memory>
#include <string>
#include <vector>

#include "core/host_pool.h"
#include "core/thread_pool.h"
#include "io/reader.h"
#include "pipeline/batch_ring.h"
#include "pipeline/plan.h"
#include "pipeline/sample_processor.h"
#include "video/clip_source.h"

namespace sluice {

class CpuExecutor : public BatchWork {
 public:
  // `plan` must outlive it; `options` resolved (ResolveOptions). `io_max`: the I/O threads to
  // make (of which options.io_threads take reads) when more than options.io_threads.
  // ResourceExhausted when its threads cannot start; InvalidArgument for clips whose transforms
  // do not give every frame one size.
  static Result<std::unique_ptr<CpuExecutor>> Create(std::shared_ptr<const Source> source, const Plan& plan,
                                                     const LoaderOptions& options, int io_max = 0);
  ~CpuExecutor() override;

  std::shared_ptr<RingBatch> NewBatch() override;
  void NewEpoch() override { pool_->Sweep(); }
  void Start(const std::shared_ptr<RingBatch>& batch) override;
  void Assemble(RingBatch& batch, const std::vector<int>& kept, Batch* out) override;
  std::string Describe(const RingBatch& batch) const override;
  void SetActiveThreads(int compute, int io) override {
    compute_pool_->SetActive(compute);
    reader_->SetActive(io);
  }
  void FillStats(LoaderStats* stats) const override;
  bool OnOwnThread() const override;

 private:
  CpuExecutor(std::shared_ptr<const Source> source, const Plan& plan, const LoaderOptions& options);
  struct CpuBatch;
  void Process(const std::shared_ptr<CpuBatch>& b, int i, SampleBytes bytes, int worker);
  // The clips of group g (of one video): decoded in one pass, each frame converted to RGB and
  // transformed into its slot; TransformClips gives each clip's status.
  void ProcessClips(const std::shared_ptr<CpuBatch>& b, size_t g, int worker);
  std::vector<Status> TransformClips(CpuBatch& b, const std::vector<int>& group, WorkerScratch* scratch);
  Result<void*> Slot(CpuBatch& b, int i, int height, int width);
  void FinishSample(CpuBatch& b);

  std::shared_ptr<const Source> source_;
  const ClipSource* clips_;  // source_ when it is video clips, else null
  const Plan& plan_;
  LoaderOptions options_;
  SampleProcessor processor_;
  std::shared_ptr<HostPool> pool_;
  int64_t sample_bytes_ = 0;  // bytes of one output sample (fixed-size plans; a clip's frames)
  int64_t frame_bytes_ = 0;   // bytes of one output image (a clip's frame)
  std::vector<std::unique_ptr<WorkerScratch>> scratch_;
  ScratchGauge scratch_gauge_;
  // The reader submits to the compute threads: declared last, it is joined first.
  std::unique_ptr<ThreadPool> compute_pool_;
  std::unique_ptr<Reader> reader_;
};

}  // namespace sluice

#endif  // SLUICE_PIPELINE_CPU_CPU_EXECUTOR_H_
