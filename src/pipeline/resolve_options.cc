#include "pipeline/resolve_options.h"

#include <algorithm>
#include <optional>

#include "core/thread_pool.h"
#include "gpu/device.h"

namespace sluice {

namespace {

// With the JPEG engines in use (decode_route auto), the CPU-side decoders leave cores to what
// feeds the engines: on the H100 machine the engine threads take 1.2-1.4 cores, the I/O threads
// 0.5-1.3 (bench/gpu_probe.py's thread groups). Measured in two calls on two such machines
// (16 vCPUs, 2026-11-25): 8 threads with 2/16 of each batch added 9% to the engines alone on
// 143-KiB files and took 22% off on 28-KiB files; 12 threads with 3/16 added 5% and 10%.
// Earlier, with one engine thread and a fixed split, 8 did best (17,800 images/s against 17,000
// with 12). So: all but 4 cores, at least half of them.
constexpr int kFeederCores = 4;

Status CheckAtLeastOne(const char* name, const std::optional<int>& value) {
  if (value && *value < 1) return InvalidArgument(name, " must be >= 1, got ", *value);
  return Status::OK();
}

}  // namespace

Status CheckOptions(const LoaderOptions& o, const Plan& plan) {
  if (o.batch_size < 1) return InvalidArgument("batch_size must be >= 1, got ", o.batch_size);
  SLUICE_RETURN_IF_ERROR(CheckAtLeastOne("num_threads", o.num_threads));
  SLUICE_RETURN_IF_ERROR(CheckAtLeastOne("io_threads", o.io_threads));
  SLUICE_RETURN_IF_ERROR(CheckAtLeastOne("prefetch", o.prefetch));
  if (o.world_size < 1) return InvalidArgument("world_size must be >= 1, got ", o.world_size);
  if (o.rank < 0) return InvalidArgument("rank must be >= 0, got ", o.rank);
  if (o.rank >= o.world_size)
    return InvalidArgument("rank must be in [0, world_size) = [0, ", o.world_size, "), got ", o.rank);
  if (o.dtype == DType::kInt64) return InvalidArgument("dtype must be uint8, float16 or float32, not int64");
  if (o.dtype == DType::kUInt8 && plan.normalize())
    return InvalidArgument("Normalize needs a float output: pass dtype='float32' or 'float16'");
  if (o.dtype == DType::kUInt8 && plan.has_noise())
    return InvalidArgument("GaussianNoise needs a float output: pass dtype='float32' or 'float16'");
  if (o.gpu_memory_budget < 1) return InvalidArgument("gpu_memory_budget must be >= 1, got ", o.gpu_memory_budget);
  if (o.max_file_bytes < 1) return InvalidArgument("max_file_bytes must be >= 1, got ", o.max_file_bytes);
  if (o.memory_cache_bytes < 0)
    return InvalidArgument("memory_cache_bytes must be >= 0, got ", o.memory_cache_bytes);
  if (o.device.type == DeviceType::kCUDA) return CheckCudaDevice(o.device.index);
  if (o.decode_route != DecodeRoute::kAuto)
    return InvalidArgument("decode_route='", DecodeRouteName(o.decode_route),
                           "' needs device='cuda' (the CPU path decodes with libjpeg-turbo)");
  return Status::OK();
}

LoaderOptions ResolveOptions(LoaderOptions o) {
  const bool gpu = o.device.type == DeviceType::kCUDA;
  const int cpus = ThreadPool::CpuShare();  // this rank's share under torchrun
  const bool engines_fed = gpu && o.decode_route == DecodeRoute::kAuto && cpus > 2 * kFeederCores;
  if (!o.num_threads) o.num_threads = engines_fed ? std::max(cpus / 2, cpus - kFeederCores) : cpus;
  if (!o.io_threads) o.io_threads = gpu ? GpuIoThreads(o.batch_size) : 2;
  if (!o.prefetch) o.prefetch = gpu ? GpuPrefetch(o.batch_size) : 2;
  return o;
}

LoadTuner::Scope TuningOf(const LoaderOptions& given) {
  LoadTuner::Scope scope;
  // On the GPU path the compute threads stay all: the route scheduler sizes their share.
  const bool gpu = given.device.type == DeviceType::kCUDA;
  scope.threads = !given.num_threads && !gpu;
  const bool large = gpu && given.batch_size > kSmallBatch;  // the prefetch stays GpuPrefetch's 2
  if (gpu)
    scope.fixed = given.prefetch || !large
                      ? "io_threads and prefetch were given (the GPU path's decoding split is its route scheduler's)"
                      : "io_threads were given; on the GPU path batches of over 64 images keep prefetch 2";
  scope.prefetch = !given.prefetch && !large;
  scope.io_max = given.io_threads ? 0 : kMaxTunedIoThreads;
  return scope;
}

}  // namespace sluice
