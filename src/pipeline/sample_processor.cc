#include "pipeline/sample_processor.h"

#include <algorithm>
#include <cmath>

#include "core/clock.h"
#include "core/rng.h"
#include "kernels/color/color_cpu.h"
#include "kernels/erase/erase_cpu.h"
#include "kernels/filter/filter_cpu.h"
#include "kernels/noise/noise_cpu.h"
#include "kernels/orient/orient_cpu.h"
#include "kernels/orient/orient_params.h"
#include "kernels/warp/warp_cpu.h"

namespace sluice {

namespace {
template <typename T>
size_t BytesOf(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}
template <typename T>
void Release(std::vector<T>* v, size_t keep) {
  if (BytesOf(*v) > keep) std::vector<T>().swap(*v);
}
// The seed a user function gets for this sample: the first draw of its op's stream.
uint64_t FunctionSeed(const SampleKey& key, const PlacedFunction& f) {
  return SampleRng(key.seed, key.epoch, key.sample, f.position).NextU64();
}
}  // namespace

int64_t WorkerScratch::bytes() const {
  size_t n = BytesOf(decoded) + BytesOf(oriented) + BytesOf(segment[0]) + BytesOf(segment[1]) +
             BytesOf(warp_source) + BytesOf(filtered[0]) + BytesOf(filtered[1]) + BytesOf(filter_rows) +
             BytesOf(resize.mid) + BytesOf(resize.acc);
  return static_cast<int64_t>(n);
}

void SettleScratch(WorkerScratch* scratch, int worker, ScratchGauge* gauge) {
  constexpr size_t kKeep = size_t{64} << 20;
  gauge->Report(worker, scratch->bytes());
  scratch->Trim(kKeep);
  gauge->Report(worker, scratch->bytes());
}

void WorkerScratch::Trim(size_t keep) {
  for (auto* v : {&decoded, &oriented, &segment[0], &segment[1], &warp_source, &filtered[0], &filtered[1], &resize.mid})
    Release(v, keep);
  Release(&filter_rows, keep);
  Release(&resize.acc, keep);
}

namespace {

// Re-expresses a map on the full-resolution image as one on the image scaled by 1/denom.
void ScaleMap(AxisMap* m, int denom, int scaled_len) {
  m->origin /= denom;
  m->scale /= denom;
  m->in_lo = static_cast<int>(std::floor(static_cast<double>(m->in_lo) / denom));
  m->in_hi = std::min(scaled_len, static_cast<int>(std::ceil(static_cast<double>(m->in_hi) / denom)));
  m->identity = false;
}

void ShiftMap(AxisMap* m, int offset) {
  m->in_lo -= offset;
  m->in_hi -= offset;
  m->origin -= offset;
}

}  // namespace

Rect ReadRegion(const ResizeParams& p) {
  int x0, x1, y0, y1;
  InputSpan(p.x, p.filter, p.antialias, &x0, &x1);
  InputSpan(p.y, p.filter, p.antialias, &y0, &y1);
  // An axis whose outputs are all padding reads nothing; decode one token column or row.
  if (x0 >= x1) x0 = 0, x1 = 1;
  if (y0 >= y1) y0 = 0, y1 = 1;
  return Rect{x0, y0, x1 - x0, y1 - y0};
}

void ShiftRegion(ResizeParams* p, int x, int y) {
  ShiftMap(&p->x, x);
  ShiftMap(&p->y, y);
}

int ChooseScaleDenom(const ResizeParams& p, int max_denom) {
  // Nearest shows chosen input pixels: a scaled decode would average them.
  if (p.x.identity || p.y.identity || p.filter == Filter::kNearest) return 1;
  for (int d = max_denom; d >= 2; d /= 2)
    if (p.x.scale >= d && p.y.scale >= d) return d;
  return 1;
}

SampleProcessor::SampleProcessor(const Plan& plan, const FinishParams& finish, bool dct_scaling)
    : plan_(plan), finish_(finish), lut_(FinishLut::Build(finish)), dct_scaling_(dct_scaling) {}

Status SampleProcessor::Prepare(const uint8_t* data, size_t size, const SampleKey& key,
                                ImageDecoder* decoder, ImageInfo* info, SampleGeometry* geo) const {
  SLUICE_ASSIGN_OR_RETURN(*info, decoder->ReadHeader(data, size));
  return plan_.Draw(info->display_width(), info->display_height(), key, geo);
}

Result<ImageView> SampleProcessor::DecodeRegion(const ImageInfo& info, SampleGeometry* geo,
                                                int cpu_segments, WorkerScratch* s,
                                                StageCounters* counters) const {
  ImageView view;
  {
    StageTimer timer(counters, Stage::kDecode);
    ResizeParams& p0 = geo->segments[0];
    const int denom = dct_scaling_ ? ChooseScaleDenom(p0, MaxScaleDenom(info.format)) : 1;
    const int sw = ScaledSize(info.width, denom), sh = ScaledSize(info.height, denom);
    const int dw = info.transposed() ? sh : sw, dh = info.transposed() ? sw : sh;
    if (denom > 1) {
      ScaleMap(&p0.x, denom, dw);
      ScaleMap(&p0.y, denom, dh);
    }
    const Rect display_roi = ReadRegion(p0);
    const Rect stored_roi = StoredRect(info.orientation, sw, sh, display_roi);
    SLUICE_ASSIGN_OR_RETURN(const Rect decoded,
                            s->decoder.Decode(DecodeRequest{stored_roi, denom}, &s->decoded));
    view = ImageView{s->decoded.data(), decoded.h, decoded.w, 3, static_cast<ptrdiff_t>(decoded.w) * 3};
    Rect shown = decoded;
    if (info.orientation != 1) {
      shown = DisplayRect(info.orientation, sw, sh, decoded);
      s->oriented.resize(static_cast<size_t>(shown.w) * shown.h * 3);
      const MutableImageView out{s->oriented.data(), shown.h, shown.w, 3,
                                 static_cast<ptrdiff_t>(shown.w) * 3};
      OrientCpu(info.orientation, view, out);
      view = out;
    }
    ShiftRegion(&p0, shown.x, shown.y);
  }
  StageTimer timer(counters, Stage::kTransform);
  return RunSegments(view, *geo, cpu_segments, s);
}

ImageView SampleProcessor::RunSegments(ImageView view, const SampleGeometry& geo, int count, WorkerScratch* s) const {
  for (int i = 0; i < count; ++i) {
    const ResizeParams& p = geo.segments[static_cast<size_t>(i)];
    const WarpParams& warp = geo.warps[static_cast<size_t>(i)];
    // Resample into the segment's buffer, or into the warp's source, which the warp then reads.
    std::vector<uint8_t>& buf = warp.enabled ? s->warp_source : s->segment[i % 2];
    buf.resize(static_cast<size_t>(p.x.out_len) * p.y.out_len * 3);
    const MutableImageView out{buf.data(), p.y.out_len, p.x.out_len, 3,
                               static_cast<ptrdiff_t>(p.x.out_len) * 3};
    ResizeCpu(p, view, out, &s->resize);
    view = out;
    if (warp.enabled) {
      std::vector<uint8_t>& wbuf = s->segment[i % 2];
      wbuf.resize(static_cast<size_t>(warp.x.len) * warp.y.len * 3);
      const MutableImageView wout{wbuf.data(), warp.y.len, warp.x.len, 3, static_cast<ptrdiff_t>(warp.x.len) * 3};
      WarpCpu(warp, view, wout);
      view = wout;
    }
  }
  return view;
}

Status SampleProcessor::Process(const uint8_t* data, size_t size, const SampleKey& key,
                                WorkerScratch* s, const SlotFn& slot, StageCounters* counters) const {
  SampleGeometry geo;
  ImageInfo info;
  {
    StageTimer timer(counters, Stage::kDecode);
    SLUICE_RETURN_IF_ERROR(Prepare(data, size, key, &s->decoder, &info, &geo));
  }
  SLUICE_ASSIGN_OR_RETURN(const ImageView view, DecodeRegion(info, &geo, geo.num_segments, s, counters));
  return Complete(view, geo, key, s, slot, counters);
}

Status SampleProcessor::ProcessPixels(const ImageView& pixels, const SampleKey& key, WorkerScratch* s,
                                      const SlotFn& slot, StageCounters* counters) const {
  SampleGeometry geo;
  SLUICE_RETURN_IF_ERROR(plan_.Draw(pixels.width, pixels.height, key, &geo));
  ImageView view;
  {
    StageTimer timer(counters, Stage::kTransform);
    view = RunSegments(pixels, geo, geo.num_segments, s);
  }
  return Complete(view, geo, key, s, slot, counters);
}

Status SampleProcessor::Complete(ImageView view, const SampleGeometry& geo, const SampleKey& key, WorkerScratch* s,
                                 const SlotFn& slot, StageCounters* counters) const {
  for (int k = 0; k < geo.passes.num; ++k) {
    StageTimer timer(counters, Stage::kTransform);
    const size_t pk = static_cast<size_t>(k);
    ApplyColorCpu(geo.passes.before[pk], MutableImageView{const_cast<uint8_t*>(view.data), view.height, view.width, 3,
                                                          view.row_stride});
    std::vector<uint8_t>& buf = s->filtered[k % 2];
    buf.resize(static_cast<size_t>(view.width) * view.height * 3);
    const MutableImageView out{buf.data(), view.height, view.width, 3, static_cast<ptrdiff_t>(view.width) * 3};
    if (geo.passes.filters[pk].kind == FilterKind::kAugMix) {
      ApplyAugMix(geo.augmix, view, out, &s->augmix);
    } else {
      FilterCpu(geo.passes.filters[pk], view, out, &s->filter_rows);
    }
    view = out;
  }
  if (geo.color.num_steps > 0) {
    StageTimer timer(counters, Stage::kTransform);
    // The view is this worker's scratch (a segment's output or the decoded pixels).
    ApplyColorCpu(geo.color, MutableImageView{const_cast<uint8_t*>(view.data), view.height, view.width, 3,
                                              view.row_stride});
  }
  if (geo.erase.num > 0 || geo.erase.grid.enabled) {  // before Normalize: set pixels (the finish normalizes them)
    StageTimer timer(counters, Stage::kTransform);
    ErasePixelsCpu(geo.erase, MutableImageView{const_cast<uint8_t*>(view.data), view.height, view.width, 3,
                                               view.row_stride});
  }
  if (!plan_.pixel_functions().empty()) {
    StageTimer timer(counters, Stage::kTransform);
    // User functions see contiguous HWC pixels (every segment's output is).
    if (view.row_stride != static_cast<ptrdiff_t>(view.width) * 3)
      return Internal("user function: the pixels are not contiguous");
    for (const PlacedFunction& f : plan_.pixel_functions())
      SLUICE_RETURN_IF_ERROR(f.fn.fn->Call(const_cast<uint8_t*>(view.data), view.height, view.width, DType::kUInt8,
                                           Layout::kNHWC, FunctionSeed(key, f)));
  }
  void* dst = nullptr;
  {
    StageTimer timer(counters, Stage::kCollate);
    SLUICE_ASSIGN_OR_RETURN(dst, slot(view.height, view.width));
    if (geo.noise.enabled && finish_.dtype == DType::kUInt8)
      return InvalidArgument("GaussianNoise needs a float output: pass dtype='float32' or 'float16'");
    if (geo.noise.enabled) {
      NoiseFinishCpu(geo.noise, view, finish_.dtype, finish_.layout, dst);
    } else {
      FinishCpu(finish_, lut_, view, dst);
    }
    if (geo.erase.num > 0 || geo.erase.grid.finished)
      EraseFinishedCpu(geo.erase, dst, view.height, view.width, finish_.dtype, finish_.layout);
  }
  if (!plan_.finished_functions().empty()) {
    StageTimer timer(counters, Stage::kTransform);
    for (const PlacedFunction& f : plan_.finished_functions())
      SLUICE_RETURN_IF_ERROR(
          f.fn.fn->Call(dst, view.height, view.width, finish_.dtype, finish_.layout, FunctionSeed(key, f)));
  }
  return Status::OK();
}

}  // namespace sluice
