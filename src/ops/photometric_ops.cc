// The op table's entries for RandomChannelPermutation and RandomPhotometricDistort: colour steps
// on the resampled image (kernels/color), the channel order one step of its own (kPermute).
#include <utility>

#include "ops/arg_checks.h"
#include "ops/image_ops.h"

namespace sluice {

using namespace transforms;

namespace {

// One of the six channel orders, uniformly (torch.randperm(3) of torchvision's).
void AddRandomPermutation(SampleDraw* d) {
  d->AddColor(ColorKind::kPermute, static_cast<double>(d->rng().RandInt(0, 6)));
}

// torchvision's RandomPhotometricDistort: each adjustment with probability p and its factor
// drawn, then the contrast's place, then the channel order with probability p.
Status DrawDistort(const RandomPhotometricDistort& t, SampleDraw* d) {
  SampleRng& rng = d->rng();
  const std::array<double, 2>* ranges[4] = {&t.brightness, &t.contrast, &t.saturation, &t.hue};
  bool on[4];
  float factors[4];  // a float32 tensor's value, as ColorJitter's
  for (int k = 0; k < 4; ++k) {
    on[k] = rng.Bernoulli(t.p);
    factors[k] = on[k] ? static_cast<float>(rng.Uniform((*ranges[k])[0], (*ranges[k])[1])) : 0.0f;
  }
  const bool contrast_before = rng.Bernoulli(0.5);
  if (on[0]) d->AddColor(ColorKind::kBrightness, factors[0]);
  if (on[1] && contrast_before) d->AddColor(ColorKind::kContrast, factors[1]);
  if (on[2]) d->AddColor(ColorKind::kSaturation, factors[2]);
  if (on[3]) d->AddColor(ColorKind::kHue, factors[3]);
  if (on[1] && !contrast_before) d->AddColor(ColorKind::kContrast, factors[1]);
  if (rng.Bernoulli(t.p)) AddRandomPermutation(d);
  return Status::OK();
}

}  // namespace

void RegisterPhotometricOps(OpRegistry* registry) {
  OpSpec<RandomChannelPermutation> permute{"RandomChannelPermutation", OpKind::kPixel};
  permute.validate = [](const RandomChannelPermutation&) { return Status::OK(); };
  permute.place = [](const RandomChannelPermutation&, ListState* list) { return list->AddPixelSteps(1, 0); };
  permute.draw = [](const RandomChannelPermutation&, SampleDraw* d) {
    AddRandomPermutation(d);
    return Status::OK();
  };
  registry->Add(std::move(permute));

  OpSpec<RandomPhotometricDistort> distort{"RandomPhotometricDistort", OpKind::kPixel};
  distort.fields = {Field<&RandomPhotometricDistort::brightness>("brightness"),
                    Field<&RandomPhotometricDistort::contrast>("contrast"),
                    Field<&RandomPhotometricDistort::saturation>("saturation"),
                    Field<&RandomPhotometricDistort::hue>("hue"), Field<&RandomPhotometricDistort::p>("p")};
  distort.validate = [](const RandomPhotometricDistort& t) -> Status {
    SLUICE_RETURN_IF_ERROR(
        CheckColorRanges("RandomPhotometricDistort", t.brightness, t.contrast, t.saturation, t.hue));
    return CheckProbability("RandomPhotometricDistort", t.p);
  };
  distort.place = [](const RandomPhotometricDistort&, ListState* list) { return list->AddPixelSteps(5, 0); };
  distort.draw = DrawDistort;
  registry->Add(std::move(distort));
}

}  // namespace sluice
