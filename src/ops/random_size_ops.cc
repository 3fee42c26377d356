// The op table's entries for torchvision v2's random resizes (RandomResize, RandomShortestSize,
// ScaleJitter) and RandomZoomOut: a size or a canvas drawn per sample, then the resize or the
// padded window of the crop and resize ops. Draws as torchvision makes them: randint's
// half-open range, float32 products truncated by int().
#include <algorithm>
#include <cmath>
#include <utility>

#include "ops/arg_checks.h"
#include "ops/image_ops.h"
#include "ops/resize_crop_ops.h"
#include "ops/torch_math.h"

namespace sluice {

using namespace transforms;

namespace {

// A size from `scale` * (width, height), as int(orig * r) with r a float32 tensor.
void ScaledSize(int width, int height, float r, int* out_w, int* out_h) {
  *out_w = static_cast<int>(static_cast<float>(width) * r);
  *out_h = static_cast<int>(static_cast<float>(height) * r);
}

Status ResizeToDrawn(SampleDraw* d, int w, int h, Interpolation interpolation, bool antialias, const char* op) {
  if (w < 1 || h < 1)
    return InvalidArgument(op, ": the drawn size of a ", d->width(), " x ", d->height(), " image is ", w, " x ", h);
  return d->Resize(w, h, interpolation, antialias);
}

Status PlaceVariableSize(ListState* list) {
  list->out_height = list->out_width = 0;  // the size is drawn per sample
  return Status::OK();
}

void RegisterRandomResize(OpRegistry* r) {
  OpSpec<RandomResize> op{"RandomResize", OpKind::kGeometry};
  op.fields = {Field<&RandomResize::min_size>("min_size"), Field<&RandomResize::max_size>("max_size"),
               Field<&RandomResize::interpolation>("interpolation"), Field<&RandomResize::antialias>("antialias")};
  op.validate = [](const RandomResize& t) -> Status {
    if (t.min_size < 1 || t.max_size <= t.min_size)
      return InvalidArgument("RandomResize: sizes must be 1 <= min_size < max_size, got ", t.min_size, " and ",
                             t.max_size);
    return Status::OK();
  };
  op.place = [](const RandomResize&, ListState* list) { return PlaceVariableSize(list); };
  op.draw = [](const RandomResize& t, SampleDraw* d) {
    Resize resize;
    resize.height = static_cast<int>(d->rng().RandInt(t.min_size, t.max_size));
    int w = 0, h = 0;
    ResizedSize(d->width(), d->height(), resize, &w, &h);
    return ResizeToDrawn(d, w, h, t.interpolation, t.antialias, "RandomResize");
  };
  r->Add(std::move(op));
}

void RegisterRandomShortestSize(OpRegistry* r) {
  OpSpec<RandomShortestSize> op{"RandomShortestSize", OpKind::kGeometry};
  op.fields = {Field<&RandomShortestSize::min_size>("min_size"), Field<&RandomShortestSize::num_sizes>("num_sizes"),
               Field<&RandomShortestSize::max_size>("max_size"),
               Field<&RandomShortestSize::interpolation>("interpolation"),
               Field<&RandomShortestSize::antialias>("antialias")};
  op.validate = [](const RandomShortestSize& t) -> Status {
    if (t.num_sizes < 1 || t.num_sizes > RandomShortestSize::kMaxSizes)
      return InvalidArgument("RandomShortestSize: min_size must hold 1 to ", RandomShortestSize::kMaxSizes,
                             " sizes, got ", t.num_sizes);
    for (int k = 0; k < t.num_sizes; ++k)
      if (t.min_size[static_cast<size_t>(k)] < 1)
        return InvalidArgument("RandomShortestSize: min_size values must be positive, got ", t.min_size[static_cast<size_t>(k)]);
    if (t.max_size < 0) return InvalidArgument("RandomShortestSize: max_size must be positive, got ", t.max_size);
    return Status::OK();
  };
  op.place = [](const RandomShortestSize&, ListState* list) { return PlaceVariableSize(list); };
  op.draw = [](const RandomShortestSize& t, SampleDraw* d) {
    const int w = d->width(), h = d->height();
    const int size = t.min_size[static_cast<size_t>(d->rng().RandInt(0, t.num_sizes))];
    double ratio = static_cast<double>(size) / std::min(w, h);  // Python floats
    if (t.max_size > 0) ratio = std::min(ratio, static_cast<double>(t.max_size) / std::max(w, h));
    return ResizeToDrawn(d, static_cast<int>(w * ratio), static_cast<int>(h * ratio), t.interpolation, t.antialias,
                         "RandomShortestSize");
  };
  r->Add(std::move(op));
}

void RegisterScaleJitter(OpRegistry* r) {
  OpSpec<ScaleJitter> op{"ScaleJitter", OpKind::kGeometry};
  op.fields = {Field<&ScaleJitter::target_height>("target_height"), Field<&ScaleJitter::target_width>("target_width"),
               Field<&ScaleJitter::scale_range>("scale_range"), Field<&ScaleJitter::interpolation>("interpolation"),
               Field<&ScaleJitter::antialias>("antialias")};
  op.validate = [](const ScaleJitter& t) -> Status {
    SLUICE_RETURN_IF_ERROR(CheckSize("ScaleJitter", t.target_height, t.target_width));
    SLUICE_RETURN_IF_ERROR(CheckRange("ScaleJitter", "scale_range", t.scale_range));
    if (!(t.scale_range[0] > 0)) return InvalidArgument("ScaleJitter: scale_range must be positive");
    return Status::OK();
  };
  op.place = [](const ScaleJitter&, ListState* list) { return PlaceVariableSize(list); };
  op.draw = [](const ScaleJitter& t, SampleDraw* d) {
    const int w = d->width(), h = d->height();
    // scale = s0 + rand(1) * (s1 - s0) and r = min(...) * scale, as float32 tensors.
    const float u = static_cast<float>(d->rng().Uniform(0.0, 1.0));
    const float scale = static_cast<float>(t.scale_range[0]) + u * static_cast<float>(t.scale_range[1] - t.scale_range[0]);
    const float fit = static_cast<float>(std::min(static_cast<double>(t.target_width) / w,
                                                  static_cast<double>(t.target_height) / h));
    int ow = 0, oh = 0;
    ScaledSize(w, h, fit * scale, &ow, &oh);
    return ResizeToDrawn(d, ow, oh, t.interpolation, t.antialias, "ScaleJitter");
  };
  r->Add(std::move(op));
}

void RegisterRandomZoomOut(OpRegistry* r) {
  OpSpec<RandomZoomOut> op{"RandomZoomOut", OpKind::kGeometry};
  op.fields = {Field<&RandomZoomOut::fill>("fill"), Field<&RandomZoomOut::side_range>("side_range"),
               Field<&RandomZoomOut::p>("p")};
  op.validate = [](const RandomZoomOut& t) -> Status {
    if (!(t.side_range[0] >= 1.0 && t.side_range[0] <= t.side_range[1] && std::isfinite(t.side_range[1])))
      return InvalidArgument("RandomZoomOut: side_range must be (min, max) with 1 <= min <= max, got (",
                             t.side_range[0], ", ", t.side_range[1], ")");
    return CheckProbability("RandomZoomOut", t.p);
  };
  op.place = [](const RandomZoomOut&, ListState* list) -> Status {
    SLUICE_RETURN_IF_ERROR(list->RefuseAfterNormalize("RandomZoomOut"));
    return PlaceVariableSize(list);
  };
  op.draw = [](const RandomZoomOut& t, SampleDraw* d) {
    SampleRng& rng = d->rng();
    if (!rng.Bernoulli(t.p)) return Status::OK();
    const int w = d->width(), h = d->height();
    const float side = static_cast<float>(t.side_range[0]) +
                       static_cast<float>(rng.Uniform(0.0, 1.0)) * static_cast<float>(t.side_range[1] - t.side_range[0]);
    int canvas_w = 0, canvas_h = 0;
    ScaledSize(w, h, side, &canvas_w, &canvas_h);
    const float rx = static_cast<float>(rng.Uniform(0.0, 1.0)), ry = static_cast<float>(rng.Uniform(0.0, 1.0));
    const int left = static_cast<int>(static_cast<float>(canvas_w - w) * rx);
    const int top = static_cast<int>(static_cast<float>(canvas_h - h) * ry);
    return d->Crop(AxisWindow{-left, canvas_w}, AxisWindow{-top, canvas_h}, t.fill);
  };
  r->Add(std::move(op));
}

}  // namespace

void RegisterRandomSizeOps(OpRegistry* registry) {
  RegisterRandomResize(registry);
  RegisterRandomShortestSize(registry);
  RegisterScaleJitter(registry);
  RegisterRandomZoomOut(registry);
}

}  // namespace sluice
