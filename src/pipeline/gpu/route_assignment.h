// Which decoder each sample of a GPU batch goes to. A sample may go to the JPEG engines or the
// hybrid decoder only when one resampling pass does all its geometry, it needs no EXIF rotation,
// its bitstream looks whole and the decoder takes the file (the engines: no side above their
// limit, which bounds nvJPEG's memory); everything else goes to libjpeg-turbo.
// A pinned route sends what it can take there; "auto" asks the RouteScheduler how many of the
// engine-eligible samples go to the engines, and sends the rest of the hybrid-decodable ones to
// the CPU-side route the scheduler picks (a few, now and then, to the other to keep its cost
// current). The engines take the eligible samples costliest for libjpeg-turbo by a prior (the
// encoded bytes above the region's last row, then the region's pixels at the DCT scale), so the
// CPU side gets the cheapest: at the same share it used 40% fewer cores on the H200
// (docs/benchmarks.md).
//
// Thread-safety: one batch at a time per call; the scheduler is thread-safe.
#ifndef SLUICE_PIPELINE_GPU_ROUTE_ASSIGNMENT_H_
#define SLUICE_PIPELINE_GPU_ROUTE_ASSIGNMENT_H_

#include "pipeline/gpu/gpu_batch.h"
#include "pipeline/gpu/route_scheduler.h"

namespace sluice {

// Sets the route of every good sample of `b`. `policy`: the loader's decode_route (resolved);
// `engine_max_side`: the largest image side the JPEG engines take (0: no engines); `has_hybrid`:
// whether there is a hybrid decoder; `dct_scaling`: whether the CPU decodes may downscale in the
// DCT domain.
void AssignRoutes(GpuBatch* b, DecodeRoute policy, int engine_max_side, bool has_hybrid, bool dct_scaling,
                  RouteScheduler* scheduler);

}  // namespace sluice

#endif  // SLUICE_PIPELINE_GPU_ROUTE_ASSIGNMENT_H_
