#include "pipeline/gpu/launch.h"

#include <algorithm>
#include <cstring>

#include "gpu/cuda_util.h"
#include "kernels/color/color_gpu.h"
#include "kernels/filter/filter_gpu.h"
#include "kernels/resize/resize_gpu.h"
#include "kernels/warp/warp_gpu.h"

namespace sluice {

Status PackSample(const GpuBatch& b, GpuSample* s, ResizeScratch* scratch) {
  const int last = s->geo.num_segments - 1;
  const ResizeParams& p = s->geo.segments[static_cast<size_t>(last)];
  const WarpParams& warp = s->geo.warps[static_cast<size_t>(last)];
  GpuResizeSample& d = s->desc;
  d.in = s->region;
  d.in_pitch = static_cast<int64_t>(s->roi.w) * 3;
  d.in_h = s->roi.h;
  d.in_w = s->roi.w;
  d.out_h = s->geo.out_height(last);
  d.out_w = s->geo.out_width(last);
  std::memcpy(d.fill, p.fill, sizeof(d.fill));
  int32_t* taps = b.host<int32_t>(b.table.taps) + s->taps_off;
  s->warped = warp.enabled;
  if (!warp.enabled) return PackResizeTaps(p, s->taps_off, taps, scratch, &d);
  GpuWarpSample& wd = s->warp_desc;
  wd.in = d.in;
  wd.in_pitch = d.in_pitch;
  wd.in_h = d.in_h;
  wd.in_w = d.in_w;
  PackWarpSample(p, warp, s->taps_off, taps, scratch, &wd);
  return Status::OK();
}

namespace {

// How many descriptors each kernel got, and the sizes its launch needs.
struct Launches {
  int resized = 0, warped = 0, max_tiles = 0;
  int64_t max_pixels = 0;         // of the warped outputs
  int64_t max_filter_pixels = 0;  // of the filtered images
  std::vector<int> pass_colors, pass_filters;  // per pass
};

// Sample s's pixel passes, from its image in mid: colour steps in place, then a filter into the
// sample's other image. Returns the image the last pass wrote.
uint8_t* FillPasses(GpuBatch* b, const GpuSample& s, size_t n, Launches* l) {
  uint8_t* const first = b->mid + s.mid_off;
  uint8_t* cur = first;
  const int h = s.desc.out_h, w = s.desc.out_w;
  for (int k = 0; k < s.geo.passes.num; ++k) {
    const size_t pk = static_cast<size_t>(k);
    uint8_t* next = cur == first ? cur + b->mid_half : first;
    const size_t at = pk * n;
    if (s.geo.passes.before[pk].num_steps > 0)
      *b->host<GpuColorSample>(b->table.pass_colors, at + static_cast<size_t>(l->pass_colors[pk]++)) =
          GpuColorSample{cur, cur, h, w, s.geo.passes.before[pk], nullptr, nullptr};
    *b->host<GpuFilterSample>(b->table.pass_filters, at + static_cast<size_t>(l->pass_filters[pk]++)) =
        GpuFilterSample{cur, next, h, w, s.geo.passes.filters[pk]};
    l->max_filter_pixels = std::max(l->max_filter_pixels, static_cast<int64_t>(h) * w);
    cur = next;
  }
  return cur;
}

// Output slot j's descriptors for sample s: its resampling (into its slot, or into mid when colour
// steps follow), its pixel passes, its colour + finish; erasing and noise in whichever writes it.
void FillSample(GpuBatch* b, const GpuSample& s, size_t j, const Plan& plan, int64_t sample_bytes, Launches* l) {
  const size_t n = b->gpu.size();
  uint8_t* slot = static_cast<uint8_t*>(b->output->data) +
                  (plan.fixed_size() ? sample_bytes * static_cast<int64_t>(j) : s.out_off);
  const bool color = plan.has_color();
  const EraseOps* erase = nullptr;
  if (plan.has_erase()) {
    *b->host<EraseOps>(b->table.erases, j) = s.geo.erase;
    erase = b->device<EraseOps>(b->table.erases, j);
  }
  const NoiseParams* noise = nullptr;
  if (plan.has_noise() && s.geo.noise.enabled) {
    *b->host<NoiseParams>(b->table.noises, j) = s.geo.noise;
    noise = b->device<NoiseParams>(b->table.noises, j);
  }
  void* dst = color ? static_cast<void*>(b->mid + s.mid_off) : slot;
  if (s.warped) {
    GpuWarpSample& w = *b->host<GpuWarpSample>(b->table.warps, static_cast<size_t>(l->warped++));
    w = s.warp_desc;
    w.out = dst;
    w.erase = color ? nullptr : erase;
    w.noise = color ? nullptr : noise;
    l->max_pixels = std::max(l->max_pixels, static_cast<int64_t>(s.desc.out_h) * s.desc.out_w);
  } else {
    GpuResizeSample& d = *b->host<GpuResizeSample>(b->table.descs, static_cast<size_t>(l->resized++));
    d = s.desc;
    d.out = dst;
    d.erase = color ? nullptr : erase;
    d.noise = color ? nullptr : noise;
    l->max_tiles = std::max(l->max_tiles, ResizeTiles(d));
  }
  if (!color) return;
  uint8_t* last = FillPasses(b, s, n, l);
  *b->host<GpuColorSample>(b->table.colors, j) =
      GpuColorSample{last, slot, s.desc.out_h, s.desc.out_w, s.geo.color, erase, noise};
}

}  // namespace

Status EnqueueKernels(GpuBatch* b, const std::vector<int>& kept, const Plan& plan, const GpuFinish& finish,
                      int64_t sample_bytes) {
  Launches l;
  const size_t passes = static_cast<size_t>(plan.max_filters());
  l.pass_colors.assign(passes, 0);
  l.pass_filters.assign(passes, 0);
  for (size_t j = 0; j < kept.size(); ++j)
    FillSample(b, b->gpu[static_cast<size_t>(kept[j])], j, plan, sample_bytes, &l);
  const cudaStream_t stream = b->stream;
  SLUICE_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(b->table_dev, b->table_host.get(), b->table.bytes, cudaMemcpyHostToDevice, stream));
  if (b->used_hw) SLUICE_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(stream, b->hw_done, 0));
  // One resampling kernel (two when some samples warp and others not), writing the finished
  // samples; with colour steps, RGB8 images that the colour + finish kernel then reads.
  const GpuFinish rgb8{DType::kUInt8, Layout::kNHWC, nullptr, nullptr};
  const GpuFinish& resampled = plan.has_color() ? rgb8 : finish;
  const int32_t* taps = b->device<int32_t>(b->table.taps);
  SLUICE_CUDA_RETURN_IF_ERROR(LaunchResizeFinish(b->device<GpuResizeSample>(b->table.descs), l.resized, l.max_tiles,
                                                 taps, resampled, stream));
  SLUICE_CUDA_RETURN_IF_ERROR(LaunchWarpFinish(b->device<GpuWarpSample>(b->table.warps), l.warped, l.max_pixels, taps,
                                               resampled, stream));
  const size_t n = b->gpu.size();
  for (size_t k = 0; k < passes; ++k) {
    SLUICE_CUDA_RETURN_IF_ERROR(
        LaunchColorFinish(b->device<GpuColorSample>(b->table.pass_colors, k * n), l.pass_colors[k], rgb8, stream));
    SLUICE_CUDA_RETURN_IF_ERROR(LaunchFilter(b->device<GpuFilterSample>(b->table.pass_filters, k * n),
                                             l.pass_filters[k], l.max_filter_pixels, stream));
  }
  if (plan.has_color())
    SLUICE_CUDA_RETURN_IF_ERROR(LaunchColorFinish(b->device<GpuColorSample>(b->table.colors),
                                                  static_cast<int>(kept.size()), finish, stream));
  return Status::OK();
}

}  // namespace sluice
