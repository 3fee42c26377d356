#include "ops/sample_draw.h"

#include <algorithm>
#include <utility>

#include "kernels/warp/warp_window.h"

namespace sluice {

namespace {

Filter ToFilter(transforms::Interpolation i) {
  if (i == transforms::Interpolation::kNearest) return Filter::kNearest;
  return i == transforms::Interpolation::kBicubic ? Filter::kBicubic : Filter::kBilinear;
}

PadMode ToPadMode(transforms::PaddingMode m) {
  switch (m) {
    case transforms::PaddingMode::kEdge: return PadMode::kEdge;
    case transforms::PaddingMode::kReflect: return PadMode::kReflect;
    case transforms::PaddingMode::kSymmetric: return PadMode::kSymmetric;
    case transforms::PaddingMode::kConstant: break;
  }
  return PadMode::kConstant;
}

}  // namespace

SampleDraw::Axis SampleDraw::Axis::Identity(int len) {
  Axis a;
  a.map.in_lo = 0;
  a.map.in_hi = len;
  a.map.origin = 0.0;
  a.map.scale = 1.0;
  a.map.resized_len = len;
  a.map.out_off = 0;
  a.map.out_len = len;
  a.map.identity = true;
  return a;
}

// Keeps conceptual pixels [start, start + size) (may reach outside: padding).
void SampleDraw::Axis::Window(int start, int size) {
  AxisMap& m = map;
  const int new_off = m.flip ? m.out_off + m.out_len - start - size : m.out_off + start;
  m.out_off = new_off;
  m.out_len = size;
  if (new_off < 0 || new_off + size > m.resized_len) padded = true;
  if (!resized && !padded) {
    // Fold the crop into the region the next resize sees, as a materialized crop would be.
    m.in_lo = static_cast<int>(m.origin) + new_off;
    m.in_hi = m.in_lo + size;
    m.origin = m.in_lo;
    m.resized_len = size;
    m.out_off = 0;
  }
}

void SampleDraw::Axis::ResizeTo(int new_len) {
  AxisMap& m = map;
  const int len = m.in_hi - m.in_lo;
  m.origin = m.in_lo;
  m.scale = static_cast<double>(len) / new_len;
  m.resized_len = new_len;
  m.out_off = 0;
  m.out_len = new_len;
  m.identity = new_len == len;
  resized = !m.identity;
}

SampleDraw::SampleDraw(int width, int height, const SampleKey& key,
                       const std::optional<transforms::Normalize>& normalize, SampleGeometry* out)
    : key_(key), normalize_(normalize), out_(out), x_(Axis::Identity(width)), y_(Axis::Identity(height)) {
  out_->num_segments = 0;
  out_->passes.num = 0;
  out_->color = ColorOps{};
  out_->erase = EraseOps{};
  out_->noise = NoiseParams{};
  out_->augmix.num_chains = 0;
}

void SampleDraw::BeginOp(uint32_t index) {
  op_ = index;
  rng_ = SampleRng(key_.seed, key_.epoch, key_.sample, index);
}

Status SampleDraw::FinishSegment() {
  if (out_->num_segments == SampleGeometry::kMaxSegments)
    return Unsupported("the transform list needs more than ", SampleGeometry::kMaxSegments, " resampling passes");
  const size_t k = static_cast<size_t>(out_->num_segments++);
  ResizeParams& p = out_->segments[k];
  p.x = x_.map;
  p.y = y_.map;
  p.filter = filter_;
  p.antialias = antialias_;
  for (size_t c = 0; c < 3; ++c) p.fill[c] = fill_[c];
  out_->warps[k] = warp_;
  WindowWarpSource(&p, &out_->warps[k]);  // the resample makes only what the warp reads
  const int w = width(), h = height();
  x_ = Axis::Identity(w);
  y_ = Axis::Identity(h);
  fill_set_ = false;
  warp_ = WarpParams{};
  warp_fill_set_ = false;
  return Status::OK();
}

// A segment has a single fill value, so padding with another value materializes the earlier
// padding first. Padding from the image's own pixels mirrors the segment's whole resized image,
// so it materializes a warp, a crop of the resized image, or earlier padding first.
Status SampleDraw::Crop(const AxisWindow& wx, const AxisWindow& wy, const std::array<uint8_t, 3>& fill,
                        transforms::PaddingMode mode) {
  const bool pads = wx.start < 0 || wx.start + wx.size > width() || wy.start < 0 || wy.start + wy.size > height();
  if (pads && mode != transforms::PaddingMode::kConstant) {
    if (warp_.enabled || !x_.Whole() || !y_.Whole()) SLUICE_RETURN_IF_ERROR(FinishSegment());
    x_.Window(wx.start, wx.size);
    y_.Window(wy.start, wy.size);
    x_.map.pad = y_.map.pad = ToPadMode(mode);
    return Status::OK();
  }
  if (pads && (x_.map.pad != PadMode::kConstant || y_.map.pad != PadMode::kConstant))
    SLUICE_RETURN_IF_ERROR(FinishSegment());  // constant padding around mirrored padding
  if (warp_.enabled) {
    const bool same_fill = std::equal(fill.begin(), fill.end(), warp_.pad_fill);
    if (!pads || !warp_fill_set_ || same_fill) {  // a window on the warped image
      for (auto [a, win] : {std::pair{&warp_.x, wx}, std::pair{&warp_.y, wy}}) {
        a->off = a->flip ? a->off + a->len - win.start - win.size : a->off + win.start;
        a->len = win.size;
      }
      if (pads) {
        std::copy(fill.begin(), fill.end(), warp_.pad_fill);
        warp_fill_set_ = true;
      }
      return Status::OK();
    }
    SLUICE_RETURN_IF_ERROR(FinishSegment());
  }
  if (pads && fill_set_ && fill != fill_) SLUICE_RETURN_IF_ERROR(FinishSegment());
  x_.Window(wx.start, wx.size);
  y_.Window(wy.start, wy.size);
  if (pads) {
    fill_ = fill;
    fill_set_ = true;
  }
  return Status::OK();
}

Status SampleDraw::ResizedCrop(const Rect& window, int width, int height, transforms::Interpolation interpolation,
                               bool antialias) {
  // torchvision crops the image it is given: a pending resize, padding or warp is materialized.
  if (Pending()) SLUICE_RETURN_IF_ERROR(FinishSegment());
  x_.Window(window.x, window.w);
  y_.Window(window.y, window.h);
  return Resize(width, height, interpolation, antialias);
}

Status SampleDraw::Resize(int width, int height, transforms::Interpolation interpolation, bool antialias) {
  if (Pending()) SLUICE_RETURN_IF_ERROR(FinishSegment());
  x_.ResizeTo(width);
  y_.ResizeTo(height);
  filter_ = ToFilter(interpolation);
  antialias_ = antialias;
  return Status::OK();
}

void SampleDraw::FlipX() {
  bool& flip = warp_.enabled ? warp_.x.flip : x_.map.flip;
  flip = !flip;
}

void SampleDraw::FlipY() {
  bool& flip = warp_.enabled ? warp_.y.flip : y_.map.flip;
  flip = !flip;
}

// A pending warp is materialized first (torchvision warps the warped image).
Status SampleDraw::BeginWarp(transforms::Interpolation interpolation, const std::array<uint8_t, 3>& fill) {
  if (warp_.enabled) SLUICE_RETURN_IF_ERROR(FinishSegment());
  warp_ = WarpParams{};
  warp_.enabled = true;
  warp_.filter = interpolation == transforms::Interpolation::kNearest ? WarpFilter::kNearest : WarpFilter::kBilinear;
  warp_.src_w = warp_.out_w = x_.len();
  warp_.src_h = warp_.out_h = y_.len();
  std::copy(fill.begin(), fill.end(), warp_.fill);
  return Status::OK();
}

Status SampleDraw::Warp(const AffineParams& affine, transforms::Interpolation interpolation,
                        const std::array<uint8_t, 3>& fill, const double* center, bool expand) {
  SLUICE_RETURN_IF_ERROR(BeginWarp(interpolation, fill));
  InverseAffineMatrix(affine, warp_.src_w, warp_.src_h, center, warp_.m);
  if (expand) ExpandedSize(warp_.m, warp_.src_w, warp_.src_h, &warp_.out_w, &warp_.out_h);
  warp_.x = WarpAxis{0, warp_.out_w, false};
  warp_.y = WarpAxis{0, warp_.out_h, false};
  return Status::OK();
}

Status SampleDraw::Perspective(const float coefficients[8], transforms::Interpolation interpolation,
                               const std::array<uint8_t, 3>& fill) {
  SLUICE_RETURN_IF_ERROR(BeginWarp(interpolation, fill));
  warp_.perspective = true;
  std::copy(coefficients, coefficients + 8, warp_.c);
  warp_.x = WarpAxis{0, warp_.out_w, false};
  warp_.y = WarpAxis{0, warp_.out_h, false};
  return Status::OK();
}

Status SampleDraw::OpenChoice(int chosen, int options) {
  if (num_choices_ == kMaxNesting)
    return Unsupported("more than ", kMaxNesting, " RandomChoice nested inside each other");
  choices_[num_choices_++] = Choice{chosen, 0, options};
  return Status::OK();
}

bool SampleDraw::NextOptionChosen() {
  if (num_choices_ == 0) return true;  // Plan::Create checks that options follow their choice
  Choice& c = choices_[num_choices_ - 1];
  const bool chosen = c.next++ == c.chosen;
  if (c.next == c.options) --num_choices_;
  return chosen;
}

void SampleDraw::Order(const int* perm, int n) {
  std::copy(perm, perm + n, order_);
  order_n_ = n;
}

int SampleDraw::TakeOrder(int* perm) {
  std::copy(order_, order_ + order_n_, perm);
  return std::exchange(order_n_, 0);
}

void SampleDraw::AddColor(ColorKind kind, double factor) {
  ColorOps& c = out_->color;
  c.steps[c.num_steps++] = MakeColorStep(kind, factor);
  if (NeedsStats(kind)) ++c.num_stats;
}

// The colour steps drawn so far become the pass's `before` steps.
void SampleDraw::AddFilter(const FilterStep& filter) {
  PixelPasses& p = out_->passes;
  const size_t k = static_cast<size_t>(p.num++);
  p.before[k] = out_->color;
  p.filters[k] = filter;
  out_->color = ColorOps{};
}

}  // namespace sluice
