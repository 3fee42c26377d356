// The GPU path for video clips. Each clip goes to one of the executor's decode sessions (a thread
// with its own CUDA stream), which decodes it on NVDEC, the GPU's video engines, and for each
// frame converts the NV12 picture to RGB and resamples and finishes it with the image kernels
// (kernels/resize: the clip's one crop and flip, scale, normalize, cast, layout) into its slot
// of the batch's (N, F, ...) output. Frames never leave the GPU.
//
// Transforms it runs: those that make one resampling pass per frame (Resize, crops, flips,
// RandomResizedCrop) and the finish (Normalize, dtype, layout). Others (colour, warps, erasing,
// blur, noise, user functions) are Unsupported when it is made: the Python Loader then decodes
// on the CPU and copies the batches over.
//
// Thread-safety: the ring calls it from one thread; its sessions run clips on their own threads.
#ifndef SLUICE_PIPELINE_GPU_CLIP_EXECUTOR_H_
#define SLUICE_PIPELINE_GPU_CLIP_EXECUTOR_H_

#include <memory>

#include "pipeline/batch_ring.h"
#include "pipeline/plan.h"
#include "video/clip_source.h"

namespace sluice {

// Errors: Unsupported for a transform list it does not run or a machine without NVDEC (the
// driver's libnvcuvid), FailedPrecondition for no GPU or no CUDA path in this build.
Result<std::unique_ptr<BatchWork>> CreateGpuClipExecutor(std::shared_ptr<const ClipSource> clips, const Plan& plan,
                                                         const LoaderOptions& options);

}  // namespace sluice

#endif  // SLUICE_PIPELINE_GPU_CLIP_EXECUTOR_H_
