// EngineStatePool: the nvJPEG hardware states (each initialized for one call size) that one or
// more NvjpegHardwareDecoders draw from. The decoders' calls take turns on one process-wide lock
// (NvjpegHardwareDecoder::Decode), so decoders that share a pool, as the GPU path's two engine
// threads do, initialize a call size once for all of them, and a size the route scheduler comes
// back to finds its state still made: 10-s `auto` rows on 143-KiB files (one H200) initialized 2
// states instead of 10-12 with a pool per thread. That saved no time (0.47-0.50 s either way:
// the first two states cost about 0.24 s each, later initializations milliseconds) and no rate;
// it frees and grows nvJPEG's buffers less often.
//
//   auto pool = std::make_shared<EngineStatePool>(ctx, /*decoders=*/2);
//   NvjpegHardwareDecoder::Create(ctx, 32, 1024, pads, pool);  // once per engine thread
//
// Each state remembers the stream of its last call and an event recorded after it: nvJPEG's
// engines write a state's buffers when a call is made, not in stream order, so a call on another
// stream (another decoder's) first waits on the host for that event (WaitForLastCall).
//
// Thread-safety: the states, the use counter and the padded run only under the engine turn.
// Lifetime: the pool outlives the decoders that hold it (they share its ownership); `ctx` outlives it.
#ifndef SLUICE_CODEC_ENGINE_STATE_POOL_H_
#define SLUICE_CODEC_ENGINE_STATE_POOL_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "codec/nvjpeg_context.h"
#include "codec/padded_run.h"

namespace sluice {

struct EngineState {
  nvjpegJpegState_t state = nullptr;
  int size = -1;                   // the call size it is initialized for; -1: none yet
  bool stale = false;              // a failed call: initialize again before the next
  int64_t last_use = 0;            // the pool's use count when a call last took it
  cudaStream_t stream = nullptr;   // where its last call ran; nullptr: none yet
  cudaEvent_t done = nullptr;      // recorded on `stream` after that call
};

class EngineStatePool {
 public:
  // Each state holds nvJPEG's buffers for its size; a pool makes at most this many.
  static constexpr int kMaxStates = 8;

  // For `decoders` decoders (>= 1): their states' slots may add up to that many times one
  // decoder's bound (NvjpegHardwareDecoder::slot_bound).
  EngineStatePool(NvjpegContext* ctx, int decoders);
  ~EngineStatePool();  // destroys the states and their events
  EngineStatePool(const EngineStatePool&) = delete;
  EngineStatePool& operator=(const EngineStatePool&) = delete;

  int decoders() const { return decoders_; }
  // Reserved for kMaxStates: pointers to states stay valid while states are added (not erased).
  std::vector<EngineState>& states() { return states_; }
  const std::vector<EngineState>& states() const { return states_; }
  int64_t NextUse() { return ++uses_; }
  // The run of calls padded into a larger state, over the pool's decoders (PaddedRun).
  PaddedRun& padded_run() { return padded_run_; }

  // A new, uninitialized state. REQUIRES: fewer than kMaxStates states.
  Result<EngineState*> Add();
  // Destroys *s (after WaitForLastCall), which leaves the pool; pointers past it move.
  Status Destroy(EngineState* s);
  // Before `s` is used on `stream`, initialized again or destroyed: waits on the host until its
  // last call's work is done, unless that call ran on `stream` itself (nullptr: any stream).
  static Status WaitForLastCall(const EngineState& s, cudaStream_t stream);
  // After a call on `stream` that used `s`.
  static Status RecordCall(EngineState* s, cudaStream_t stream);

 private:
  NvjpegContext* ctx_;
  const int decoders_;
  std::vector<EngineState> states_;
  int64_t uses_ = 0;
  PaddedRun padded_run_;
};

}  // namespace sluice

#endif  // SLUICE_CODEC_ENGINE_STATE_POOL_H_
