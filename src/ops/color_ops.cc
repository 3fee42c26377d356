// The op table's entries for ColorJitter, RandomGrayscale and RandomSolarize: colour steps on the
// resampled image (kernels/color).
#include <cmath>
#include <utility>

#include "ops/arg_checks.h"
#include "ops/image_ops.h"

namespace sluice {

using namespace transforms;

namespace {

Status CheckJitter(const ColorJitter& t) {
  const std::pair<const char*, const std::array<double, 2>*> factors[] = {
      {"brightness", &t.brightness}, {"contrast", &t.contrast}, {"saturation", &t.saturation}};
  for (const auto& [name, r] : factors)
    if (!(std::isfinite((*r)[0]) && std::isfinite((*r)[1]) && (*r)[0] >= 0 && (*r)[0] <= (*r)[1]))
      return InvalidArgument("ColorJitter: ", name, " must be a range (min, max) with 0 <= min <= max, got (", (*r)[0],
                             ", ", (*r)[1], ")");
  if (!(t.hue[0] >= -0.5 && t.hue[0] <= t.hue[1] && t.hue[1] <= 0.5))
    return InvalidArgument("ColorJitter: hue must be a range (min, max) with -0.5 <= min <= max <= 0.5, got (",
                           t.hue[0], ", ", t.hue[1], ")");
  return Status::OK();
}

// torchvision's ColorJitter: a random order of the four, then a factor for each; an adjustment
// whose range is the identity is left out.
Status DrawJitter(const ColorJitter& t, SampleDraw* d) {
  SampleRng& rng = d->rng();
  int order[4] = {0, 1, 2, 3};
  for (int k = 3; k > 0; --k) std::swap(order[k], order[rng.RandInt(0, k + 1)]);
  const std::array<double, 2>* ranges[4] = {&t.brightness, &t.contrast, &t.saturation, &t.hue};
  double factors[4];
  for (int k = 0; k < 4; ++k) factors[k] = rng.Uniform((*ranges[k])[0], (*ranges[k])[1]);
  const ColorKind kinds[4] = {ColorKind::kBrightness, ColorKind::kContrast, ColorKind::kSaturation, ColorKind::kHue};
  for (int k : order) {
    const double identity = kinds[k] == ColorKind::kHue ? 0.0 : 1.0;
    if ((*ranges[k])[0] == identity && (*ranges[k])[1] == identity) continue;
    d->AddColor(kinds[k], static_cast<float>(factors[k]));  // a float32 tensor's value
  }
  return Status::OK();
}

}  // namespace

void RegisterColorOps(OpRegistry* registry) {
  OpSpec<ColorJitter> jitter{"ColorJitter", OpKind::kPixel};
  jitter.fields = {Field<&ColorJitter::brightness>("brightness"), Field<&ColorJitter::contrast>("contrast"),
                   Field<&ColorJitter::saturation>("saturation"), Field<&ColorJitter::hue>("hue")};
  jitter.validate = CheckJitter;
  jitter.place = [](const ColorJitter&, ListState* list) { return list->AddPixelSteps(4, 0); };
  jitter.draw = DrawJitter;
  registry->Add(std::move(jitter));

  OpSpec<RandomGrayscale> gray{"RandomGrayscale", OpKind::kPixel};
  gray.fields = {Field<&RandomGrayscale::p>("p")};
  gray.validate = [](const RandomGrayscale& t) { return CheckProbability("RandomGrayscale", t.p); };
  gray.place = [](const RandomGrayscale&, ListState* list) { return list->AddPixelSteps(1, 0); };
  gray.draw = [](const RandomGrayscale& t, SampleDraw* d) {
    if (d->rng().Bernoulli(t.p)) d->AddColor(ColorKind::kGrayscale, 0.0);
    return Status::OK();
  };
  registry->Add(std::move(gray));

  OpSpec<RandomSolarize> solarize{"RandomSolarize", OpKind::kPixel};
  solarize.fields = {Field<&RandomSolarize::threshold>("threshold"), Field<&RandomSolarize::p>("p")};
  solarize.validate = [](const RandomSolarize& t) -> Status {
    if (!(std::isfinite(t.threshold) && t.threshold <= 255.0))
      return InvalidArgument("RandomSolarize: threshold should be less or equal the maximum value of the dtype "
                             "(255 for uint8 pixels), got ", t.threshold);
    return CheckProbability("RandomSolarize", t.p);
  };
  solarize.place = [](const RandomSolarize&, ListState* list) { return list->AddPixelSteps(1, 0); };
  solarize.draw = [](const RandomSolarize& t, SampleDraw* d) {
    if (d->rng().Bernoulli(t.p)) d->AddColor(ColorKind::kSolarize, t.threshold);
    return Status::OK();
  };
  registry->Add(std::move(solarize));
}

}  // namespace sluice
