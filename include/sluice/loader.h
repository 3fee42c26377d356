// Loader: reads a Source, decodes and transforms every sample of an epoch, and hands out batches
// (images and labels as Tensors, exportable through DLPack).
//
//   auto source = sluice::Source::ImageFolder("data/train");
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
// Work runs on the loader's own threads: I/O threads read files ahead, compute threads decode
// and transform one sample each, writing straight into the batch. At most `prefetch` batches
// are prepared ahead of the consumer.
//
// Thread-safety: one thread drives a Loader (StartEpoch, Next, State, LoadState); stats() may be called from any
// thread. Batches handed out stay valid after the Loader is destroyed.
#ifndef SLUICE_LOADER_H_
#define SLUICE_LOADER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sluice/source.h"
#include "sluice/status.h"
#include "sluice/tensor.h"
#include "sluice/tensor_list.h"
#include "sluice/transforms.h"
#include "sluice/types.h"

namespace sluice {

struct LoaderOptions {
  int batch_size = 256;                     // samples per batch, >= 1
  bool shuffle = false;                     // a new permutation every epoch
  uint64_t seed = 0;                        // drives shuffling and every random transform
  LastBatch last_batch = LastBatch::kPartial;
  DType dtype = DType::kFloat32;            // of the images; float is scaled to [0, 1] first
  Layout layout = Layout::kNCHW;
  OnError on_error = OnError::kRaise;
  Device device;                            // cpu, or cuda:N (the GPU path)
  int num_threads = 0;                      // compute threads; 0 = this process's share of
                                            // the CPUs (all, or divided among torchrun's
                                            // local processes: LOCAL_WORLD_SIZE)
  int io_threads = 0;                       // file-reading threads; 0 = 2
  int prefetch = 2;                         // batches prepared ahead of the consumer, >= 1
  int rank = 0;                             // this process's part of every epoch: global
  int world_size = 1;                       // positions rank, rank + world_size, ...
  bool dct_scaling = true;                  // JPEG: decode at 1/2, 1/4, 1/8 when the resize
                                            // shrinks the region at least that much
  // GPU path only:
  DecodeRoute decode_route = DecodeRoute::kAuto;
  int64_t gpu_memory_budget = int64_t{1} << 30;  // bytes of device memory (batches in flight,
                                                 // decoded regions, nvJPEG's buffers) and of
                                                 // pinned host memory for uploads
};

struct Batch {
  // N x 3 x H x W (NCHW) or N x H x W x 3 (NHWC) when the transforms end in a fixed size.
  Tensor images;
  // Otherwise (e.g. Resize(256) alone) one 3 x H x W (or H x W x 3) tensor per sample, and
  // `images` is empty.
  TensorList image_list;
  Tensor labels;                 // N, int64
  std::vector<int64_t> indices;  // dataset index of each sample
  // Per sample, 1 if it is a repeat that fills the last batch (last_batch = kPad), else 0.
  std::vector<uint8_t> padding;
  int64_t epoch = 0;
  int64_t index = 0;             // batch number within the epoch
};

// Where a loader stands in an epoch: saved by Loader::State() with a checkpoint, given back to
// Loader::LoadState() to resume. Ranks that step in lockstep (a DDP job) have the same state
// but for the rank, so rank 0's is enough for every rank.
struct LoaderState {
  int64_t epoch = 0;
  int64_t batches = 0;         // batches of `epoch` this rank has taken (an error counts)
  int64_t epoch_batches = 0;   // batches `epoch` has on this rank; batches == epoch_batches: done
  // What the state was taken under. The dataset, shuffle and seed must match on load; the batch
  // size, world size and last-batch policy may differ (an elastic resume).
  int64_t num_samples = 0;
  uint64_t dataset_digest = 0;  // Source::Digest()
  bool shuffle = false;
  uint64_t seed = 0;
  int batch_size = 1;
  int world_size = 1;
  LastBatch last_batch = LastBatch::kPartial;
  // When `epoch` itself began from a resume: one flag per position of the epoch's global order,
  // 1 if it was consumed before; else empty.
  std::vector<uint8_t> resumed_from;
};

struct SkippedSample {
  std::string path;
  int64_t index = 0;   // dataset index
  int64_t epoch = 0;
  std::string reason;
};

// Counters since creation (or the last ResetStats). Stage times are summed over threads.
struct LoaderStats {
  int64_t samples = 0;        // samples delivered in batches
  int64_t batches = 0;
  int64_t bytes_read = 0;
  double read_s = 0;          // reading files (I/O threads)
  double decode_s = 0;        // header parse, parameter draw, decode, EXIF rotation
  double transform_s = 0;     // resampling (crop, resize, flip, pad)
  double collate_s = 0;       // scale, normalize, cast and layout into the batch
  double wait_s = 0;          // time the consumer spent blocked in Next()
  double wall_s = 0;          // time since creation or ResetStats
  int num_threads = 0;
  int io_threads = 0;
  int64_t host_memory_in_use = 0;   // bytes, pooled buffers handed out
  int64_t host_memory_peak = 0;
  // GPU path:
  int64_t gpu_memory_in_use = 0;    // bytes of sluice's device pool handed out
  int64_t gpu_memory_peak = 0;      // peak bytes the pool held from the driver
  int64_t pinned_memory_peak = 0;   // peak page-locked host bytes (staging and nvJPEG's)
  int64_t route_samples[3] = {0, 0, 0};  // samples decoded by hardware, hybrid, cpu
  int64_t skipped_count = 0;
  std::vector<SkippedSample> skipped;  // the first 1000
};

class Loader {
 public:
  // Validates everything before any work starts: options, transforms, the device. Errors name
  // the argument.
  static Result<std::unique_ptr<Loader>> Create(Source source,
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
  // running); afterwards StartEpoch() and Next() fail. The destructor does the same.
  void Close();

 private:
  class Impl;
  explicit Loader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice

#endif  // SLUICE_LOADER_H_
