// LoaderOptions: how a Loader runs (see loader.h), as one struct with documented defaults.
// Loader::Create checks every field and resolves the automatic ones (those left unset) once; a
// loader's options() are the resolved ones.
//
//   sluice::LoaderOptions opt;
//   opt.batch_size = 64;
//   opt.device = sluice::Device{sluice::DeviceType::kCUDA, 0};
//   opt.num_threads = 8;              // unset: this process's share of the CPUs
//
// Thread-safety: a plain value.
#ifndef SLUICE_LOADER_OPTIONS_H_
#define SLUICE_LOADER_OPTIONS_H_

#include <cstdint>
#include <optional>

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
  std::optional<int> num_threads;           // compute threads, >= 1; unset: this process's
                                            // share of the CPUs (all, or divided among
                                            // torchrun's local processes: LOCAL_WORLD_SIZE),
                                            // minus the cores that feed the GPU's JPEG engines
                                            // on the GPU path with decode_route auto
  std::optional<int> io_threads;            // file-reading threads, >= 1; unset: 2 (GPU path,
                                            // where they also parse headers: 4, and 8 for
                                            // batches over 64)
  std::optional<int> prefetch;              // batches prepared ahead of the consumer, >= 1;
                                            // unset: 2 (GPU path: enough for 128 images, 2-8)
  int rank = 0;                             // this process's part of every epoch: global
  int world_size = 1;                       // positions rank, rank + world_size, ...
  bool dct_scaling = true;                  // JPEG: decode at 1/2, 1/4, 1/8 when the resize
                                            // shrinks the region at least that much
  int64_t max_file_bytes = int64_t{1} << 30;  // larger files are refused before reading (a
                                              // bad sample, as a corrupt one), >= 1
  int64_t memory_cache_bytes = 0;  // encoded bytes kept in host memory after their first read,
                                   // at most this many (io/memory_cache.h); 0: no cache
  // GPU path only:
  DecodeRoute decode_route = DecodeRoute::kAuto;
  int64_t gpu_memory_budget = int64_t{3} << 29;  // 1.5 GiB: bytes of device memory (batches in
                                                 // flight, decoded regions, nvJPEG's buffers)
                                                 // and of pinned host memory for uploads
};

}  // namespace sluice

#endif  // SLUICE_LOADER_OPTIONS_H_
