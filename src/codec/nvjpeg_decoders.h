// The two nvJPEG routes of the GPU path. Both write RGB8 interleaved pixels of a region (ROI, in
// stored coordinates of the full-resolution image) into device memory the caller owns.
//
//   NvjpegHardwareDecoder  the GPU's JPEG engines, batched (nvjpegDecodeBatchedEx) with one ROI
//                          per image. Baseline JPEG only.
//   NvjpegHybridDecoder    Huffman decoding on the calling CPU thread, then the upload and the
//                          IDCT/colour conversion on the GPU (nvJPEG's decoupled API). Takes
//                          progressive files too. Each worker thread has two decoder states used
//                          in turn, so the next image's Huffman pass overlaps the previous one's
//                          GPU work; a state is reused only after its GPU work finished.
//
// Thread-safety: a NvjpegHardwareDecoder is driven by one thread at a time; the Decode calls of
// all of them in the process take turns (see Decode), and decoders may share their states
// (codec/engine_state_pool.h). NvjpegHybridDecoder::Decode may run on many
// threads at once, each with its own `worker` index.
#ifndef SLUICE_CODEC_NVJPEG_DECODERS_H_
#define SLUICE_CODEC_NVJPEG_DECODERS_H_

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "codec/engine_state_pool.h"
#include "codec/image_info.h"
#include "codec/nvjpeg_context.h"

namespace sluice {

struct NvjpegJob {
  const uint8_t* data = nullptr;  // encoded file; valid until the decode call returns
  size_t size = 0;
  Rect roi;                       // stored coordinates, full resolution
  uint8_t* out = nullptr;         // device memory, roi.h rows of `pitch` bytes
  size_t pitch = 0;
};

// Whether the JPEG engines take this file: baseline, 3 components, 4:4:4/4:2:2/4:2:0/4:4:0.
bool HardwareDecodable(const ImageInfo& info);
// Whether the engines may be given it: HardwareDecodable, no side above `max_side` (the bound
// NvjpegHardwareDecoder puts on nvJPEG's memory).
inline bool EnginesTake(const ImageInfo& info, int max_side) {
  return HardwareDecodable(info) && info.width <= max_side && info.height <= max_side;
}
// Whether the hybrid decoder takes it: any 1- or 3-component JPEG (CMYK/YCCK go to the CPU,
// whose conversion matches PIL's).
bool HybridDecodable(const ImageInfo& info);

// What fills a call up to its state's size (NvjpegHardwareDecoder::Decode), and how many states
// the decoder keeps. The loader's default is kTinyJpegBoundedSlots (SLUICE_ENGINE_PAD selects
// another: docs/benchmarks.md has the rows that chose it).
enum class EnginePads {
  kSmallestFile,          // a corner of the call's smallest file: the engines decode the whole file
  kTinyJpeg,              // a 16 x 16 JPEG made once (still about 25 us a pad on an H200: the
                          // per-image part of a call, about a 28-KiB file's time)
  kTinyJpegBoundedSlots,  // the same, and the states hold at most batch_width() + kMaxPads
                          // image slots in all (nvJPEG's buffers, one per slot)
};

class NvjpegHardwareDecoder {
 public:
  // REQUIRES: ctx.hardware_handle() != nullptr; `ctx` outlives the decoder; max_side >= 1.
  // Calls of up to `images_per_engine` images per engine (32: a batch of 256 is two calls of
  // 128 on the H100's 7 engines; calls of 86 were no faster).
  // Output: interleaved RGB, after which nvJPEG 13.0 launches one small kernel per image
  // (rgba2rgb: the engines write RGBA). The one format they write with no kernel, planar YUV
  // (NV12 and YUY2 are refused in batched calls), decoded 23-33% fewer images/s in a bare loop
  // of calls of 128 on the H100 (11,787 vs 15,350 on 143 KiB 4:4:4 files; 16,363 vs 23,474 on
  // 28 KiB 4:2:0), so the per-image kernels stay.
  // It takes images of up to `max_side` pixels a side (EnginesTake; see Decode for why).
  // Its states come from `states`, shared with the other decoders made with it (of the same
  // `images_per_engine` and `pads`); nullptr: a pool of its own.
  static Result<std::unique_ptr<NvjpegHardwareDecoder>> Create(NvjpegContext* ctx, int images_per_engine,
                                                               int max_side,
                                                               EnginePads pads = EnginePads::kSmallestFile,
                                                               std::shared_ptr<EngineStatePool> states = nullptr);
  ~NvjpegHardwareDecoder();

  // Images per nvjpegDecodeBatchedEx call: a multiple of the engine count.
  int batch_width() const { return width_; }

  // Decodes up to batch_width() jobs with one call on `stream`. The call may block until the
  // images are decoded (on the H100 it did), and the engines write `out` when it is made, not in
  // stream order: `out` must be free for writing before the call (a device-side wait on `stream`
  // does not hold them back).
  // Calls of different decoders take turns on a process-wide lock: concurrent calls (one state
  // each, on one handle) deadlock inside nvJPEG 13.0 now and then, every caller waiting in
  // cuEventSynchronize for good (codec/engine_turn.h: the experiment knob that gives each handle
  // its own turn).
  // On error (a stream the engines reject) nothing of this call can be trusted: decode these
  // jobs another way.
  // Device memory: nvJPEG keeps buffers per image slot of a state (outside the loader's pool),
  // grown inside a decode call to the largest image the slot has had, the old ones freed with
  // cuMemFree, which waits for the whole device; it frees them too when a state is initialized
  // again. So the decoder takes images of up to max_side a side (6 + 3 slots grown to 1024 x 1024
  // held 40 MiB on an H200; larger images would grow every slot towards their size), makes each
  // state once per call size and never initializes one again (except after a failed call, and
  // to keep the slots within their bound, below): once the slots have grown, calls allocate and
  // free nothing (tests/engine_memory).
  // The call waits for work nvJPEG queues on the GPU: under NCCL with CUDA's default of 8 work
  // queues that work can sit behind an NCCL kernel waiting for another rank, and ranks hung
  // (issue 21); the Python package sets CUDA_DEVICE_MAX_CONNECTIONS=32 in a rank (sluice/_cuda_queues.py).
  // Initializing a state also takes 0.1-0.2 s (measured on H200s: the last, short batch of an
  // epoch waited that long). So a call smaller than an initialized size within kMaxPads of it
  // uses that state, filled up with pads (EnginePads) decoded into scratch memory: with
  // kSmallestFile tiny regions of its smallest file, whose whole bitstream the engines still
  // decode (a call of 192 in a state of 208 decodes 8% more files, the smallest); with the tiny
  // pads, a 16 x 16 JPEG of a few hundred bytes. With kTinyJpegBoundedSlots, a size padded
  // PaddedRun::kCalls calls in a row (a share `auto` holds) gets a state of its own where it fits
  // within the bound below beside the state it was padded into. Callers keep the sizes few
  // (RouteScheduler rounds the engines' share); once kMaxStates sizes exist, a call takes the
  // smallest state that holds it, however many pads that needs, or is cut into calls of the
  // largest. With
  // kTinyJpegBoundedSlots, a call that no state holds and whose state would take the slots past
  // the bound goes into the least recently used state, initialized again for it (its buffers
  // freed), and states used less recently still are destroyed until the slots fit: `auto`'s
  // one look at the engines alone (calls of 128 beside its state of 208) costs two
  // initializations then, instead of a second state's memory for the rest of the run. The
  // states (and the bound) belong to the pool: decoders sharing it find the sizes each other made.
  // REQUIRES: every job's image is one the engines take (EnginesTake(info, max_side())).
  Status Decode(std::span<const NvjpegJob> jobs, cudaStream_t stream);

  // The largest image side this decoder takes (EnginesTake).
  int max_side() const { return max_side_; }

  // Initializes a state for calls of exactly n images now, unless one exists (a later call of n
  // then initializes nothing). Errors: InvalidArgument unless 1 <= n <= batch_width();
  // ResourceExhausted when kMaxStates states exist.
  Status Reserve(int n);

  // Each state holds nvJPEG's buffers for its size; a pool holds at most this many.
  static constexpr int kMaxStates = EngineStatePool::kMaxStates;
  // A call may be padded by up to kMaxPads images: kSmallestFile's pads are whole files the engines
  // decode (a call of 128 in a state of 208 would do about 1.3x the work of one in a state of 128).
  static constexpr int kMaxPads = 32;
  // The image slots of the pool's states initialized now (for tests), and their sizes, and the
  // most image slots they may hold in all (kTinyJpegBoundedSlots: the pool's decoders times
  // batch_width() + kMaxPads; otherwise no bound): for EngineCallSizes. Any thread (they wait
  // for the turn).
  int state_slots() const;
  std::vector<int> state_sizes() const;
  int slot_bound() const;
  // States this decoder initialized so far (for tests: a padded call initializes none; stats). Any thread.
  int64_t state_initializations() const { return inits_.load(std::memory_order_relaxed); }
  // Nanoseconds spent making, initializing and destroying states, since creation: the engines
  // wait through it (it holds the turn) and busy_ns() includes it. Any thread may read it.
  int64_t state_ns() const { return state_ns_.load(std::memory_order_relaxed); }
  // Nanoseconds Decode calls held the engines (the process-wide turn), since creation: with the
  // call blocking until its images are decoded, the time the engines worked for this decoder.
  // Any thread may read it.
  int64_t busy_ns() const { return busy_ns_.load(std::memory_order_relaxed); }
  // Nanoseconds Decode calls waited for the turn while another decoder's call held it, since
  // creation. Any thread may read it.
  int64_t turn_wait_ns() const { return turn_wait_ns_.load(std::memory_order_relaxed); }
  // nvjpegDecodeBatchedEx calls made so far (images / calls: their mean size). Any thread.
  int64_t calls() const { return calls_.load(std::memory_order_relaxed); }
  // Pads those calls decoded (images filling a call up to its state's size). Any thread.
  int64_t pads_decoded() const { return pads_decoded_.load(std::memory_order_relaxed); }

 private:
  NvjpegHardwareDecoder(NvjpegContext* ctx, int max_side, EnginePads pads, std::shared_ptr<EngineStatePool> states)
      : ctx_(ctx), max_side_(max_side), pads_(pads), pool_(std::move(states)) {}
  // The rest under the turn (ctx_->engine_turn()).
  // A state for calls of n images on `stream`: one of size n, or a larger one within the padding
  // limit; nullptr when kMaxStates states exist and none holds n images.
  Result<EngineState*> StateFor(int n, cudaStream_t stream);
  // kTinyJpegBoundedSlots: for a call of n that no state holds, when a new state would take the
  // slots past the bound, the state to initialize again for it (the least recently used; older
  // ones destroyed until the slots fit); nullptr when a new state fits.
  Result<EngineState*> MakeRoom(int n);
  // One nvjpegDecodeBatchedEx call of `jobs` in `state`, filled up with pads to its size.
  Status DecodeOneCall(std::span<const NvjpegJob> jobs, EngineState* state, cudaStream_t stream);
  // The k-th pad of a call whose smallest file is `smallest`, into pad_out_.
  NvjpegJob Pad(const NvjpegJob& smallest, int k) const;
  Status MakeTinyPad();  // tiny_pad_, in page-locked memory as the loader's files are
  Result<EngineState*> AddState();           // a new, uninitialized state in the pool
  Status Initialize(EngineState* s, int n);  // s for calls of n images
  Status WaitForEarlierCalls();              // see EngineWait()
  Status RecordCall(cudaStream_t stream);    // after a call, for WaitForEarlierCalls
  int SlotsInUse() const;                    // state_slots(), in the turn

  NvjpegContext* ctx_;
  const int max_side_;
  const EnginePads pads_;
  std::shared_ptr<EngineStatePool> pool_;
  std::atomic<int64_t> inits_{0};  // written under the turn; read by stats
  std::atomic<int64_t> state_ns_{0};
  std::atomic<int64_t> busy_ns_{0};
  std::atomic<int64_t> turn_wait_ns_{0};
  std::atomic<int64_t> calls_{0};
  std::atomic<int64_t> pads_decoded_{0};
  uint8_t* pad_out_ = nullptr;  // device scratch for width_ pads, from the first padded call
  uint8_t* tiny_pad_ = nullptr;  // the tiny pads' file; nullptr: kSmallestFile
  size_t tiny_pad_size_ = 0;
  cudaEvent_t last_call_ = nullptr;  // recorded after each call (see WaitForEarlierCalls)
  std::vector<nvjpegDecodeParams_t> params_;
  int width_ = 0;
};

class NvjpegHybridDecoder {
 public:
  static Result<std::unique_ptr<NvjpegHybridDecoder>> Create(NvjpegContext* ctx, int workers);
  ~NvjpegHybridDecoder();

  // Huffman-decodes `job` on this thread, then queues its upload and GPU stages on `stream`.
  // REQUIRES: 0 <= worker < workers; one thread per worker index at a time.
  Status Decode(int worker, const NvjpegJob& job, cudaStream_t stream);

 private:
  struct Slot {
    nvjpegJpegState_t state = nullptr;
    nvjpegBufferPinned_t pinned = nullptr;
    nvjpegBufferDevice_t device = nullptr;
    nvjpegJpegStream_t stream = nullptr;
    nvjpegDecodeParams_t params = nullptr;
    cudaEvent_t done = nullptr;
    bool pending = false;  // `done` was recorded after GPU work that used this slot
  };
  struct Worker {
    Slot slots[2];
    int next = 0;
  };
  explicit NvjpegHybridDecoder(NvjpegContext* ctx) : ctx_(ctx) {}
  NvjpegContext* ctx_;
  nvjpegJpegDecoder_t decoder_ = nullptr;
  std::vector<Worker> workers_;
};

}  // namespace sluice

#endif  // SLUICE_CODEC_NVJPEG_DECODERS_H_
