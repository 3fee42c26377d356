#include "ops/affine_ops.h"

#include <cmath>

#include "ops/arg_checks.h"
#include "ops/image_ops.h"
#include "ops/torch_math.h"

namespace sluice {

using namespace transforms;

AffineParams DrawRotation(SampleRng& rng, const RandomRotation& t) {
  AffineParams a;
  a.angle = -Float32(rng.Uniform(t.degrees[0], t.degrees[1]));
  return a;
}

void DrawPerspective(SampleRng& rng, int width, int height, const RandomPerspective& t, int end[4][2]) {
  const int bound_h = static_cast<int>(t.distortion_scale * (height / 2)) + 1;
  const int bound_w = static_cast<int>(t.distortion_scale * (width / 2)) + 1;
  auto from = [&rng](int lo, int hi) { return static_cast<int>(rng.RandInt(lo, hi)); };
  end[0][0] = from(0, bound_w), end[0][1] = from(0, bound_h);
  end[1][0] = from(width - bound_w, width), end[1][1] = from(0, bound_h);
  end[2][0] = from(width - bound_w, width), end[2][1] = from(height - bound_h, height);
  end[3][0] = from(0, bound_w), end[3][1] = from(height - bound_h, height);
}

AffineParams DrawAffine(SampleRng& rng, int width, int height, const RandomAffine& t) {
  AffineParams a;
  a.angle = -Float32(rng.Uniform(t.degrees[0], t.degrees[1]));
  const double max_dx = t.translate[0] * width, max_dy = t.translate[1] * height;
  a.tx = RoundHalfEven(Float32(rng.Uniform(-max_dx, max_dx)));
  a.ty = RoundHalfEven(Float32(rng.Uniform(-max_dy, max_dy)));
  a.scale = Float32(rng.Uniform(t.scale[0], t.scale[1]));
  a.shear_x = Float32(rng.Uniform(t.shear[0], t.shear[1]));
  a.shear_y = Float32(rng.Uniform(t.shear[2], t.shear[3]));
  return a;
}

namespace {

Status CheckWarp(const char* op, const std::array<double, 2>& degrees, Interpolation i, bool has_center,
                 const std::array<double, 2>& center) {
  if (!(std::isfinite(degrees[0]) && std::isfinite(degrees[1])))
    return InvalidArgument(op, ": degrees must be finite, got (", degrees[0], ", ", degrees[1], ")");
  if (!(degrees[0] <= degrees[1]))
    return InvalidArgument(op, ": degrees must be (min, max) with min <= max, got (", degrees[0], ", ", degrees[1],
                           ")");
  SLUICE_RETURN_IF_ERROR(CheckWarpInterpolation(op, i));
  if (has_center && !(std::isfinite(center[0]) && std::isfinite(center[1])))
    return InvalidArgument(op, ": center must be finite, got (", center[0], ", ", center[1], ")");
  return Status::OK();
}

Status CheckAffine(const RandomAffine& t) {
  SLUICE_RETURN_IF_ERROR(CheckWarp("RandomAffine", t.degrees, t.interpolation, t.has_center, t.center));
  for (double v : t.translate)
    if (!(v >= 0.0 && v <= 1.0))
      return InvalidArgument("RandomAffine: translate values should be between 0 and 1, got (", t.translate[0], ", ",
                             t.translate[1], ")");
  SLUICE_RETURN_IF_ERROR(CheckRange("RandomAffine", "scale", t.scale));
  if (!(t.scale[0] > 0.0))
    return InvalidArgument("RandomAffine: scale values should be positive, got (", t.scale[0], ", ", t.scale[1], ")");
  SLUICE_RETURN_IF_ERROR(CheckRange("RandomAffine", "shear (x)", {t.shear[0], t.shear[1]}));
  SLUICE_RETURN_IF_ERROR(CheckRange("RandomAffine", "shear (y)", {t.shear[2], t.shear[3]}));
  for (double v : t.shear)
    if (!(std::fabs(v) < 90.0))
      return InvalidArgument("RandomAffine: shear angles must lie in (-90, 90) degrees, got ", v);
  return Status::OK();
}

void RegisterPerspective(OpRegistry* registry) {
  OpSpec<RandomPerspective> op{"RandomPerspective", OpKind::kGeometry};
  op.fields = {Field<&RandomPerspective::distortion_scale>("distortion_scale"), Field<&RandomPerspective::p>("p"),
               Field<&RandomPerspective::interpolation>("interpolation"), Field<&RandomPerspective::fill>("fill")};
  op.validate = [](const RandomPerspective& t) -> Status {
    if (!(t.distortion_scale >= 0.0 && t.distortion_scale <= 1.0))
      return InvalidArgument("RandomPerspective: distortion_scale must be in [0, 1], got ", t.distortion_scale);
    SLUICE_RETURN_IF_ERROR(CheckWarpInterpolation("RandomPerspective", t.interpolation));
    return CheckProbability("RandomPerspective", t.p);
  };
  op.place = [](const RandomPerspective&, ListState* list) {
    list->has_warp = true;
    return list->RefuseAfterNormalize("RandomPerspective");
  };
  op.draw = [](const RandomPerspective& t, SampleDraw* d) {
    if (!d->rng().Bernoulli(t.p)) return Status::OK();
    const int w = d->width(), h = d->height();
    int end[4][2];
    DrawPerspective(d->rng(), w, h, t, end);
    const double start[4][2] = {{0, 0}, {w - 1.0, 0}, {w - 1.0, h - 1.0}, {0, h - 1.0}};
    double endpoints[4][2];
    for (int k = 0; k < 4; ++k) endpoints[k][0] = end[k][0], endpoints[k][1] = end[k][1];
    float c[8];
    if (!PerspectiveCoefficients(start, endpoints, c)) return Status::OK();  // a degenerate draw: unchanged
    return d->Perspective(c, t.interpolation, t.fill);
  };
  registry->Add(std::move(op));
}

}  // namespace

void RegisterAffineOps(OpRegistry* registry) {
  OpSpec<RandomRotation> rot{"RandomRotation", OpKind::kGeometry};
  rot.fields = {Field<&RandomRotation::degrees>("degrees"), Field<&RandomRotation::interpolation>("interpolation"),
                Field<&RandomRotation::fill>("fill"), Field<&RandomRotation::has_center>("has_center"),
                Field<&RandomRotation::center>("center"), Field<&RandomRotation::expand>("expand")};
  rot.validate = [](const RandomRotation& t) {
    return CheckWarp("RandomRotation", t.degrees, t.interpolation, t.has_center, t.center);
  };
  rot.place = [](const RandomRotation& t, ListState* list) {
    list->has_warp = true;
    if (t.expand) list->out_height = list->out_width = 0;  // the size follows the angle
    return list->RefuseAfterNormalize("RandomRotation");
  };
  rot.draw = [](const RandomRotation& t, SampleDraw* d) {
    return d->Warp(DrawRotation(d->rng(), t), t.interpolation, t.fill, t.has_center ? t.center.data() : nullptr,
                   t.expand);
  };
  registry->Add(std::move(rot));

  OpSpec<RandomAffine> aff{"RandomAffine", OpKind::kGeometry};
  aff.fields = {Field<&RandomAffine::degrees>("degrees"), Field<&RandomAffine::translate>("translate"),
                Field<&RandomAffine::scale>("scale"), Field<&RandomAffine::shear>("shear"),
                Field<&RandomAffine::interpolation>("interpolation"), Field<&RandomAffine::fill>("fill"),
                Field<&RandomAffine::has_center>("has_center"), Field<&RandomAffine::center>("center")};
  aff.validate = CheckAffine;
  aff.place = [](const RandomAffine&, ListState* list) {
    list->has_warp = true;
    return list->RefuseAfterNormalize("RandomAffine");
  };
  aff.draw = [](const RandomAffine& t, SampleDraw* d) {
    const AffineParams a = DrawAffine(d->rng(), d->width(), d->height(), t);
    return d->Warp(a, t.interpolation, t.fill, t.has_center ? t.center.data() : nullptr);
  };
  registry->Add(std::move(aff));
  RegisterPerspective(registry);
}

}  // namespace sluice
