// EngineTurn: what calls to the JPEG engines take turns on: a lock, and the event after the last
// call (NvjpegHardwareDecoder waits for it before the next: see EngineWait there). One for the
// whole process by default: concurrent calls on one nvJPEG handle deadlocked inside nvJPEG 13.0.
// With the experiment knob SLUICE_ENGINE_TURNS=1 each handle (NvjpegContext) has its own, so that
// the bare loop (codec/engine_rate.h, `handles`) measures whether calls on separate handles may
// overlap: the host work of one beside the engines' work of another.
//
//   EngineTurn& turn = PerHandleEngineTurns() ? own : ProcessEngineTurn();
//   std::lock_guard<std::mutex> lock(turn.mu);  // then read or set turn.last_call
//
// Thread-safety: `last_call` only under `mu`.
#ifndef SLUICE_CODEC_ENGINE_TURN_H_
#define SLUICE_CODEC_ENGINE_TURN_H_

#include <cuda_runtime_api.h>

#include <mutex>

#include "core/env_knob.h"

namespace sluice {

struct EngineTurn {
  std::mutex mu;
  cudaEvent_t last_call = nullptr;  // not owned: the decoder that recorded it clears it
};

inline EngineTurn& ProcessEngineTurn() {
  static EngineTurn turn;
  return turn;
}

inline bool PerHandleEngineTurns() {
  static const bool per_handle = EnvKnob("SLUICE_ENGINE_TURNS", 0) == 1;
  return per_handle;
}

}  // namespace sluice

#endif  // SLUICE_CODEC_ENGINE_TURN_H_
