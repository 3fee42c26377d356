#include "codec/engine_rate.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <latch>
#include <memory>
#include <thread>

#include "codec/decoder.h"
#include "codec/nvjpeg_decoders.h"
#include "gpu/cuda_util.h"
#include "gpu/device.h"
#include "gpu/device_pool.h"
#include "gpu/pinned.h"

namespace sluice {

namespace {

struct EngineFile {
  const uint8_t* data;
  size_t size;
  int width, height;
};

// The files the engines take, the largest one's RGB8 bytes and its longest side.
std::vector<EngineFile> EngineFiles(std::span<const std::vector<uint8_t>> files, size_t* largest, int* side) {
  std::vector<EngineFile> usable;
  ImageDecoder header;
  *largest = 0;
  *side = 1;
  for (const std::vector<uint8_t>& f : files) {
    Result<ImageInfo> info = header.ReadHeader(f.data(), f.size());
    if (!info.ok() || info->format != ImageFormat::kJpeg || !HardwareDecodable(*info)) continue;
    usable.push_back(EngineFile{f.data(), f.size(), info->width, info->height});
    *largest = std::max(*largest, static_cast<size_t>(info->width) * info->height * 3);
    *side = std::max({*side, info->width, info->height});
  }
  return usable;
}

// One call of `jobs->size()` whole images, the next ones of `files` from `*next` on (in turn),
// into `out` (one slot of `slot` bytes per image); waits for it. Returns their pixels.
Result<int64_t> DecodeCall(NvjpegHardwareDecoder& hw, const std::vector<EngineFile>& files, size_t* next, uint8_t* out,
                           size_t slot, cudaStream_t stream, std::vector<NvjpegJob>* jobs) {
  int64_t pixels = 0;
  for (size_t k = 0; k < jobs->size(); ++k) {
    const EngineFile& f = files[*next];
    *next = (*next + 1) % files.size();
    (*jobs)[k] = NvjpegJob{f.data, f.size, Rect{0, 0, f.width, f.height}, out + k * slot,
                           static_cast<size_t>(f.width) * 3};
    pixels += int64_t{f.width} * f.height;
  }
  SLUICE_RETURN_IF_ERROR(hw.Decode(*jobs, stream));
  SLUICE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  return pixels;
}

// The files' bytes moved into one block from `alloc` (the loader's: gpu/pinned.h), where it
// has one: the loop then reads them from the memory the loader's reads go to. Returns the block.
std::shared_ptr<uint8_t> MoveFiles(std::vector<EngineFile>* files, RawAllocator alloc) {
  if (alloc.allocate == nullptr) return nullptr;
  size_t total = 0;
  for (const EngineFile& f : *files) total += f.size;
  std::shared_ptr<uint8_t> block(static_cast<uint8_t*>(alloc.Allocate(total)),
                                 [alloc, total](uint8_t* p) { alloc.Free(p, total); });
  if (block == nullptr) return nullptr;
  size_t at = 0;
  for (EngineFile& f : *files) {
    std::memcpy(block.get() + at, f.data, f.size);
    f.data = block.get() + at;
    at += f.size;
  }
  return block;
}

// One loop on a handle of its own, from file `first` on: made ready (with one untimed call, in
// which nvJPEG initializes the state for the call size), then, once every loop is (`ready`),
// calls for `seconds`.
Result<EngineRate> OneLoop(const std::vector<EngineFile>& usable, size_t first, size_t slot, int side, double seconds,
                           int device, int images_per_engine, std::latch* ready) {
  EngineRate rate;
  std::shared_ptr<DevicePool> pool;
  std::unique_ptr<NvjpegContext> ctx;
  std::unique_ptr<NvjpegHardwareDecoder> hw;
  CudaStream stream;
  void* out = nullptr;
  size_t bytes = 0;
  std::vector<NvjpegJob> jobs;
  size_t next = first;
  const auto call = [&] {
    return DecodeCall(*hw, usable, &next, static_cast<uint8_t*>(out), slot, stream.get(), &jobs);
  };
  const Status made = [&]() -> Status {
    SLUICE_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
    SLUICE_ASSIGN_OR_RETURN(pool, DevicePool::Create(device, int64_t{16} << 30));
    SLUICE_ASSIGN_OR_RETURN(ctx, NvjpegContext::Create(pool.get()));
    if (ctx->hardware_handle() == nullptr) return ctx->hardware_status().WithPrefix("no JPEG engines");
    SLUICE_ASSIGN_OR_RETURN(hw, NvjpegHardwareDecoder::Create(ctx.get(), images_per_engine, side));
    SLUICE_RETURN_IF_ERROR(stream.Create());
    rate.engines = ctx->hardware_engines();
    rate.call_width = hw->batch_width();
    bytes = slot * static_cast<size_t>(rate.call_width);
    SLUICE_ASSIGN_OR_RETURN(out, pool->Allocate(bytes, stream.get(), /*enforce_budget=*/false));
    // The engines write `out` when a call is made, not in stream order: it must be ready first.
    SLUICE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream.get()));
    jobs.resize(static_cast<size_t>(rate.call_width));
    return call().status();
  }();
  ready->arrive_and_wait();
  Status st = made;
  const auto t0 = std::chrono::steady_clock::now();
  while (st.ok()) {
    Result<int64_t> pixels = call();
    st = pixels.status();
    if (!st.ok()) break;
    rate.images += rate.call_width;
    rate.pixels += *pixels;
    rate.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rate.seconds >= seconds) break;
  }
  if (out != nullptr) {
    pool->Free(out, bytes, stream.get());
    cudaStreamSynchronize(stream.get());
  }
  if (!st.ok()) return st.WithPrefix(made.ok() ? "an engine call" : "setting up an engine loop");
  return rate;
}

}  // namespace

Result<EngineRate> MeasureEngineRate(std::span<const std::vector<uint8_t>> files, double seconds, int device,
                                     int images_per_engine, int handles) {
  SLUICE_CHECK(seconds > 0 && images_per_engine >= 1 && handles >= 1);
  SLUICE_RETURN_IF_ERROR(CheckCudaDevice(device));
  SLUICE_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  size_t slot = 0;
  int side = 1;
  std::vector<EngineFile> usable = EngineFiles(files, &slot, &side);
  if (usable.empty())
    return InvalidArgument("none of the ", files.size(), " files is a JPEG the engines take (baseline, 3 components)");
  const std::shared_ptr<uint8_t> moved = MoveFiles(&usable, FileReadAllocator(FileReadBlocks()));

  std::latch ready(handles);
  std::vector<Result<EngineRate>> loops(static_cast<size_t>(handles), Result<EngineRate>(EngineRate{}));
  std::vector<std::thread> threads;
  for (int k = 1; k < handles; ++k)
    threads.emplace_back([&, k] {
      loops[static_cast<size_t>(k)] = OneLoop(usable, usable.size() * static_cast<size_t>(k) / static_cast<size_t>(handles),
                                              slot, side, seconds, device, images_per_engine, &ready);
    });
  loops[0] = OneLoop(usable, 0, slot, side, seconds, device, images_per_engine, &ready);
  for (std::thread& t : threads) t.join();

  EngineRate rate;
  rate.files = static_cast<int64_t>(usable.size());
  rate.handles = handles;
  for (Result<EngineRate>& r : loops) {
    if (!r.ok()) return r.status();
    rate.images += r->images;
    rate.pixels += r->pixels;
    rate.seconds = std::max(rate.seconds, r->seconds);
    rate.engines = r->engines;
    rate.call_width = r->call_width;
  }
  return rate;
}

}  // namespace sluice
