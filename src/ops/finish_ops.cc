// The op table's entries for the finish step's transforms: Normalize, GaussianNoise, and user
// functions (Lambda), which run on the CPU around it.
#include <cmath>

#include "ops/image_ops.h"

namespace sluice {

using namespace transforms;

namespace {

Status CheckNormalize(const Normalize& t) {
  for (size_t c = 0; c < 3; ++c) {
    if (!std::isfinite(t.mean[c]) || !std::isfinite(t.std[c]))
      return InvalidArgument("Normalize: mean and std must be finite");
    if (t.std[c] == 0.0f)
      return InvalidArgument("Normalize: std evaluated to zero (channel ", c, "), leading to division by zero");
  }
  return Status::OK();
}

Status CheckNoise(const GaussianNoise& t) {
  if (!std::isfinite(t.mean)) return InvalidArgument("GaussianNoise: mean must be a finite number, got ", t.mean);
  if (!(t.sigma >= 0.0 && std::isfinite(t.sigma)))
    return InvalidArgument("GaussianNoise: sigma shouldn't be negative, got ", t.sigma);
  return Status::OK();
}

// The noise's parameters: before or after Normalize, and its generator's key (its own stream).
Status DrawNoise(const GaussianNoise& t, SampleDraw* d) {
  NoiseParams& n = d->noise();
  n.enabled = true;
  n.clip = t.clip;
  n.mean = static_cast<float>(t.mean);
  n.sigma = static_cast<float>(t.sigma);
  n.after_normalize = d->normalized();
  const auto& normalize = d->normalize();
  n.normalize = normalize.has_value();
  if (normalize)
    for (size_t c = 0; c < 3; ++c) n.norm_mean[c] = normalize->mean[c], n.norm_std[c] = normalize->std[c];
  n.key = d->rng().key();
  return Status::OK();
}

Status PlaceFunction(const Lambda& t, ListState* list) {
  const bool pixels = t.stage == SampleFunction::Stage::kPixels;
  if (pixels && list->normalize)
    return Unsupported(t.name, " on uint8 pixels after Normalize is not supported");
  (pixels ? list->pixel_fns : list->finished_fns).push_back(PlacedFunction{t, list->placed});
  return Status::OK();
}

}  // namespace

void RegisterFinishOps(OpRegistry* registry) {
  OpSpec<Normalize> norm{"Normalize", OpKind::kNormalize};
  norm.fields = {Field<&Normalize::mean>("mean"), Field<&Normalize::std>("std")};
  norm.validate = CheckNormalize;
  norm.place = [](const Normalize& t, ListState* list) -> Status {
    if (list->normalize) return InvalidArgument("Normalize appears twice; combine them into one");
    list->normalize = t;
    return Status::OK();
  };
  norm.draw = [](const Normalize&, SampleDraw* d) {
    d->SetNormalized();
    return Status::OK();
  };
  registry->Add(std::move(norm));

  OpSpec<GaussianNoise> noise{"GaussianNoise", OpKind::kNoise};
  noise.fields = {Field<&GaussianNoise::mean>("mean"), Field<&GaussianNoise::sigma>("sigma"),
                  Field<&GaussianNoise::clip>("clip")};
  noise.validate = CheckNoise;
  noise.place = [](const GaussianNoise&, ListState* list) -> Status {
    if (list->has_noise) return Unsupported("GaussianNoise appears twice; combine them into one");
    return Status::OK();
  };
  noise.draw = DrawNoise;
  registry->Add(std::move(noise));

  OpSpec<Lambda> fn{"Lambda", OpKind::kFunction};  // no fields: the bindings make it from a callable
  fn.validate = [](const Lambda& t) -> Status {
    if (t.fn == nullptr) return InvalidArgument(t.name, ": no function");
    return Status::OK();
  };
  fn.place = PlaceFunction;
  registry->Add(std::move(fn));
}

}  // namespace sluice
