#include "pipeline/gpu/batch_sync.h"

#include <atomic>
#include <vector>

#include "gpu/cuda_util.h"
#include "pipeline/gpu/gpu_executor.h"

namespace sluice {

namespace {
std::atomic<bool> g_skip_consumer_wait{false};
}  // namespace

void SetSkipConsumerWaitForTesting(bool skip) { g_skip_consumer_wait.store(skip); }

Status BatchSync::ConsumeOn(uintptr_t stream) {
  const cudaStream_t s = DlpackStream(stream);
  if (!g_skip_consumer_wait.load(std::memory_order_relaxed))
    SLUICE_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(s, buffer_->ready, 0));
  buffer_->release_stream.store(s);
  return Status::OK();
}

void ReleaseBatch(GpuBatch* b, DevicePool* pool) {
  // The output's ready event (after the kernels, or after its allocation when nothing ran): the
  // buffer owns it; consumers wait on it, and an unclaimed buffer is freed after it.
  if (b->output != nullptr && b->output->ready == nullptr) {
    cudaEvent_t ready = nullptr;
    if (cudaEventCreateWithFlags(&ready, cudaEventDisableTiming) == cudaSuccess) {
      cudaEventRecord(ready, b->stream);
      b->output->ready = ready;
    } else {
      cudaStreamSynchronize(b->stream);
    }
  }
  // Everything the kernels read goes back stream-ordered after them; host buffers once the stream
  // has passed this point (a host callback, which makes no CUDA calls).
  if (b->used_hw && b->hw_done != nullptr) cudaStreamWaitEvent(b->stream, b->hw_done, 0);
  if (b->table_dev != nullptr) pool->Free(b->table_dev, b->table.bytes, b->stream);
  if (b->arena != nullptr) pool->Free(b->arena, b->arena_bytes, b->stream);
  if (b->mid != nullptr) pool->Free(b->mid, b->mid_bytes, b->stream);
  b->table_dev = b->arena = b->mid = nullptr;
  auto* keep = new std::vector<std::shared_ptr<uint8_t>>();
  if (b->table_host) keep->push_back(std::move(b->table_host));
  for (GpuSample& s : b->gpu) {
    if (s.own_region) pool->Free(s.region, s.region_bytes, b->stream);
    s.own_region = false;
    if (s.staging) keep->push_back(std::move(s.staging));
    if (s.bytes.owner) keep->push_back(std::move(s.bytes.owner));
  }
  const cudaError_t e = cudaLaunchHostFunc(
      b->stream, [](void* p) { delete static_cast<std::vector<std::shared_ptr<uint8_t>>*>(p); }, keep);
  if (e != cudaSuccess) {
    cudaStreamSynchronize(b->stream);
    delete keep;
  }
}

void HandOverOutput(const GpuBatch& b, const std::vector<int>& kept, const Plan& plan, const LoaderOptions& options,
                    Batch* out) {
  auto sync = std::make_shared<BatchSync>(b.output);
  std::shared_ptr<void> owner(b.output, b.output->data);
  const int64_t n = static_cast<int64_t>(kept.size());
  const bool nchw = options.layout == Layout::kNCHW;
  if (plan.fixed_size()) {
    const int64_t H = plan.out_height(), W = plan.out_width();
    std::vector<int64_t> shape = nchw ? std::vector<int64_t>{n, 3, H, W} : std::vector<int64_t>{n, H, W, 3};
    out->images = Tensor(owner, b.output->data, std::move(shape), options.dtype, options.device, sync);
    return;
  }
  std::vector<Tensor> list;
  for (int i : kept) {
    const GpuSample& s = b.gpu[static_cast<size_t>(i)];
    const int64_t h = s.desc.out_h, w = s.desc.out_w;
    list.emplace_back(owner, static_cast<uint8_t*>(b.output->data) + s.out_off,
                      nchw ? std::vector<int64_t>{3, h, w} : std::vector<int64_t>{h, w, 3}, options.dtype,
                      options.device, sync);
  }
  out->image_list = TensorList(std::move(list));
}

}  // namespace sluice
