#include "ops/resize_crop_ops.h"

#include <algorithm>
#include <cmath>

#include "ops/arg_checks.h"
#include "ops/image_ops.h"
#include "ops/torch_math.h"

namespace sluice {

using namespace transforms;

Rect DrawResizedCropWindow(SampleRng& rng, int width, int height, const RandomResizedCrop& t) {
  const double area = static_cast<double>(height) * width;
  const double log_r0 = std::log(t.ratio[0]), log_r1 = std::log(t.ratio[1]);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target_area = area * rng.Uniform(t.scale[0], t.scale[1]);
    const double aspect = std::exp(rng.Uniform(log_r0, log_r1));
    const int w = RoundHalfEven(std::sqrt(target_area * aspect));
    const int h = RoundHalfEven(std::sqrt(target_area / aspect));
    if (0 < w && w <= width && 0 < h && h <= height) {
      const int i = static_cast<int>(rng.RandInt(0, height - h + 1));
      const int j = static_cast<int>(rng.RandInt(0, width - w + 1));
      return Rect{j, i, w, h};
    }
  }
  // Fallback to a central crop with the ratio clamped.
  const double in_ratio = static_cast<double>(width) / height;
  const double rmin = std::min(t.ratio[0], t.ratio[1]), rmax = std::max(t.ratio[0], t.ratio[1]);
  int w = width, h = height;
  if (in_ratio < rmin) {
    h = RoundHalfEven(w / rmin);
  } else if (in_ratio > rmax) {
    w = RoundHalfEven(h * rmax);
  }
  return Rect{(width - w) / 2, (height - h) / 2, w, h};
}

void ResizedSize(int width, int height, const Resize& t, int* out_w, int* out_h) {
  if (t.width > 0) {
    *out_w = t.width;
    *out_h = t.height;
    return;
  }
  const bool w_short = width <= height;
  const int64_t shorter = w_short ? width : height, longer = w_short ? height : width;
  int64_t new_short = t.height;
  int64_t new_long = static_cast<int64_t>(static_cast<double>(new_short * longer) / static_cast<double>(shorter));
  if (t.max_size > 0 && new_long > t.max_size) {
    new_short = static_cast<int64_t>(static_cast<double>(t.max_size * new_short) / static_cast<double>(new_long));
    new_long = t.max_size;
  }
  *out_w = static_cast<int>(w_short ? new_short : new_long);
  *out_h = static_cast<int>(w_short ? new_long : new_short);
}

AxisWindow CenterCropAxis(int len, int size) {
  if (size > len) return AxisWindow{-((size - len) / 2), size};
  return AxisWindow{RoundHalfEven((len - size) / 2.0), size};
}

Status DrawRandomCrop(SampleRng& rng, int width, int height, const RandomCrop& t, AxisWindow* x, AxisWindow* y) {
  int pad_left = t.padding[0], pad_top = t.padding[1];
  int padded_w = width + t.padding[0] + t.padding[2];
  int padded_h = height + t.padding[1] + t.padding[3];
  if (t.pad_if_needed) {
    if (padded_h < t.height) {
      const int diff = t.height - padded_h;
      pad_top += diff;
      padded_h += 2 * diff;
    }
    if (padded_w < t.width) {
      const int diff = t.width - padded_w;
      pad_left += diff;
      padded_w += 2 * diff;
    }
  }
  if (padded_h < t.height || padded_w < t.width)
    return InvalidArgument("RandomCrop: crop size ", t.height, "x", t.width, " (height x width) is larger than the ",
                           (t.padding != std::array<int, 4>{0, 0, 0, 0} ? "padded " : ""), "image size ", padded_h,
                           "x", padded_w, "; pass pad_if_needed=True to pad small images");
  const int top = padded_h > t.height ? static_cast<int>(rng.RandInt(0, padded_h - t.height + 1)) : 0;
  const int left = padded_w > t.width ? static_cast<int>(rng.RandInt(0, padded_w - t.width + 1)) : 0;
  *x = AxisWindow{left - pad_left, t.width};
  *y = AxisWindow{top - pad_top, t.height};
  return Status::OK();
}

namespace {

void RegisterRandomResizedCrop(OpRegistry* r) {
  OpSpec<RandomResizedCrop> op{"RandomResizedCrop", OpKind::kGeometry};
  op.fields = {Field<&RandomResizedCrop::height>("height"), Field<&RandomResizedCrop::width>("width"),
               Field<&RandomResizedCrop::scale>("scale"), Field<&RandomResizedCrop::ratio>("ratio"),
               Field<&RandomResizedCrop::interpolation>("interpolation"),
               Field<&RandomResizedCrop::antialias>("antialias")};
  op.validate = [](const RandomResizedCrop& t) -> Status {
    SLUICE_RETURN_IF_ERROR(CheckSize("RandomResizedCrop", t.height, t.width));
    SLUICE_RETURN_IF_ERROR(CheckResizeInterpolation("RandomResizedCrop", t.interpolation));
    if (!(t.scale[0] > 0 && t.scale[0] <= t.scale[1]))
      return InvalidArgument("RandomResizedCrop: scale must be (min, max) with 0 < min <= max, got (", t.scale[0],
                             ", ", t.scale[1], ")");
    if (!(t.ratio[0] > 0 && t.ratio[0] <= t.ratio[1]))
      return InvalidArgument("RandomResizedCrop: ratio must be (min, max) with 0 < min <= max, got (", t.ratio[0],
                             ", ", t.ratio[1], ")");
    return Status::OK();
  };
  op.place = [](const RandomResizedCrop& t, ListState* list) {
    list->out_height = t.height, list->out_width = t.width;
    return Status::OK();
  };
  op.draw = [](const RandomResizedCrop& t, SampleDraw* d) {
    const Rect window = DrawResizedCropWindow(d->rng(), d->width(), d->height(), t);
    return d->ResizedCrop(window, t.width, t.height, t.interpolation, t.antialias);
  };
  r->Add(std::move(op));
}

void RegisterResize(OpRegistry* r) {
  OpSpec<Resize> op{"Resize", OpKind::kGeometry};
  op.fields = {Field<&Resize::height>("height"), Field<&Resize::width>("width"),
               Field<&Resize::max_size>("max_size"), Field<&Resize::interpolation>("interpolation"),
               Field<&Resize::antialias>("antialias")};
  op.validate = [](const Resize& t) -> Status {  // NEAREST too: torch's interpolate(mode="nearest")
    if (t.height <= 0 || t.width < 0)
      return InvalidArgument("Resize: size must be positive, got (", t.height, ", ", t.width, ")");
    if (t.max_size < 0) return InvalidArgument("Resize: max_size must be positive, got ", t.max_size);
    if (t.max_size > 0 && t.width > 0)
      return InvalidArgument("Resize: max_size is only allowed when size is a single int");
    if (t.max_size > 0 && t.max_size <= t.height)
      return InvalidArgument("Resize: max_size = ", t.max_size,
                             " must be strictly greater than the requested size for the smaller edge = ", t.height);
    return Status::OK();
  };
  op.place = [](const Resize& t, ListState* list) {
    const bool fixed = t.width > 0;  // Resize(int) gives a size that depends on the image
    list->out_height = fixed ? t.height : 0, list->out_width = fixed ? t.width : 0;
    return Status::OK();
  };
  op.draw = [](const Resize& t, SampleDraw* d) {
    int w = 0, h = 0;
    ResizedSize(d->width(), d->height(), t, &w, &h);
    return d->Resize(w, h, t.interpolation, t.antialias);
  };
  r->Add(std::move(op));
}

void RegisterCenterCrop(OpRegistry* r) {
  OpSpec<CenterCrop> op{"CenterCrop", OpKind::kGeometry};
  op.fields = {Field<&CenterCrop::height>("height"), Field<&CenterCrop::width>("width")};
  op.validate = [](const CenterCrop& t) { return CheckSize("CenterCrop", t.height, t.width); };
  op.place = [](const CenterCrop& t, ListState* list) {
    list->out_height = t.height, list->out_width = t.width;
    return Status::OK();
  };
  op.draw = [](const CenterCrop& t, SampleDraw* d) {
    return d->Crop(CenterCropAxis(d->width(), t.width), CenterCropAxis(d->height(), t.height), {0, 0, 0});
  };
  r->Add(std::move(op));
}

void RegisterRandomCrop(OpRegistry* r) {
  OpSpec<RandomCrop> op{"RandomCrop", OpKind::kGeometry};
  op.fields = {Field<&RandomCrop::height>("height"), Field<&RandomCrop::width>("width"),
               Field<&RandomCrop::padding>("padding"), Field<&RandomCrop::pad_if_needed>("pad_if_needed"),
               Field<&RandomCrop::fill>("fill"), Field<&RandomCrop::padding_mode>("padding_mode")};
  op.validate = [](const RandomCrop& t) -> Status {
    SLUICE_RETURN_IF_ERROR(CheckSize("RandomCrop", t.height, t.width));
    return CheckPadding("RandomCrop", t.padding);
  };
  op.place = [](const RandomCrop& t, ListState* list) -> Status {
    list->out_height = t.height, list->out_width = t.width;
    if (t.pad_if_needed || t.padding != std::array<int, 4>{0, 0, 0, 0})
      return list->RefuseAfterNormalize("RandomCrop with padding");
    return Status::OK();
  };
  op.draw = [](const RandomCrop& t, SampleDraw* d) {
    AxisWindow x, y;
    SLUICE_RETURN_IF_ERROR(DrawRandomCrop(d->rng(), d->width(), d->height(), t, &x, &y));
    return d->Crop(x, y, t.fill, t.padding_mode);
  };
  r->Add(std::move(op));
}

void RegisterPad(OpRegistry* r) {
  OpSpec<Pad> op{"Pad", OpKind::kGeometry};
  op.fields = {Field<&Pad::padding>("padding"), Field<&Pad::fill>("fill"), Field<&Pad::padding_mode>("padding_mode")};
  op.validate = [](const Pad& t) { return CheckPadding("Pad", t.padding); };
  op.place = [](const Pad& t, ListState* list) {
    SLUICE_RETURN_IF_ERROR(list->RefuseAfterNormalize("Pad"));
    if (list->out_height > 0) {
      list->out_height += t.padding[1] + t.padding[3];
      list->out_width += t.padding[0] + t.padding[2];
    }
    return Status::OK();
  };
  op.draw = [](const Pad& t, SampleDraw* d) {
    const auto& [left, top, right, bottom] = t.padding;
    return d->Crop(AxisWindow{-left, d->width() + left + right}, AxisWindow{-top, d->height() + top + bottom},
                   t.fill, t.padding_mode);
  };
  r->Add(std::move(op));
}

}  // namespace

void RegisterResizeCropOps(OpRegistry* registry) {
  RegisterRandomResizedCrop(registry);
  RegisterResize(registry);
  RegisterCenterCrop(registry);
  RegisterRandomCrop(registry);
  RegisterPad(registry);
}

}  // namespace sluice
