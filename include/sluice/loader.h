// Loader: reads a Source, decodes and transforms every sample of an epoch, and hands out batches
// (images and labels as Tensors, exportable through DLPack).
//
//   auto source = sluice::Source::ImageFolder("data/train");   // or your own Source
//   sluice::LoaderOptions opt;
//   opt.batch_size = 256;
//   opt.shuffle = true;
//   auto loader = sluice::Loader::Create(*source, {sluice::transforms::RandomResizedCrop{224, 224},
//                                                  sluice::transforms::RandomHorizontalFlip{}},
//                                        opt);
//   for (int epoch = 0; epoch < 90; ++epoch) {
//     (*loader)->StartEpoch(epoch);
//     while (true) {
//       auto batch = (*loader)->Next();       // Result<std::optional<Batch>>
//       if (!batch.ok()) { /* a bad file, named in batch.status() */ break; }
//       if (!*batch) break;                   // end of epoch
//       Use((*batch)->images, (*batch)->labels);
//     }
//   }
//
// Work runs on the loader's own threads: I/O threads read samples ahead, compute threads decode
// and transform one sample each, writing straight into the batch. At most `prefetch` batches
// are prepared ahead of the consumer. The source is shared: it lives as long as the loader or
// the caller needs it.
//
// Thread-safety: every method may be called from any thread. StartEpoch, Next, State and LoadState
// run one at a time (a second caller waits for the first); Close() and stats() do not wait for them:
// Close() from another thread ends a Next() that is waiting (it fails with "the loader is closed").
// Called from inside one of the loader's own user functions, Close() only cancels (the threads
// are joined by a later Close() or the destructor) and the other methods fail. The loader's
// threads do not survive fork(): in a forked child every method fails (FailedPrecondition) and
// the destructor only releases memory. Batches handed out stay valid after the Loader is
// destroyed.
//
// With NCCL in the same process (one rank per GPU), set CUDA_DEVICE_MAX_CONNECTIONS=32 before the
// process creates its CUDA context: with CUDA's default of 8 queues, the JPEG engines' work can
// wait behind an NCCL kernel that waits for another rank, and the ranks hang (docs/guide.md). The
// Python package sets it as it is imported (and 16 in a process that is not a rank, where the
// engine calls ran faster with 16 than with 8).
//
// A GPU loader makes the device context's waits block (cudaDeviceScheduleBlockingSync) where they
// are CUDA's automatic choice, which spins them: for every waiting thread in the process, the
// caller's included. A process that set its own scheduling flags keeps them (src/gpu/host_wait.h).
#ifndef SLUICE_LOADER_H_
#define SLUICE_LOADER_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sluice/batch.h"
#include "sluice/loader_options.h"
#include "sluice/loader_state.h"
#include "sluice/loader_stats.h"
#include "sluice/source.h"
#include "sluice/status.h"
#include "sluice/transforms.h"

namespace sluice {

class Loader {
 public:
  // Validates everything before any work starts: options, transforms, the device. Errors name
  // the argument.
  // REQUIRES: source != nullptr.
  static Result<std::unique_ptr<Loader>> Create(std::shared_ptr<const Source> source,
                                                std::vector<transforms::Transform> transforms,
                                                LoaderOptions options);
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  int64_t num_samples() const;
  // Batches per epoch on this rank (the same on every rank), exact for the last_batch policy.
  // A resumed epoch has fewer: State().epoch_batches - State().batches are left.
  int64_t num_batches() const;
  // (height, width) of every output image, or nullopt when it depends on the image (batches
  // then carry a TensorList).
  std::optional<std::pair<int, int>> output_size() const;
  const Source& source() const;
  // The options it runs with: as given, with the automatic ones resolved.
  const LoaderOptions& options() const;

  // Starts epoch `epoch` from its first batch (or, once after LoadState() of that epoch, from
  // where the state left off); work of a previous epoch not yet consumed is cancelled.
  // REQUIRES: epoch >= 0.
  Status StartEpoch(int64_t epoch);

  // The next batch, std::nullopt at the end of the epoch. With on_error = kRaise, a batch that
  // holds a bad file returns that file's error (path and reason) and is dropped; calling Next()
  // again continues with the following batch. With kSkip, bad samples are left out of their
  // batch and listed in stats().skipped; a batch whose samples are all bad comes out empty
  // (0 samples), so that every rank still yields num_batches() batches.
  // REQUIRES: StartEpoch() was called.
  Result<std::optional<Batch>> Next();
  // As Next(), waiting at most `wait`: DeadlineExceeded when the next batch is not ready by then
  // (nothing is taken; call again). Lets a caller check for interrupts while it waits.
  Result<std::optional<Batch>> Next(std::chrono::milliseconds wait);

  // This rank's place in the epoch last started (epoch 0, nothing taken, before any), for a
  // checkpoint.
  LoaderState State() const;
  // Makes the next StartEpoch(state.epoch) continue where `state` left off. With the batch size,
  // world size and last-batch policy the state was taken under, it yields exactly the batches
  // the interrupted run had still to yield; with others (an elastic resume: more or fewer
  // ranks), every sample the interrupted run had not yet delivered, exactly once over the ranks.
  // Errors (InvalidArgument): a state from another dataset (size or digest), another seed or
  // shuffle setting, a malformed state, or a resume the new settings cannot shard (see
  // EpochSchedule). A state of a finished epoch is accepted: that epoch then yields nothing.
  Status LoadState(const LoaderState& state);

  LoaderStats stats() const;
  void ResetStats();

  // Cancels the work in flight and stops the threads (waiting for a user function that is
  // running); afterwards StartEpoch() and Next() fail. The destructor does the same. Safe from any
  // thread at any moment, also twice.
  void Close();

 private:
  class Impl;
  explicit Loader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice

#endif  // SLUICE_LOADER_H_
