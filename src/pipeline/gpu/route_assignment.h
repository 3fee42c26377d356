// Which decoder each sample of a GPU batch goes to. A sample may go to the JPEG engines or the
// hybrid decoder only when one resampling pass does all its geometry, it needs no EXIF rotation,
// its bitstream looks whole and the decoder takes the file; everything else goes to libjpeg-turbo.
// A pinned route sends what it can take there; "auto" asks the RouteScheduler how many of the
// engine-eligible samples go to the engines, and sends the rest of the hybrid-decodable ones to
// the CPU-side route the scheduler picks (a few, now and then, to the other to keep its cost
// current).
//
// Thread-safety: one batch at a time per call; the scheduler is thread-safe.
#ifndef SLUICE_PIPELINE_GPU_ROUTE_ASSIGNMENT_H_
#define SLUICE_PIPELINE_GPU_ROUTE_ASSIGNMENT_H_

#include "pipeline/gpu/gpu_batch.h"
#include "pipeline/gpu/route_scheduler.h"

namespace sluice {

// Sets the route of every good sample of `b`. `policy`: the loader's decode_route (resolved);
// `has_hardware`, `has_hybrid`: the decoders this machine has.
void AssignRoutes(GpuBatch* b, DecodeRoute policy, bool has_hardware, bool has_hybrid, RouteScheduler* scheduler);

}  // namespace sluice

#endif  // SLUICE_PIPELINE_GPU_ROUTE_ASSIGNMENT_H_
