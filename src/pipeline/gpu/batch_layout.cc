#include "pipeline/gpu/batch_layout.h"

#include <algorithm>

#include "gpu/cuda_util.h"
#include "kernels/color/color_gpu.h"
#include "kernels/filter/filter_gpu.h"
#include "pipeline/sample_processor.h"

namespace sluice {

namespace {

// The descriptor table's parts for n samples: a part per kernel that the plan launches.
void LayOutTable(const Plan& plan, size_t n, int64_t taps_words, BatchTable* t) {
  TableLayout layout;
  t->descs = layout.Add(sizeof(GpuResizeSample) * n);
  t->taps = layout.Add(static_cast<size_t>(taps_words) * sizeof(int32_t));
  if (plan.has_color()) t->colors = layout.Add(sizeof(GpuColorSample) * n);
  if (plan.has_warp()) t->warps = layout.Add(sizeof(GpuWarpSample) * n);
  if (plan.has_erase()) t->erases = layout.Add(sizeof(EraseOps) * n);
  if (plan.has_noise()) t->noises = layout.Add(sizeof(NoiseParams) * n);
  if (plan.max_filters() > 0) {
    const size_t passes = n * static_cast<size_t>(plan.max_filters());
    t->pass_colors = layout.Add(sizeof(GpuColorSample) * passes);
    t->pass_filters = layout.Add(sizeof(GpuFilterSample) * passes);
  }
  t->bytes = layout.size();
}

}  // namespace

int64_t LayOutBatch(GpuBatch* b, const Plan& plan, DType dtype, int64_t sample_bytes) {
  int64_t taps_words = 0, out_bytes = 0;
  for (size_t i = 0; i < b->gpu.size(); ++i) {
    if (!b->status[i].ok()) continue;
    GpuSample& s = b->gpu[i];
    if (s.route != DecodeRoute::kCpu) {
      s.roi = ReadRegion(s.geo.segments[0]);
      ShiftRegion(&s.geo.segments[0], s.roi.x, s.roi.y);
      s.region_bytes = static_cast<size_t>(s.roi.w) * s.roi.h * 3;
      s.arena_off = b->arena_bytes;
      b->arena_bytes += AlignUp(s.region_bytes);
    }
    const int last = s.geo.num_segments - 1;
    const size_t pixels = static_cast<size_t>(s.geo.out_width(last)) * static_cast<size_t>(s.geo.out_height(last));
    if (plan.has_color()) {
      s.mid_off = static_cast<int64_t>(b->mid_bytes);
      b->mid_bytes += AlignUp(pixels * 3);
    }
    s.taps_off = taps_words;
    taps_words += ResizeTapWords(s.geo.segments[static_cast<size_t>(last)]);
    if (!plan.fixed_size()) {
      s.out_off = out_bytes;
      out_bytes += static_cast<int64_t>(AlignUp(pixels * 3 * DTypeSize(dtype)));
    }
  }
  b->out_bytes = plan.fixed_size() ? sample_bytes * static_cast<int64_t>(b->gpu.size()) : out_bytes;
  LayOutTable(plan, b->gpu.size(), taps_words, &b->table);
  if (plan.max_filters() > 0) {
    b->mid_half = b->mid_bytes;
    b->mid_bytes *= 2;  // the filters write the other image
  }
  return static_cast<int64_t>(b->arena_bytes + b->table.bytes + b->mid_bytes) + b->out_bytes;
}

Status AllocateBatch(GpuBatch* b, DevicePool* pool, HostPool* pinned) {
  b->table_host = pinned->Allocate(b->table.bytes);
  if (!b->table_host) return ResourceExhausted("cannot allocate ", b->table.bytes, " bytes of pinned memory");
  SLUICE_ASSIGN_OR_RETURN(void* table, pool->Allocate(b->table.bytes, b->stream));
  b->table_dev = static_cast<uint8_t*>(table);
  if (b->arena_bytes > 0) {
    SLUICE_ASSIGN_OR_RETURN(void* arena, pool->Allocate(b->arena_bytes, b->stream));
    b->arena = static_cast<uint8_t*>(arena);
  }
  for (size_t i = 0; i < b->gpu.size(); ++i) {
    GpuSample& s = b->gpu[i];
    if (b->status[i].ok() && s.route != DecodeRoute::kCpu) s.region = b->arena + s.arena_off;
  }
  SLUICE_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&b->alloc_ready, cudaEventDisableTiming));
  SLUICE_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&b->hw_done, cudaEventDisableTiming));
  SLUICE_CUDA_RETURN_IF_ERROR(cudaEventRecord(b->alloc_ready, b->stream));
  return Status::OK();
}

Status AllocateOutputs(GpuBatch* b, DevicePool* pool) {
  if (b->mid_bytes > 0) {
    SLUICE_ASSIGN_OR_RETURN(void* mid, pool->Allocate(b->mid_bytes, b->stream));
    b->mid = static_cast<uint8_t*>(mid);
  }
  SLUICE_ASSIGN_OR_RETURN(b->output,
                          pool->AllocateShared(static_cast<size_t>(std::max<int64_t>(b->out_bytes, 1)), b->stream));
  return Status::OK();
}

}  // namespace sluice
