// The kernels of one GPU batch. PackSample writes a decoded sample's resampling descriptor and tap
// table into the batch's pinned table (on the thread that decoded it); EnqueueKernels, once every
// sample is decoded, fills the per-kernel descriptors of the samples kept, uploads the table,
// makes the batch's stream wait for the engines, and launches, in stream order: the resampling
// (resize, or resize + warp) with the finish, or into RGB8 images when colour steps follow; the
// pixel passes (colour steps in place, then a filter into the sample's other image); the colour +
// finish kernel. Erasing and noise ride in whichever kernel writes the finished sample.
//
// Thread-safety: PackSample for distinct samples may run on many threads; EnqueueKernels on one.
#ifndef SLUICE_PIPELINE_GPU_LAUNCH_H_
#define SLUICE_PIPELINE_GPU_LAUNCH_H_

#include <cstdint>
#include <vector>

#include "kernels/finish/finish_gpu.h"
#include "kernels/resize/resize_cpu.h"
#include "pipeline/gpu/gpu_batch.h"
#include "pipeline/plan.h"

namespace sluice {

// REQUIRES: s.region holds the decoded region (s.roi's size) the last segment reads.
Status PackSample(const GpuBatch& b, GpuSample* s, ResizeScratch* scratch);

// `kept`: the samples that decoded, in order (output slot j for kept[j]); `sample_bytes`: one
// output sample's bytes (fixed-size plans). REQUIRES: every kept sample packed.
Status EnqueueKernels(GpuBatch* b, const std::vector<int>& kept, const Plan& plan, const GpuFinish& finish,
                      int64_t sample_bytes);

}  // namespace sluice

#endif  // SLUICE_PIPELINE_GPU_LAUNCH_H_
