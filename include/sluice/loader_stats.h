// LoaderStats: what a loader did since it was made (Loader::stats): volumes, time per stage,
// memory, decoder routes and the samples it skipped.
//
// Thread-safety: a plain value.
#ifndef SLUICE_LOADER_STATS_H_
#define SLUICE_LOADER_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sluice/types.h"

namespace sluice {

struct SkippedSample {
  std::string path;
  int64_t index = 0;   // dataset index
  int64_t epoch = 0;
  std::string reason;
};

// One window in which decode_route "auto" measured a CPU share (pipeline/gpu/route_scheduler.h).
struct RouteWindow {
  double cpu_share = 0;     // of each batch, the part sent to the CPU side
  double images_per_s = 0;  // the batches launched in the window
  double seconds = 0;
  double engine_busy = 0;   // the engines' busy share in it
  std::string phase;        // "hold" (the share kept), "probe" (one tried) or "check" (back at
                            // the kept share after a probe gained)
};

// Counters since creation (or the last ResetStats). Stage times are summed over threads.
struct LoaderStats {
  int64_t samples = 0;        // samples delivered in batches
  int64_t batches = 0;
  int64_t bytes_read = 0;
  int64_t video_frames_decoded = 0;  // video clips: pictures decoded (wanted or passed on the way)
  double read_s = 0;          // reading files (I/O threads)
  double decode_s = 0;        // header parse, parameter draw, decode, EXIF rotation
  double transform_s = 0;     // resampling (crop, resize, flip, pad)
  double collate_s = 0;       // scale, normalize, cast and layout into the batch
  // The four stages' CPU time (the threads' own clocks; wall time above): lower when the threads
  // wait for a core (a busy machine) or, on the GPU path, for the device.
  double read_cpu_s = 0, decode_cpu_s = 0, transform_cpu_s = 0, collate_cpu_s = 0;
  double wait_s = 0;          // time the consumer spent blocked in Next()
  double wall_s = 0;          // time since creation or ResetStats
  int num_threads = 0;        // compute threads taking work now (tuned unless given)
  int io_threads = 0;
  int prefetch = 0;           // batches kept in flight now (tuned unless given)
  std::string tuning;         // the tuner's last decision and why (pipeline/load_tuner.h)
  bool tuning_settled = false;
  int64_t host_memory_in_use = 0;   // bytes: pooled buffers handed out, and the threads' scratch
  int64_t host_memory_peak = 0;     // (decoded pixels, intermediate images; a peak per thread)
  int64_t host_memory_cached = 0;   // bytes: freed pooled buffers kept for reuse
  // GPU path:
  int64_t gpu_memory_in_use = 0;    // bytes of sluice's device pool handed out (or freed on a
                                    // stream that has not passed the free yet)
  int64_t gpu_memory_peak = 0;      // peak bytes the pool held from the driver
  int64_t gpu_memory_reserved = 0;  // bytes the pool holds from the driver now (in use + cached)
  int64_t gpu_memory_reserved_nvjpeg = 0;  // nvJPEG's buffers' part of gpu_memory_reserved
  int64_t gpu_memory_allocated = 0;  // the driver's count of the pool's live allocations
  int64_t gpu_memory_allocated_nvjpeg = 0;  // (frees still pending on a stream not included)
  int64_t gpu_pool_overflows = 0;   // allocations past the pool's cap (gpu/device_pool.h)
  // Page-locked host bytes: staging, nvJPEG's, and the blocks files are read into (whose buffers
  // host_memory_* also counts); at the peak, and held now (in use or kept for reuse).
  int64_t pinned_memory_peak = 0;
  int64_t pinned_memory_held = 0;
  int64_t route_samples[kNumRoutes] = {0, 0, 0};  // samples handed out, by decode route (kRoutes order)
  int64_t route_pixels[kNumRoutes] = {0, 0, 0};   // their files' pixels (width x height): the engines
                                                  // decode whole files, so their work follows these
  int64_t engine_state_inits = 0;   // nvJPEG engine states initialized (per call size; since creation)
  double engine_state_s = 0;        // the time those and their destruction took (the engines wait
                                    // through it; part of engine_busy_s; since creation)
  int64_t engine_calls = 0;         // nvJPEG calls on the engines (since creation)
  int64_t engine_pads = 0;          // pads those calls decoded to fill a call up to its nvJPEG
                                    // state's size (since creation)
  std::vector<RouteWindow> route_windows;  // decode_route "auto": its last 128 windows, oldest
                                           // first (since creation)
  int gpu_local_cpus = 0;           // the CPUs near the GPU the loader's threads are kept on; 0: not kept
  double engine_busy_s = 0;         // time the JPEG engines decoded for this loader (its calls take
                                    // turns, so at most wall_s): engine_busy_s / wall_s is their busy share
  // The rest of the engine threads' time, summed over them: waiting for their turn (another
  // thread's call held the engines), waiting until a batch's memory may be written, packing the
  // decoded samples' resampling tables. With engine_busy_s, what keeps the engines idle.
  double engine_turn_wait_s = 0, engine_memory_wait_s = 0, engine_pack_s = 0;
  // The memory cache (LoaderOptions::memory_cache_bytes > 0): reads served from it and not.
  int64_t cache_hits = 0, cache_misses = 0;
  int64_t cache_bytes = 0, cache_budget = 0;  // held now, and the most it may hold
  // Streamed shards (a streaming WebDataset): streams opened (of them, read from the disk
  // cache's copies), image bytes taken from them, the most held at once waiting to be read, and
  // the memory of the buffers that hold them (in use, and idle for reuse).
  int64_t stream_shards = 0, stream_shards_from_disk_cache = 0;
  int64_t stream_bytes = 0, stream_held_peak = 0, stream_buffer_bytes = 0;
  // The disk cache of remote shards: lookups that found a copy and not, copies evicted for the
  // budget, bytes in the folder and the budget.
  int64_t disk_cache_hits = 0, disk_cache_misses = 0, disk_cache_evictions = 0;
  int64_t disk_cache_bytes = 0, disk_cache_budget = 0;
  int64_t skipped_count = 0;
  std::vector<SkippedSample> skipped;  // the first 1000
};

}  // namespace sluice

#endif  // SLUICE_LOADER_STATS_H_
