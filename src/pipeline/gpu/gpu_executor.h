// The GPU path's work on the batch ring's batches: the GPU's JPEG engines, nvJPEG's hybrid
// decoder and libjpeg-turbo decode together, and a few fused kernels per batch do everything
// after decoding.
//
// Per batch (several in flight, each on its own stream):
//   read (Reader)    each sample's bytes; on the I/O thread, its header and its geometry (the
//                    crop window), and whether its bitstream looks whole.
//   plan (last read) the routes (route_assignment.h), the batch's memory (batch_layout.h).
//   decode           engines: batched ROI decode calls on an engine thread (decoders.h);
//                    hybrid: Huffman on a compute thread, IDCT on the batch's stream;
//                    cpu: libjpeg-turbo ROI/DCT-scaled decode, uploaded from pinned memory.
//                    Each sample's descriptor and taps are packed by the thread that decoded it.
//   launch (last)    the kernels (launch.h), then the ready event and the stream-ordered frees
//                    (batch_sync.h). No host thread waits for the GPU.
// The consumer gets the batch as soon as everything is queued; the output tensor's DeviceSync
// makes the consumer's stream wait for the ready event and frees the memory on that stream.
//
// Thread-safety: the ring calls it from one thread; its tasks run on its own threads.
#ifndef SLUICE_PIPELINE_GPU_GPU_EXECUTOR_H_
#define SLUICE_PIPELINE_GPU_GPU_EXECUTOR_H_

#include <memory>

#include "pipeline/batch_ring.h"
#include "pipeline/plan.h"
#include "sluice/source.h"

namespace sluice {

// The GPU executor for options.device (CUDA), or why it cannot run (no CUDA in this build, no
// GPU, nvJPEG missing for a pinned nvJPEG route, ...). `plan` must outlive it; `options` resolved.
// `io_max`: the I/O threads the loader's tuner may use (options.io_threads start active).
Result<std::unique_ptr<BatchWork>> CreateGpuExecutor(std::shared_ptr<const Source> source, const Plan& plan,
                                                     const LoaderOptions& options, int io_max = 0);

// Fault injection for tests: when set, batches no longer make the consumer's stream wait for
// their ready event (a test must then see torn data). Process-wide.
void SetSkipConsumerWaitForTesting(bool skip);

}  // namespace sluice

#endif  // SLUICE_PIPELINE_GPU_GPU_EXECUTOR_H_
