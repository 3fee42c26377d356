// EngineCallSizes: how an engine thread splits the n images of its turn into nvjpegDecodeBatchedEx
// calls of at most `width` images, given the sizes of the nvJPEG states it has made.
//
// Balanced (the default): ceil(n / width) calls of one size (the last smaller by the rounding).
// With full_calls_first, when a balanced call would need a state of its own that the slot bound
// has no room for (so a state would be initialized again, 0.1-0.2 s the engines wait through, and
// again when the calls go back to their usual size), and the largest state is larger than a
// balanced call: calls of that state's size, then the rest. E.g. `auto` holding calls of 224 on
// an H200, a probe of 240 images: 224 + 16 instead of 2 x 120.
//
// Pure; thread-safe.
#ifndef SLUICE_CODEC_ENGINE_CALL_SPLIT_H_
#define SLUICE_CODEC_ENGINE_CALL_SPLIT_H_

#include <algorithm>
#include <numeric>
#include <span>
#include <vector>

namespace sluice {

// Whether a call of m images needs no new state: a state of m up to m + max_pads images takes
// it (filled up with pads), or a new one fits within slot_bound image slots beside the others.
inline bool CallFitsStates(int m, std::span<const int> states, int slot_bound, int max_pads) {
  for (int s : states)
    if (s >= m && s - m <= max_pads) return true;
  return std::accumulate(states.begin(), states.end(), 0) + m <= slot_bound;
}

// REQUIRES: n >= 0, width >= 1, every state size in [1, width].
inline std::vector<int> EngineCallSizes(int n, int width, std::span<const int> states, int slot_bound,
                                        int max_pads, bool full_calls_first) {
  std::vector<int> sizes;
  if (n <= 0) return sizes;
  const int calls = (n + width - 1) / width;
  const int balanced = (n + calls - 1) / calls;
  const int largest = states.empty() ? 0 : *std::max_element(states.begin(), states.end());
  const int per_call = full_calls_first && largest > balanced && !CallFitsStates(balanced, states, slot_bound, max_pads)
                           ? largest
                           : balanced;
  for (int start = 0; start < n; start += per_call) sizes.push_back(std::min(per_call, n - start));
  return sizes;
}

}  // namespace sluice

#endif  // SLUICE_CODEC_ENGINE_CALL_SPLIT_H_
