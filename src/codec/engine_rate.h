// MeasureEngineRate: the JPEG engines' own rate on a set of files, in a bare loop. Whole images,
// decoded in calls of NvjpegHardwareDecoder::batch_width() files, each call waited for; nothing
// else (no reading, no crop, no resize). The ceiling the GPU path's engine route is measured
// against (bench/gpu_bench.py, row "engines alone, bare loop"). With `handles` > 1, as many
// threads run the loop at once, each on an nvJPEG handle of its own (bench/engine_capacity.py):
// their calls take turns as the loader's do, unless each handle has its own turn
// (codec/engine_turn.h), which measures whether the engines have room beyond one call at a time.
//
//   std::vector<std::vector<uint8_t>> files = ...;  // encoded JPEGs
//   Result<EngineRate> r = MeasureEngineRate(files, /*seconds=*/5.0, /*device=*/0);
//   double images_per_s = r->images / r->seconds;  // r->pixels / r->seconds: pixels/s
//
// Thread-safety: reentrant; calls take turns with every other engine call in the process (the
// decoder's lock).
#ifndef SLUICE_CODEC_ENGINE_RATE_H_
#define SLUICE_CODEC_ENGINE_RATE_H_

#include <cstdint>
#include <span>
#include <vector>

#include "sluice/status.h"

namespace sluice {

struct EngineRate {
  int64_t images = 0;    // decoded in the timed loop
  int64_t pixels = 0;    // theirs (width x height)
  double seconds = 0;    // of the timed loop
  int64_t files = 0;     // of the input, the ones the engines take (the others are left out)
  int engines = 0;       // the GPU's JPEG engines
  int call_width = 0;    // images per call
  int handles = 0;       // loops run at once
};

// Decodes `files` over and over for at least `seconds` (after one untimed call) on `device`, in
// calls of `images_per_engine` x engines images, in `handles` loops at once (images and pixels:
// their sum; seconds: the longest loop's).
// REQUIRES: seconds > 0, images_per_engine >= 1, handles >= 1. Fails when the build has no CUDA path, the device has no JPEG engines,
// or none of the files is one the engines take (baseline, 3 components).
Result<EngineRate> MeasureEngineRate(std::span<const std::vector<uint8_t>> files, double seconds, int device,
                                     int images_per_engine = 32, int handles = 1);

}  // namespace sluice

#endif  // SLUICE_CODEC_ENGINE_RATE_H_
