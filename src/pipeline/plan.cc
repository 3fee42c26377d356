#include "pipeline/plan.h"

#include <algorithm>
#include <type_traits>
#include <utility>

#include "core/rng.h"
#include "ops/transform_ops.h"

namespace sluice {

namespace {

using namespace sluice::transforms;

Filter ToFilter(Interpolation i) {
  return i == Interpolation::kBicubic ? Filter::kBicubic : Filter::kBilinear;
}

// One axis of the image as the transforms see it, expressed against the current segment's input.
struct Axis {
  AxisMap map;
  bool resized = false;  // a real resize happened in this segment
  bool padded = false;   // the window reaches outside the resized image

  static Axis Identity(int len) {
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
  int len() const { return map.out_len; }

  // Keeps conceptual pixels [start, start + size) (may reach outside: padding).
  void Window(int start, int size) {
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

  // REQUIRES: !resized && !padded.
  void ResizeTo(int new_len) {
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
};

}  // namespace

Result<Plan> Plan::Create(std::vector<Transform> list) {
  Plan plan;
  // Static output size, tracked symbolically: 0 = depends on the image.
  int h = 0, w = 0;
  const char* color_name = nullptr;  // the first colour transform so far
  const char* erase_name = nullptr;  // the first erasing transform so far
  const char* noise_name = nullptr;  // GaussianNoise, once seen
  const char* augment_name = nullptr;  // the first RandAugment or TrivialAugmentWide so far
  int erase_rects = 0;
  int color_steps = 0;               // at most, per sample
  for (size_t i = 0; i < list.size(); ++i) {
    const Transform& t = list[i];
    SLUICE_RETURN_IF_ERROR(Validate(t).WithPrefix("transform " + std::to_string(i)));
    if (const auto* fn = std::get_if<Lambda>(&t)) {
      if (fn->stage == SampleFunction::Stage::kPixels && plan.normalize_)
        return Unsupported("transform ", i, ": ", fn->name, " on uint8 pixels after Normalize is not supported");
      (fn->stage == SampleFunction::Stage::kPixels ? plan.pixel_fns_ : plan.finished_fns_).push_back(*fn);
      continue;
    }
    if (!plan.finished_fns_.empty() || (!plan.pixel_fns_.empty() && !std::holds_alternative<Normalize>(t)))
      return Unsupported("transform ", i, ": ", TransformName(t), " after ",
                         (plan.finished_fns_.empty() ? plan.pixel_fns_ : plan.finished_fns_).front().name,
                         " is not supported; user functions run after the geometric and colour transforms",
                         plan.finished_fns_.empty() ? "" : " and Normalize");
    const bool is_augment = std::holds_alternative<RandAugment>(t) || std::holds_alternative<TrivialAugmentWide>(t);
    const bool is_color = std::holds_alternative<ColorJitter>(t) || std::holds_alternative<RandomGrayscale>(t) ||
                          std::holds_alternative<GaussianBlur>(t) || is_augment;
    const bool is_flip = std::holds_alternative<RandomHorizontalFlip>(t) || std::holds_alternative<RandomVerticalFlip>(t);
    const bool is_noise = std::holds_alternative<GaussianNoise>(t);
    const bool is_erase = std::holds_alternative<Cutout>(t) || std::holds_alternative<RandomErasing>(t) ||
                          std::holds_alternative<GridMask>(t);
    if (erase_name != nullptr && !is_erase && !std::holds_alternative<Normalize>(t))
      return Unsupported("transform ", i, ": ", TransformName(t), " after ", erase_name,
                         " is not supported; put erasing after the geometric and colour transforms",
                         is_noise ? " and GaussianNoise" : "");
    if (is_noise) {
      if (plan.has_noise_) return Unsupported("transform ", i, ": GaussianNoise appears twice; combine them into one");
      plan.has_noise_ = true;
      noise_name = "GaussianNoise";
      continue;
    }
    if (noise_name != nullptr && !is_erase && !std::holds_alternative<Normalize>(t))
      return Unsupported("transform ", i, ": ", TransformName(t),
                         " after GaussianNoise is not supported; put GaussianNoise after the geometric and colour "
                         "transforms");
    if (is_erase) {
      if (erase_name == nullptr) erase_name = TransformName(t);
      plan.has_erase_ = true;
      if (std::holds_alternative<GridMask>(t)) {
        if (plan.has_grid_) return Unsupported("transform ", i, ": GridMask appears twice");
        plan.has_grid_ = true;
        continue;
      }
      erase_rects += std::holds_alternative<Cutout>(t) ? std::get<Cutout>(t).n_holes : 1;
      if (erase_rects > EraseOps::kMaxRects)
        return Unsupported("transform ", i, ": more than ", EraseOps::kMaxRects, " erased rectangles per sample");
      continue;
    }
    if (is_color && plan.normalize_)
      return Unsupported("transform ", i, ": ", TransformName(t), " after Normalize is not supported; put Normalize last");
    if (color_name != nullptr && !is_color && !is_flip && !std::holds_alternative<Normalize>(t))
      return Unsupported("transform ", i, ": ", TransformName(t), " after ", color_name,
                         " is not supported; put colour transforms after the crops, resizes and padding");
    if (augment_name != nullptr && is_flip)
      return Unsupported("transform ", i, ": ", TransformName(t), " after ", augment_name,
                         " is not supported (its shears and rotations do not commute with flips); put the flip "
                         "before it");
    if (is_color) {
      if (color_name == nullptr) color_name = TransformName(t);
      if (is_augment && augment_name == nullptr) augment_name = TransformName(t);
      plan.has_color_ = true;
      int steps = 1, filters = 0;
      if (std::holds_alternative<ColorJitter>(t)) steps = 4;
      if (std::holds_alternative<GaussianBlur>(t)) steps = 0, filters = 1;
      if (const auto* ra = std::get_if<RandAugment>(&t)) steps = filters = ra->num_ops;
      if (std::holds_alternative<TrivialAugmentWide>(t)) filters = 1;
      color_steps += steps;
      plan.max_filters_ += filters;
      if (color_steps > ColorOps::kMaxSteps)
        return Unsupported("transform ", i, ": more than ", ColorOps::kMaxSteps,
                           " colour adjustments in one list (ColorJitter counts 4, RandAugment num_ops)");
      if (plan.max_filters_ > PixelPasses::kMax)
        return Unsupported("transform ", i, ": more than ", PixelPasses::kMax,
                           " blurs, sharpness adjustments and auto-augment warps in one list (RandAugment "
                           "counts num_ops)");
    }
    if (const auto* n = std::get_if<Normalize>(&t)) {
      if (plan.normalize_)
        return InvalidArgument("transform ", i, ": Normalize appears twice; combine them into one");
      plan.normalize_ = *n;
    } else if (const auto* c = std::get_if<RandomResizedCrop>(&t)) {
      h = c->height, w = c->width;
    } else if (const auto* r = std::get_if<Resize>(&t)) {
      if (r->width > 0) {
        h = r->height, w = r->width;
      } else {
        h = w = 0;
      }
    } else if (const auto* cc = std::get_if<CenterCrop>(&t)) {
      h = cc->height, w = cc->width;
    } else if (const auto* rc = std::get_if<RandomCrop>(&t)) {
      h = rc->height, w = rc->width;
      if (plan.normalize_ && (rc->pad_if_needed || rc->padding != std::array<int, 4>{0, 0, 0, 0}))
        return Unsupported("transform ", i, ": RandomCrop with padding after Normalize is not supported; "
                           "put Normalize last");
    } else if (std::holds_alternative<RandomRotation>(t) || std::holds_alternative<RandomAffine>(t)) {
      plan.has_warp_ = true;
      if (plan.normalize_)
        return Unsupported("transform ", i, ": ", TransformName(t),
                           " after Normalize is not supported; put Normalize last");
    } else if (const auto* pad = std::get_if<Pad>(&t)) {
      if (plan.normalize_)
        return Unsupported("transform ", i, ": Pad after Normalize is not supported; put Normalize last");
      if (h > 0) h += pad->padding[1] + pad->padding[3], w += pad->padding[0] + pad->padding[2];
    }
  }
  if (h > 0 && w > 0) {
    plan.out_height_ = h;
    plan.out_width_ = w;
  }
  plan.transforms_ = std::move(list);
  // Dry run on a typical image to catch lists that need too many segments.
  SampleGeometry g;
  Status s = plan.Draw(640, 480, SampleKey{}, &g);
  if (!s.ok() && s.code() == StatusCode::kUnsupported) return s;
  return plan;
}

Status Plan::Draw(int width, int height, const SampleKey& key, SampleGeometry* out) const {
  Axis ax = Axis::Identity(width), ay = Axis::Identity(height);
  Filter filter = Filter::kBilinear;
  bool antialias = true;
  std::array<uint8_t, 3> fill = {0, 0, 0};
  bool fill_set = false;  // the current segment pads with `fill`
  WarpParams warp;        // the current segment's warp, when enabled
  bool warp_fill_set = false;  // its window pads with warp.pad_fill
  // The size of the image the next transform is given.
  auto cur_w = [&] { return warp.enabled ? warp.x.len : ax.len(); };
  auto cur_h = [&] { return warp.enabled ? warp.y.len : ay.len(); };
  out->num_segments = 0;
  out->passes.num = 0;
  out->color = ColorOps{};
  out->erase = EraseOps{};
  out->noise = NoiseParams{};
  bool normalized = false;  // a Normalize came before
  auto add_color = [&](ColorKind kind, double factor) {
    ColorOps& c = out->color;
    // The factor as torchvision uses it (float32), and _blend's 1 - ratio (in double, then float).
    c.steps[c.num_steps++] = ColorStep{kind, static_cast<float>(factor), static_cast<float>(1.0 - factor)};
    if (NeedsStats(kind)) ++c.num_stats;
  };

  // A filter after the colour steps drawn so far: they become the pass's `before` steps.
  auto add_filter = [&](const FilterStep& f) {
    PixelPasses& p = out->passes;
    const size_t k = static_cast<size_t>(p.num++);
    p.before[k] = out->color;
    p.filters[k] = f;
    out->color = ColorOps{};
  };

  auto finish_segment = [&]() -> Status {
    if (out->num_segments == SampleGeometry::kMaxSegments)
      return Unsupported("the transform list needs more than ", SampleGeometry::kMaxSegments,
                         " resampling passes");
    const size_t k = static_cast<size_t>(out->num_segments++);
    ResizeParams& p = out->segments[k];
    p.x = ax.map;
    p.y = ay.map;
    p.filter = filter;
    p.antialias = antialias;
    for (int c = 0; c < 3; ++c) p.fill[c] = fill[static_cast<size_t>(c)];
    out->warps[k] = warp;
    const int w = cur_w(), h = cur_h();
    ax = Axis::Identity(w);
    ay = Axis::Identity(h);
    fill_set = false;
    warp = WarpParams{};
    warp_fill_set = false;
    return Status::OK();
  };
  // A crop window; one reaching outside the current image pads with `f`. A segment has a single
  // fill value, so padding with another value materializes the earlier padding first.
  auto crop = [&](const AxisWindow& wx, const AxisWindow& wy,
                  const std::array<uint8_t, 3>& f) -> Status {
    const bool pads = wx.start < 0 || wx.start + wx.size > cur_w() || wy.start < 0 ||
                      wy.start + wy.size > cur_h();
    if (warp.enabled) {
      const bool same_fill = std::equal(f.begin(), f.end(), warp.pad_fill);
      if (!pads || !warp_fill_set || same_fill) {  // a window on the warped image
        for (auto [a, win] : {std::pair{&warp.x, wx}, std::pair{&warp.y, wy}}) {
          a->off = a->flip ? a->off + a->len - win.start - win.size : a->off + win.start;
          a->len = win.size;
        }
        if (pads) {
          std::copy(f.begin(), f.end(), warp.pad_fill);
          warp_fill_set = true;
        }
        return Status::OK();
      }
      SLUICE_RETURN_IF_ERROR(finish_segment());
    }
    if (pads && fill_set && f != fill) SLUICE_RETURN_IF_ERROR(finish_segment());
    ax.Window(wx.start, wx.size);
    ay.Window(wy.start, wy.size);
    if (pads) {
      fill = f;
      fill_set = true;
    }
    return Status::OK();
  };
  auto resize = [&](int new_w, int new_h, Interpolation interp, bool aa) -> Status {
    if (ax.resized || ay.resized || ax.padded || ay.padded || warp.enabled) SLUICE_RETURN_IF_ERROR(finish_segment());
    ax.ResizeTo(new_w);
    ay.ResizeTo(new_h);
    filter = ToFilter(interp);
    antialias = aa;
    return Status::OK();
  };

  // A rotation or affine warp of the image the list has produced so far; a pending warp is
  // materialized first (torchvision warps the warped image).
  auto add_warp = [&](const AffineDraw& d, Interpolation interp, const std::array<uint8_t, 3>& f,
                      bool has_center, const std::array<double, 2>& center) -> Status {
    if (warp.enabled) SLUICE_RETURN_IF_ERROR(finish_segment());
    warp = WarpParams{};
    warp.enabled = true;
    warp.filter = interp == Interpolation::kNearest ? WarpFilter::kNearest : WarpFilter::kBilinear;
    warp.src_w = ax.len();
    warp.src_h = ay.len();
    InverseAffineMatrix(d, warp.src_w, warp.src_h, has_center ? center.data() : nullptr, warp.m);
    std::copy(f.begin(), f.end(), warp.fill);
    warp.x = WarpAxis{0, warp.src_w, false};
    warp.y = WarpAxis{0, warp.src_h, false};
    return Status::OK();
  };

  for (size_t i = 0; i < transforms_.size(); ++i) {
    const Transform& t = transforms_[i];
    SampleRng rng(key.seed, key.epoch, key.sample, static_cast<uint32_t>(i));
    if (const auto* c = std::get_if<RandomResizedCrop>(&t)) {
      const Rect r = DrawResizedCropWindow(rng, cur_w(), cur_h(), *c);
      // torchvision crops the image it is given: a pending resize, padding or warp is materialized.
      if (ax.resized || ay.resized || ax.padded || ay.padded || warp.enabled) SLUICE_RETURN_IF_ERROR(finish_segment());
      ax.Window(r.x, r.w);
      ay.Window(r.y, r.h);
      SLUICE_RETURN_IF_ERROR(resize(c->width, c->height, c->interpolation, c->antialias));
    } else if (const auto* r = std::get_if<Resize>(&t)) {
      int nw, nh;
      ResizedSize(cur_w(), cur_h(), *r, &nw, &nh);
      SLUICE_RETURN_IF_ERROR(resize(nw, nh, r->interpolation, r->antialias));
    } else if (const auto* cc = std::get_if<CenterCrop>(&t)) {
      const AxisWindow wx = CenterCropAxis(cur_w(), cc->width);
      const AxisWindow wy = CenterCropAxis(cur_h(), cc->height);
      SLUICE_RETURN_IF_ERROR(crop(wx, wy, {0, 0, 0}));
    } else if (const auto* rc = std::get_if<RandomCrop>(&t)) {
      AxisWindow wx, wy;
      SLUICE_RETURN_IF_ERROR(DrawRandomCrop(rng, cur_w(), cur_h(), *rc, &wx, &wy));
      SLUICE_RETURN_IF_ERROR(crop(wx, wy, rc->fill));
    } else if (const auto* f = std::get_if<RandomHorizontalFlip>(&t)) {
      if (rng.Bernoulli(f->p)) {
        bool& flip = warp.enabled ? warp.x.flip : ax.map.flip;
        flip = !flip;
      }
    } else if (const auto* v = std::get_if<RandomVerticalFlip>(&t)) {
      if (rng.Bernoulli(v->p)) {
        bool& flip = warp.enabled ? warp.y.flip : ay.map.flip;
        flip = !flip;
      }
    } else if (const auto* rot = std::get_if<RandomRotation>(&t)) {
      SLUICE_RETURN_IF_ERROR(add_warp(DrawRotation(rng, *rot), rot->interpolation, rot->fill, rot->has_center,
                                      rot->center));
    } else if (const auto* aff = std::get_if<RandomAffine>(&t)) {
      SLUICE_RETURN_IF_ERROR(add_warp(DrawAffine(rng, cur_w(), cur_h(), *aff), aff->interpolation, aff->fill,
                                      aff->has_center, aff->center));
    } else if (const auto* jitter = std::get_if<ColorJitter>(&t)) {
      // torchvision's ColorJitter: a random order of the four, then a factor for each.
      int order[4] = {0, 1, 2, 3};
      for (int k = 3; k > 0; --k) std::swap(order[k], order[rng.RandInt(0, k + 1)]);
      const std::array<double, 2>* ranges[4] = {&jitter->brightness, &jitter->contrast, &jitter->saturation, &jitter->hue};
      double factors[4];
      for (int k = 0; k < 4; ++k) factors[k] = rng.Uniform((*ranges[k])[0], (*ranges[k])[1]);
      const ColorKind kinds[4] = {ColorKind::kBrightness, ColorKind::kContrast, ColorKind::kSaturation,
                                  ColorKind::kHue};
      for (int k : order) {
        const double identity = kinds[k] == ColorKind::kHue ? 0.0 : 1.0;
        if ((*ranges[k])[0] == identity && (*ranges[k])[1] == identity) continue;  // left out
        add_color(kinds[k], static_cast<float>(factors[k]));  // a float32 tensor's value
      }
    } else if (const auto* cut = std::get_if<Cutout>(&t)) {
      DrawCutout(rng, cur_w(), cur_h(), *cut, normalized, &out->erase);
    } else if (const auto* er = std::get_if<RandomErasing>(&t)) {
      Rect box;
      if (DrawErasing(rng, cur_w(), cur_h(), *er, &box) && out->erase.num < EraseOps::kMaxRects) {
        EraseRect& e = out->erase.rects[out->erase.num++];
        e.x0 = box.x, e.y0 = box.y, e.x1 = box.x + box.w, e.y1 = box.y + box.h;
        e.finished = er->tensor_scale;
        for (size_t ch = 0; ch < 3; ++ch) {
          const float value = er->value[ch];
          if (!er->tensor_scale) {
            e.pixel[ch] = static_cast<uint8_t>(value);  // as torch casts the value into a uint8 image
          } else if (!normalized && normalize_) {  // normalized here as Normalize would the tensor
            e.value[ch] = (value - normalize_->mean[ch]) / normalize_->std[ch];
          } else {
            e.value[ch] = value;
          }
        }
      }
    } else if (std::holds_alternative<Normalize>(t)) {
      normalized = true;
    } else if (const auto* gm = std::get_if<GridMask>(&t)) {
      DrawGridMask(rng, *gm, normalized, &out->erase.grid);
    } else if (const auto* gn = std::get_if<GaussianNoise>(&t)) {
      NoiseParams& n = out->noise;
      n.enabled = true;
      n.clip = gn->clip;
      n.mean = static_cast<float>(gn->mean);
      n.sigma = static_cast<float>(gn->sigma);
      n.after_normalize = normalized;
      n.normalize = normalize_.has_value();
      if (normalize_)
        for (size_t ch = 0; ch < 3; ++ch) n.norm_mean[ch] = normalize_->mean[ch], n.norm_std[ch] = normalize_->std[ch];
      // The generator's key: as SampleRng's for this position.
      n.k0 = static_cast<uint32_t>(key.seed), n.k1 = static_cast<uint32_t>(key.seed >> 32);
      n.op = static_cast<uint32_t>(i);
      n.sample = static_cast<uint32_t>(key.sample);
      n.epoch = static_cast<uint32_t>(key.epoch) ^ static_cast<uint32_t>(key.sample >> 32) * 0x9E3779B9u;
    } else if (const auto* blur = std::get_if<GaussianBlur>(&t)) {
      add_filter(DrawGaussianBlur(rng, *blur));
    } else if (std::holds_alternative<RandAugment>(t) || std::holds_alternative<TrivialAugmentWide>(t)) {
      AugmentDraw draws[8];
      int n = 1;
      Interpolation interp;
      std::array<uint8_t, 3> afill;
      if (const auto* ra = std::get_if<RandAugment>(&t)) {
        n = DrawRandAugment(rng, cur_w(), cur_h(), *ra, draws);
        interp = ra->interpolation, afill = ra->fill;
      } else {
        const auto& ta = std::get<TrivialAugmentWide>(t);
        draws[0] = DrawTrivialAugment(rng, ta);
        interp = ta.interpolation, afill = ta.fill;
      }
      for (int k = 0; k < n; ++k) {
        const AugmentStep step = AugmentToStep(draws[k], cur_w(), cur_h(), interp, afill);
        if (step.type == AugmentStep::Type::kColor) add_color(step.color, step.factor);
        if (step.type == AugmentStep::Type::kFilter) add_filter(step.filter);
      }
    } else if (const auto* gray = std::get_if<RandomGrayscale>(&t)) {
      if (rng.Bernoulli(gray->p)) add_color(ColorKind::kGrayscale, 0.0);
    } else if (const auto* pad = std::get_if<Pad>(&t)) {
      const auto& [left, top, right, bottom] = pad->padding;
      SLUICE_RETURN_IF_ERROR(crop(AxisWindow{-left, cur_w() + left + right},
                                  AxisWindow{-top, cur_h() + top + bottom}, pad->fill));
    }
  }
  return finish_segment();
}

}  // namespace sluice
