// The op table's entries for ColorJitter, RandomGrayscale, RandomSolarize, RandomInvert,
// RandomPosterize, RandomAutocontrast and RandomEqualize (colour steps on the resampled image,
// kernels/color), and RandomAdjustSharpness (a filter pass, kernels/filter).
#include <array>
#include <cmath>
#include <utility>

#include "ops/arg_checks.h"
#include "ops/image_ops.h"

namespace sluice {

using namespace transforms;

namespace {

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

// With probability p, one colour step of kKind with kFactor(t).
template <typename T, ColorKind kKind, double (*kFactor)(const T&)>
Status DrawChanceOfStep(const T& t, SampleDraw* d) {
  if (d->rng().Bernoulli(t.p)) d->AddColor(kKind, kFactor(t));
  return Status::OK();
}
template <typename T>
Status PlaceOneStep(const T&, ListState* list) {
  return list->AddPixelSteps(1, 0);
}
template <typename T>
double NoFactor(const T&) {
  return 0.0;
}

// RandomPosterize's mask: the `bits` high bits (torchvision's posterize on uint8).
double PosterizeMask(const RandomPosterize& t) {
  return t.bits >= 8 ? 255.0 : static_cast<double>(((1 << t.bits) - 1) << (8 - t.bits));
}

void RegisterChanceOps(OpRegistry* registry) {
  // Inverting is solarizing at threshold 0: every value is at or above it.
  OpSpec<RandomInvert> invert{"RandomInvert", OpKind::kPixel};
  invert.fields = {Field<&RandomInvert::p>("p")};
  invert.validate = [](const RandomInvert& t) { return CheckProbability("RandomInvert", t.p); };
  invert.place = PlaceOneStep<RandomInvert>;
  invert.draw = DrawChanceOfStep<RandomInvert, ColorKind::kSolarize, NoFactor<RandomInvert>>;
  registry->Add(std::move(invert));

  OpSpec<RandomPosterize> posterize{"RandomPosterize", OpKind::kPixel};
  posterize.fields = {Field<&RandomPosterize::bits>("bits"), Field<&RandomPosterize::p>("p")};
  posterize.validate = [](const RandomPosterize& t) -> Status {
    if (t.bits < 0 || t.bits > 8) return InvalidArgument("RandomPosterize: bits must be in [0, 8], got ", t.bits);
    return CheckProbability("RandomPosterize", t.p);
  };
  posterize.place = PlaceOneStep<RandomPosterize>;
  posterize.draw = DrawChanceOfStep<RandomPosterize, ColorKind::kPosterize, PosterizeMask>;
  registry->Add(std::move(posterize));

  OpSpec<RandomAutocontrast> autocontrast{"RandomAutocontrast", OpKind::kPixel};
  autocontrast.fields = {Field<&RandomAutocontrast::p>("p")};
  autocontrast.validate = [](const RandomAutocontrast& t) { return CheckProbability("RandomAutocontrast", t.p); };
  autocontrast.place = PlaceOneStep<RandomAutocontrast>;
  autocontrast.draw = DrawChanceOfStep<RandomAutocontrast, ColorKind::kAutoContrast, NoFactor<RandomAutocontrast>>;
  registry->Add(std::move(autocontrast));

  OpSpec<RandomEqualize> equalize{"RandomEqualize", OpKind::kPixel};
  equalize.fields = {Field<&RandomEqualize::p>("p")};
  equalize.validate = [](const RandomEqualize& t) { return CheckProbability("RandomEqualize", t.p); };
  equalize.place = PlaceOneStep<RandomEqualize>;
  equalize.draw = DrawChanceOfStep<RandomEqualize, ColorKind::kEqualize, NoFactor<RandomEqualize>>;
  registry->Add(std::move(equalize));

  OpSpec<RandomAdjustSharpness> sharp{"RandomAdjustSharpness", OpKind::kPixel};
  sharp.fields = {Field<&RandomAdjustSharpness::sharpness_factor>("sharpness_factor"),
                  Field<&RandomAdjustSharpness::p>("p")};
  sharp.validate = [](const RandomAdjustSharpness& t) -> Status {
    if (!(std::isfinite(t.sharpness_factor) && t.sharpness_factor >= 0))
      return InvalidArgument("RandomAdjustSharpness: sharpness_factor must be a non-negative number, got ",
                             t.sharpness_factor);
    return CheckProbability("RandomAdjustSharpness", t.p);
  };
  sharp.place = [](const RandomAdjustSharpness&, ListState* list) { return list->AddPixelSteps(0, 1); };
  sharp.draw = [](const RandomAdjustSharpness& t, SampleDraw* d) {
    if (!d->rng().Bernoulli(t.p)) return Status::OK();
    FilterStep f;
    f.kind = FilterKind::kSharpness;
    f.alpha = static_cast<float>(1.0 - t.sharpness_factor);  // as torch's alpha: 1 - factor in double
    d->AddFilter(f);
    return Status::OK();
  };
  registry->Add(std::move(sharp));
}

}  // namespace

void RegisterColorOps(OpRegistry* registry) {
  OpSpec<ColorJitter> jitter{"ColorJitter", OpKind::kPixel};
  jitter.fields = {Field<&ColorJitter::brightness>("brightness"), Field<&ColorJitter::contrast>("contrast"),
                   Field<&ColorJitter::saturation>("saturation"), Field<&ColorJitter::hue>("hue")};
  jitter.validate = [](const ColorJitter& t) {
    return CheckColorRanges("ColorJitter", t.brightness, t.contrast, t.saturation, t.hue);
  };
  jitter.place = [](const ColorJitter& t, ListState* list) {
    // The adjustments whose range is not the identity (the ones DrawJitter adds).
    const int steps = (t.brightness != std::array<double, 2>{1.0, 1.0}) + (t.contrast != std::array<double, 2>{1.0, 1.0}) +
                      (t.saturation != std::array<double, 2>{1.0, 1.0}) + (t.hue != std::array<double, 2>{0.0, 0.0});
    return list->AddPixelSteps(steps, 0);
  };
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
  RegisterChanceOps(registry);
}

}  // namespace sluice
