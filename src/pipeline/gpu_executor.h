// The GPU path: runs a Plan over a Source with the GPU's JPEG engines, nvJPEG's hybrid decoder
// and libjpeg-turbo together, and one fused kernel per batch for everything after decoding.
//
// Per batch (several in flight, each on its own stream):
//   I/O threads      read each file, parse its header, draw its geometry (crop window).
//   plan (last one)  splits the batch between routes (RouteScheduler), sizes and allocates the
//                    decoded-region arena, the tap table and the output from the DevicePool.
//   decode           engines: one batched ROI decode call per chunk, on the engine thread;
//                    hybrid: Huffman on a compute thread, IDCT on the batch's stream;
//                    cpu: libjpeg-turbo ROI/DCT-scaled decode, uploaded from pinned memory.
//                    Each sample's resize taps are packed by the thread that decoded it.
//   launch (last)    uploads descriptors and taps, waits for the engines' event, launches the
//                    resize+finish kernel, records the batch's ready event and frees what the
//                    kernel read, stream-ordered. No host thread waits for the GPU.
// The consumer gets the batch as soon as everything is queued; the output tensor's DeviceSync
// makes the consumer's stream wait for the ready event and frees the memory on that stream.
//
// Thread-safety: StartEpoch/Next from one thread; Stats from any thread.
#ifndef SLUICE_PIPELINE_GPU_EXECUTOR_H_
#define SLUICE_PIPELINE_GPU_EXECUTOR_H_

#include <memory>

#include "pipeline/batch_executor.h"
#include "pipeline/plan.h"
#include "sluice/source.h"

namespace sluice {

// The GPU executor for options.device (CUDA), or why it cannot run (no CUDA in this build, no
// GPU, nvJPEG missing for a pinned nvJPEG route, ...). `source` and `plan` must outlive it.
Result<std::unique_ptr<BatchExecutor>> CreateGpuExecutor(const Source& source, const Plan& plan,
                                                         const LoaderOptions& options);

// Fault injection for tests: when set, batches no longer make the consumer's stream wait for
// their ready event (a test must then see torn data). Process-wide.
void SetSkipConsumerWaitForTesting(bool skip);

}  // namespace sluice

#endif  // SLUICE_PIPELINE_GPU_EXECUTOR_H_
