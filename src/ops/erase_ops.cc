#include "ops/erase_ops.h"

#include <algorithm>
#include <cmath>

#include "ops/arg_checks.h"
#include "ops/image_ops.h"
#include "ops/torch_math.h"

namespace sluice {

using namespace transforms;

void DrawCutout(SampleRng& rng, int width, int height, const Cutout& t, bool finished, EraseOps* ops) {
  for (int k = 0; k < t.n_holes && ops->num < EraseOps::kMaxRects; ++k) {
    const int y = static_cast<int>(rng.RandInt(0, height)), x = static_cast<int>(rng.RandInt(0, width));
    const int half = t.length / 2;
    EraseRect& r = ops->rects[ops->num++];
    r.y0 = std::clamp(y - half, 0, height), r.y1 = std::clamp(y + half, 0, height);
    r.x0 = std::clamp(x - half, 0, width), r.x1 = std::clamp(x + half, 0, width);
    r.finished = finished;
  }
}

bool DrawErasing(SampleRng& rng, int width, int height, const RandomErasing& t, Rect* r) {
  if (!(rng.Uniform01() < t.p)) return false;
  const double area = static_cast<double>(height) * width;
  const double log_r0 = std::log(t.ratio[0]), log_r1 = std::log(t.ratio[1]);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double erase_area = area * Float32(rng.Uniform(t.scale[0], t.scale[1]));
    const double aspect = std::exp(Float32(rng.Uniform(log_r0, log_r1)));
    const int h = RoundHalfEven(std::sqrt(erase_area * aspect));
    const int w = RoundHalfEven(std::sqrt(erase_area / aspect));
    if (!(h < height && w < width)) continue;
    const int i = static_cast<int>(rng.RandInt(0, height - h + 1));
    const int j = static_cast<int>(rng.RandInt(0, width - w + 1));
    *r = Rect{j, i, w, h};
    return true;
  }
  return false;
}

void DrawGridMask(SampleRng& rng, const GridMask& t, bool finished, GridParams* out) {
  const int tile = static_cast<int>(rng.RandInt(t.tile[0], static_cast<int64_t>(t.tile[1]) + 1));
  const float angle = static_cast<float>(rng.Uniform(t.angle[0], t.angle[1]));
  const float shift_x = static_cast<float>(rng.Uniform(t.shift_x[0], t.shift_x[1]));
  const float shift_y = static_cast<float>(rng.Uniform(t.shift_y[0], t.shift_y[1]));
  const float ft = static_cast<float>(tile);
  out->enabled = true;
  out->finished = finished;
  out->ca = std::cos(angle) / ft;
  out->sa = std::sin(angle) / ft;
  out->sx = shift_x / ft;
  out->sy = shift_y / ft;
  out->ratio = static_cast<float>(t.ratio);
}

namespace {

Status CheckErasing(const RandomErasing& t) {
  SLUICE_RETURN_IF_ERROR(CheckProbability("RandomErasing", t.p));
  if (!(t.scale[0] >= 0.0 && t.scale[0] <= t.scale[1] && t.scale[1] <= 1.0))
    return InvalidArgument("RandomErasing: scale must be (min, max) with 0 <= min <= max <= 1, got (", t.scale[0],
                           ", ", t.scale[1], ")");
  if (!(t.ratio[0] > 0.0 && t.ratio[0] <= t.ratio[1] && std::isfinite(t.ratio[1])))
    return InvalidArgument("RandomErasing: ratio must be (min, max) with 0 < min <= max, got (", t.ratio[0], ", ",
                           t.ratio[1], ")");
  if (t.random_value && !t.tensor_scale)
    return InvalidArgument("RandomErasing: value='random' draws float values: put it after ToTensor");
  for (float v : t.value) {
    if (!std::isfinite(v)) return InvalidArgument("RandomErasing: value must be finite, got ", v);
    if (!t.tensor_scale && !(v >= 0.f && v <= 255.f))
      return InvalidArgument("RandomErasing: value must be in [0, 255] on uint8 pixels (before ToTensor), got ", v);
  }
  return Status::OK();
}

// The rectangle with its value in the scale of its place in the list: pixels (before ToTensor),
// [0, 1] values normalized as Normalize would the tensor, or normalized values; a random one's
// normals likewise (z * 1 / std - mean / std before a Normalize).
Status DrawRandomErasing(const RandomErasing& t, SampleDraw* d) {
  Rect box;
  EraseOps& ops = d->erase();
  if (!DrawErasing(d->rng(), d->width(), d->height(), t, &box) || ops.num >= EraseOps::kMaxRects)
    return Status::OK();
  EraseRect& e = ops.rects[ops.num++];
  e.x0 = box.x, e.y0 = box.y, e.x1 = box.x + box.w, e.y1 = box.y + box.h;
  e.finished = t.tensor_scale;
  e.random = t.random_value;
  e.key = MakeStreamKey(d->key().seed, d->key().epoch, d->key().sample, d->op_index());
  const auto& normalize = d->normalize();
  for (size_t ch = 0; ch < 3; ++ch) {
    const float value = t.random_value ? 0.f : t.value[ch];
    if (t.random_value && !d->normalized() && normalize) e.scale[ch] = 1.f / normalize->std[ch];
    if (!t.tensor_scale) {
      e.pixel[ch] = static_cast<uint8_t>(value);  // as torch casts the value into a uint8 image
    } else if (!d->normalized() && normalize) {
      e.value[ch] = (value - normalize->mean[ch]) / normalize->std[ch];
    } else {
      e.value[ch] = value;
    }
  }
  return Status::OK();
}

Status CheckGridMask(const GridMask& t) {
  if (!(t.tile[0] > 0 && t.tile[0] <= t.tile[1]))
    return InvalidArgument("GridMask: tile must be positive, with min <= max, got (", t.tile[0], ", ", t.tile[1], ")");
  if (!(t.ratio >= 0.0 && t.ratio <= 1.0))
    return InvalidArgument("GridMask: ratio must be a number in [0, 1], got ", t.ratio);
  SLUICE_RETURN_IF_ERROR(CheckRange("GridMask", "angle", t.angle));
  SLUICE_RETURN_IF_ERROR(CheckRange("GridMask", "shift_x", t.shift_x));
  return CheckRange("GridMask", "shift_y", t.shift_y);
}

void RegisterCutout(OpRegistry* registry) {
  OpSpec<Cutout> op{"Cutout", OpKind::kErase};
  op.fields = {Field<&Cutout::n_holes>("n_holes"), Field<&Cutout::length>("length")};
  op.validate = [](const Cutout& t) -> Status {
    if (t.n_holes < 1 || t.n_holes > 16)
      return InvalidArgument("Cutout: n_holes must be an int in [1, 16], got ", t.n_holes);
    if (t.length <= 0) return InvalidArgument("Cutout: length must be a positive int, got ", t.length);
    return Status::OK();
  };
  op.place = [](const Cutout& t, ListState* list) { return list->AddEraseRects(t.n_holes); };
  op.draw = [](const Cutout& t, SampleDraw* d) {
    DrawCutout(d->rng(), d->width(), d->height(), t, d->normalized(), &d->erase());
    return Status::OK();
  };
  registry->Add(std::move(op));
}

void RegisterRandomErasing(OpRegistry* registry) {
  OpSpec<RandomErasing> op{"RandomErasing", OpKind::kErase};
  op.fields = {Field<&RandomErasing::p>("p"), Field<&RandomErasing::scale>("scale"),
               Field<&RandomErasing::ratio>("ratio"), Field<&RandomErasing::value>("value"),
               Field<&RandomErasing::tensor_scale>("tensor_scale"),
               Field<&RandomErasing::random_value>("random_value")};
  op.validate = CheckErasing;
  op.place = [](const RandomErasing&, ListState* list) { return list->AddEraseRects(1); };
  op.draw = DrawRandomErasing;
  registry->Add(std::move(op));
}

void RegisterGridMask(OpRegistry* registry) {
  OpSpec<GridMask> op{"GridMask", OpKind::kErase};
  op.fields = {Field<&GridMask::tile>("tile"), Field<&GridMask::ratio>("ratio"), Field<&GridMask::angle>("angle"),
               Field<&GridMask::shift_x>("shift_x"), Field<&GridMask::shift_y>("shift_y")};
  op.validate = CheckGridMask;
  op.place = [](const GridMask&, ListState* list) -> Status {
    if (list->has_grid) return Unsupported("GridMask appears twice");
    list->has_grid = true;
    return Status::OK();
  };
  op.draw = [](const GridMask& t, SampleDraw* d) {
    DrawGridMask(d->rng(), t, d->normalized(), &d->erase().grid);
    return Status::OK();
  };
  registry->Add(std::move(op));
}

}  // namespace

void RegisterEraseOps(OpRegistry* registry) {
  RegisterCutout(registry);
  RegisterRandomErasing(registry);
  RegisterGridMask(registry);
}

}  // namespace sluice
