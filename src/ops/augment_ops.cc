#include "ops/augment_ops.h"

#include <cmath>

#include "kernels/warp/affine_matrix.h"
#include "ops/arg_checks.h"
#include "ops/image_ops.h"
#include "ops/torch_math.h"

namespace sluice {

using namespace transforms;

namespace {
constexpr double kPi = 3.14159265358979323846;
}  // namespace

const char* AugmentOpName(AugmentOp op) {
  static const char* kNames[kNumAugmentOps + 1] = {
      "Identity", "ShearX",     "ShearY",    "TranslateX", "TranslateY", "Rotate",       "Brightness",
      "Color",    "Contrast",   "Sharpness", "Posterize",  "Solarize",   "AutoContrast", "Equalize", "Invert"};
  return kNames[static_cast<int>(op)];
}

namespace {

bool Signed(AugmentOp op) {
  return op != AugmentOp::kIdentity && op != AugmentOp::kPosterize && op != AugmentOp::kSolarize &&
         op != AugmentOp::kAutoContrast && op != AugmentOp::kEqualize && op != AugmentOp::kInvert;
}

bool HasMagnitudes(AugmentOp op) {
  return op != AugmentOp::kIdentity && op != AugmentOp::kAutoContrast && op != AugmentOp::kEqualize &&
         op != AugmentOp::kInvert;
}

// Bin `bin` of an op's magnitude table (torchvision's _AUGMENTATION_SPACE): RandAugment's, or
// TrivialAugmentWide's (`wide`), for a width x height image.
double Magnitude(AugmentOp op, bool wide, int bins, int bin, int width, int height) {
  switch (op) {
    case AugmentOp::kShearX:
    case AugmentOp::kShearY: return LinspaceF32(0.0, wide ? 0.99 : 0.3, bins, bin);
    case AugmentOp::kTranslateX: return LinspaceF32(0.0, wide ? 32.0 : 150.0 / 331.0 * width, bins, bin);
    case AugmentOp::kTranslateY: return LinspaceF32(0.0, wide ? 32.0 : 150.0 / 331.0 * height, bins, bin);
    case AugmentOp::kRotate: return LinspaceF32(0.0, wide ? 135.0 : 30.0, bins, bin);
    case AugmentOp::kBrightness:
    case AugmentOp::kColor:
    case AugmentOp::kContrast:
    case AugmentOp::kSharpness: return LinspaceF32(0.0, wide ? 0.99 : 0.9, bins, bin);
    case AugmentOp::kPosterize: {
      // (8 - (arange(bins) / ((bins - 1) / d))).round().int(), in float32, d = 4 (6 when wide)
      const float q = static_cast<float>(bin) / static_cast<float>((bins - 1) / (wide ? 6.0 : 4.0));
      return static_cast<int>(std::nearbyint(8.0f - q));
    }
    case AugmentOp::kSolarize: return LinspaceF32(1.0, 0.0, bins, bin);
    default: return 0.0;
  }
}

AugmentDraw DrawAugmentOp(SampleRng& rng, bool wide, int bins, int magnitude_bin, int width, int height) {
  AugmentDraw d;
  d.op = static_cast<AugmentOp>(rng.RandInt(0, kNumAugmentOps));
  if (!HasMagnitudes(d.op)) return d;
  const int bin = magnitude_bin >= 0 ? magnitude_bin : static_cast<int>(rng.RandInt(0, bins));
  d.magnitude = Magnitude(d.op, wide, bins, bin, width, height);
  if (Signed(d.op) && rng.Uniform01() <= 0.5) d.magnitude = -d.magnitude;
  return d;
}

}  // namespace

int DrawRandAugment(SampleRng& rng, int width, int height, const transforms::RandAugment& t, AugmentDraw* out) {
  for (int i = 0; i < t.num_ops; ++i)
    out[i] = DrawAugmentOp(rng, false, t.num_magnitude_bins, t.magnitude, width, height);
  return t.num_ops;
}

AugmentDraw DrawTrivialAugment(SampleRng& rng, const transforms::TrivialAugmentWide& t) {
  return DrawAugmentOp(rng, true, t.num_magnitude_bins, -1, 0, 0);
}

namespace {

// One op of an AutoAugment sub-policy: the op, its probability, its magnitude bin (-1: none).
struct PolicyOp {
  AugmentOp op;
  float p;
  int8_t bin;
};
using SubPolicy = std::array<PolicyOp, 2>;
using A = AugmentOp;

// The published policies (Cubuk et al., "AutoAugment", 2019) as torchvision's AutoAugment holds
// them: ImageNet, CIFAR10, SVHN.
constexpr SubPolicy kPolicies[kAutoAugmentPolicies][kAutoAugmentSubPolicies] = {
    {{{{A::kPosterize, 0.4f, 8}, {A::kRotate, 0.6f, 9}}},
     {{{A::kSolarize, 0.6f, 5}, {A::kAutoContrast, 0.6f, -1}}},
     {{{A::kEqualize, 0.8f, -1}, {A::kEqualize, 0.6f, -1}}},
     {{{A::kPosterize, 0.6f, 7}, {A::kPosterize, 0.6f, 6}}},
     {{{A::kEqualize, 0.4f, -1}, {A::kSolarize, 0.2f, 4}}},
     {{{A::kEqualize, 0.4f, -1}, {A::kRotate, 0.8f, 8}}},
     {{{A::kSolarize, 0.6f, 3}, {A::kEqualize, 0.6f, -1}}},
     {{{A::kPosterize, 0.8f, 5}, {A::kEqualize, 1.0f, -1}}},
     {{{A::kRotate, 0.2f, 3}, {A::kSolarize, 0.6f, 8}}},
     {{{A::kEqualize, 0.6f, -1}, {A::kPosterize, 0.4f, 6}}},
     {{{A::kRotate, 0.8f, 8}, {A::kColor, 0.4f, 0}}},
     {{{A::kRotate, 0.4f, 9}, {A::kEqualize, 0.6f, -1}}},
     {{{A::kEqualize, 0.0f, -1}, {A::kEqualize, 0.8f, -1}}},
     {{{A::kInvert, 0.6f, -1}, {A::kEqualize, 1.0f, -1}}},
     {{{A::kColor, 0.6f, 4}, {A::kContrast, 1.0f, 8}}},
     {{{A::kRotate, 0.8f, 8}, {A::kColor, 1.0f, 2}}},
     {{{A::kColor, 0.8f, 8}, {A::kSolarize, 0.8f, 7}}},
     {{{A::kSharpness, 0.4f, 7}, {A::kInvert, 0.6f, -1}}},
     {{{A::kShearX, 0.6f, 5}, {A::kEqualize, 1.0f, -1}}},
     {{{A::kColor, 0.4f, 0}, {A::kEqualize, 0.6f, -1}}},
     {{{A::kEqualize, 0.4f, -1}, {A::kSolarize, 0.2f, 4}}},
     {{{A::kSolarize, 0.6f, 5}, {A::kAutoContrast, 0.6f, -1}}},
     {{{A::kInvert, 0.6f, -1}, {A::kEqualize, 1.0f, -1}}},
     {{{A::kColor, 0.6f, 4}, {A::kContrast, 1.0f, 8}}},
     {{{A::kEqualize, 0.8f, -1}, {A::kEqualize, 0.6f, -1}}}},
    {{{{A::kInvert, 0.1f, -1}, {A::kContrast, 0.2f, 6}}},
     {{{A::kRotate, 0.7f, 2}, {A::kTranslateX, 0.3f, 9}}},
     {{{A::kSharpness, 0.8f, 1}, {A::kSharpness, 0.9f, 3}}},
     {{{A::kShearY, 0.5f, 8}, {A::kTranslateY, 0.7f, 9}}},
     {{{A::kAutoContrast, 0.5f, -1}, {A::kEqualize, 0.9f, -1}}},
     {{{A::kShearY, 0.2f, 7}, {A::kPosterize, 0.3f, 7}}},
     {{{A::kColor, 0.4f, 3}, {A::kBrightness, 0.6f, 7}}},
     {{{A::kSharpness, 0.3f, 9}, {A::kBrightness, 0.7f, 9}}},
     {{{A::kEqualize, 0.6f, -1}, {A::kEqualize, 0.5f, -1}}},
     {{{A::kContrast, 0.6f, 7}, {A::kSharpness, 0.6f, 5}}},
     {{{A::kColor, 0.7f, 7}, {A::kTranslateX, 0.5f, 8}}},
     {{{A::kEqualize, 0.3f, -1}, {A::kAutoContrast, 0.4f, -1}}},
     {{{A::kTranslateY, 0.4f, 3}, {A::kSharpness, 0.2f, 6}}},
     {{{A::kBrightness, 0.9f, 6}, {A::kColor, 0.2f, 8}}},
     {{{A::kSolarize, 0.5f, 2}, {A::kInvert, 0.0f, -1}}},
     {{{A::kEqualize, 0.2f, -1}, {A::kAutoContrast, 0.6f, -1}}},
     {{{A::kEqualize, 0.2f, -1}, {A::kEqualize, 0.6f, -1}}},
     {{{A::kColor, 0.9f, 9}, {A::kEqualize, 0.6f, -1}}},
     {{{A::kAutoContrast, 0.8f, -1}, {A::kSolarize, 0.2f, 8}}},
     {{{A::kBrightness, 0.1f, 3}, {A::kColor, 0.7f, 0}}},
     {{{A::kSolarize, 0.4f, 5}, {A::kAutoContrast, 0.9f, -1}}},
     {{{A::kTranslateY, 0.9f, 9}, {A::kTranslateY, 0.7f, 9}}},
     {{{A::kAutoContrast, 0.9f, -1}, {A::kSolarize, 0.8f, 3}}},
     {{{A::kEqualize, 0.8f, -1}, {A::kInvert, 0.1f, -1}}},
     {{{A::kTranslateY, 0.7f, 9}, {A::kAutoContrast, 0.9f, -1}}}},
    {{{{A::kShearX, 0.9f, 4}, {A::kInvert, 0.2f, -1}}},
     {{{A::kShearY, 0.9f, 8}, {A::kInvert, 0.7f, -1}}},
     {{{A::kEqualize, 0.6f, -1}, {A::kSolarize, 0.6f, 6}}},
     {{{A::kInvert, 0.9f, -1}, {A::kEqualize, 0.6f, -1}}},
     {{{A::kEqualize, 0.6f, -1}, {A::kRotate, 0.9f, 3}}},
     {{{A::kShearX, 0.9f, 4}, {A::kAutoContrast, 0.8f, -1}}},
     {{{A::kShearY, 0.9f, 8}, {A::kInvert, 0.4f, -1}}},
     {{{A::kShearY, 0.9f, 5}, {A::kSolarize, 0.2f, 6}}},
     {{{A::kInvert, 0.9f, -1}, {A::kAutoContrast, 0.8f, -1}}},
     {{{A::kEqualize, 0.6f, -1}, {A::kRotate, 0.9f, 3}}},
     {{{A::kShearX, 0.9f, 4}, {A::kSolarize, 0.3f, 3}}},
     {{{A::kShearY, 0.8f, 8}, {A::kInvert, 0.7f, -1}}},
     {{{A::kEqualize, 0.9f, -1}, {A::kTranslateY, 0.6f, 6}}},
     {{{A::kInvert, 0.9f, -1}, {A::kEqualize, 0.6f, -1}}},
     {{{A::kContrast, 0.3f, 3}, {A::kRotate, 0.8f, 4}}},
     {{{A::kInvert, 0.8f, -1}, {A::kTranslateY, 0.0f, 2}}},
     {{{A::kShearY, 0.7f, 6}, {A::kSolarize, 0.4f, 8}}},
     {{{A::kInvert, 0.6f, -1}, {A::kRotate, 0.8f, 4}}},
     {{{A::kShearY, 0.3f, 7}, {A::kTranslateX, 0.9f, 3}}},
     {{{A::kShearX, 0.1f, 6}, {A::kInvert, 0.6f, -1}}},
     {{{A::kSolarize, 0.7f, 2}, {A::kTranslateY, 0.6f, 7}}},
     {{{A::kShearY, 0.8f, 4}, {A::kInvert, 0.8f, -1}}},
     {{{A::kShearX, 0.7f, 9}, {A::kTranslateY, 0.8f, 3}}},
     {{{A::kShearY, 0.8f, 5}, {A::kAutoContrast, 0.7f, -1}}},
     {{{A::kShearX, 0.7f, 2}, {A::kInvert, 0.1f, -1}}}},
};

constexpr int kAutoAugmentBins = 10;

}  // namespace

int DrawAutoAugment(SampleRng& rng, int width, int height, const transforms::AutoAugment& t, AugmentDraw* out,
                    int* policy) {
  *policy = static_cast<int>(rng.RandInt(0, kAutoAugmentSubPolicies));
  int n = 0;
  for (const PolicyOp& p : kPolicies[t.policy][*policy]) {
    // torchvision applies an op when rand <= p (in float32); its probabilities are float32 values.
    if (!(static_cast<float>(rng.Uniform01()) <= p.p)) continue;
    AugmentDraw& d = out[n++];
    d.op = p.op;
    d.magnitude = p.bin >= 0 ? Magnitude(p.op, false, kAutoAugmentBins, p.bin, width, height) : 0.0;
    if (p.bin >= 0 && Signed(p.op) && rng.Uniform01() <= 0.5) d.magnitude = -d.magnitude;
  }
  return n;
}

AugmentStep AugmentToStep(const AugmentDraw& d, int width, int height, transforms::Interpolation interpolation,
                          const std::array<uint8_t, 3>& fill, bool mask_fill) {
  AugmentStep s;
  const double m = d.magnitude;
  auto color = [&s](ColorKind kind, double factor) {
    s.type = AugmentStep::Type::kColor;
    s.color = kind;
    s.factor = factor;
  };
  switch (d.op) {
    case AugmentOp::kIdentity: break;
    case AugmentOp::kShearX:
    case AugmentOp::kShearY:
    case AugmentOp::kTranslateX:
    case AugmentOp::kTranslateY:
    case AugmentOp::kRotate: {
      AffineParams a;
      const double degrees = std::atan(m) * (180.0 / kPi);  // math.degrees(math.atan(m))
      if (d.op == AugmentOp::kShearX) a.shear_x = degrees;
      if (d.op == AugmentOp::kShearY) a.shear_y = degrees;
      if (d.op == AugmentOp::kTranslateX) a.tx = static_cast<int>(m);  // int(): toward zero
      if (d.op == AugmentOp::kTranslateY) a.ty = static_cast<int>(m);
      if (d.op == AugmentOp::kRotate) a.angle = -m;  // rotate(m) is affine(-m)
      const bool shear = d.op == AugmentOp::kShearX || d.op == AugmentOp::kShearY;
      const double corner[2] = {0.0, 0.0};
      s.type = AugmentStep::Type::kFilter;
      FilterStep& f = s.filter;
      f.kind = FilterKind::kAffine;
      WarpParams& w = f.warp;
      w.enabled = true;
      w.filter = interpolation == transforms::Interpolation::kBilinear ? WarpFilter::kBilinear : WarpFilter::kNearest;
      w.src_w = width, w.src_h = height;
      w.out_w = width, w.out_h = height;
      InverseAffineMatrix(a, width, height, shear ? corner : nullptr, w.m);
      for (size_t c = 0; c < 3; ++c) w.fill[c] = fill[c];
      w.x = WarpAxis{0, width, false};
      w.y = WarpAxis{0, height, false};
      w.float_grid = true;  // torchvision's float32 grid: its ties (e.g. shear 0.2 on odd rows) exactly
      w.mask_fill = mask_fill;
      break;
    }
    case AugmentOp::kBrightness: color(ColorKind::kBrightness, 1.0 + m); break;
    case AugmentOp::kColor: color(ColorKind::kSaturation, 1.0 + m); break;
    case AugmentOp::kContrast: color(ColorKind::kContrast, 1.0 + m); break;
    case AugmentOp::kSharpness:
      s.type = AugmentStep::Type::kFilter;
      s.filter.kind = FilterKind::kSharpness;
      s.filter.alpha = static_cast<float>(1.0 - (1.0 + m));
      break;
    case AugmentOp::kPosterize: {
      const int bits = static_cast<int>(m);
      color(ColorKind::kPosterize, static_cast<double>(((1 << bits) - 1) << (8 - bits)));
      break;
    }
    case AugmentOp::kSolarize: color(ColorKind::kSolarize, 255.0 * m); break;
    case AugmentOp::kAutoContrast: color(ColorKind::kAutoContrast, 0.0); break;
    case AugmentOp::kEqualize: color(ColorKind::kEqualize, 0.0); break;
    case AugmentOp::kInvert: color(ColorKind::kSolarize, 0.0); break;  // every value is >= 0
  }
  return s;
}

namespace {

Status CheckAugment(const char* op, int num_magnitude_bins, Interpolation i) {
  if (num_magnitude_bins < 2)
    return InvalidArgument(op, ": num_magnitude_bins must be at least 2, got ", num_magnitude_bins);
  return CheckWarpInterpolation(op, i);
}

Status CheckRandAugment(const RandAugment& t) {
  if (t.num_ops < 0 || t.num_ops > kMaxRandAugmentOps)
    return InvalidArgument("RandAugment: num_ops must be an int in [0, ", kMaxRandAugmentOps, "], got ", t.num_ops);
  SLUICE_RETURN_IF_ERROR(CheckAugment("RandAugment", t.num_magnitude_bins, t.interpolation));
  if (t.magnitude < 0 || t.magnitude >= t.num_magnitude_bins)
    return InvalidArgument("RandAugment: magnitude must be an int in [0, num_magnitude_bins - 1] = [0, ",
                           t.num_magnitude_bins - 1, "], got ", t.magnitude);
  return Status::OK();
}

// The drawn ops, as colour steps and filters on the image the list has produced.
void AddSteps(const AugmentDraw* draws, int n, Interpolation interpolation, const std::array<uint8_t, 3>& fill,
              SampleDraw* d) {
  for (int k = 0; k < n; ++k) {
    const AugmentStep step = AugmentToStep(draws[k], d->width(), d->height(), interpolation, fill);
    if (step.type == AugmentStep::Type::kColor) d->AddColor(step.color, step.factor);
    if (step.type == AugmentStep::Type::kFilter) d->AddFilter(step.filter);
  }
}

}  // namespace

void RegisterAugmentOps(OpRegistry* registry) {
  OpSpec<RandAugment> ra{"RandAugment", OpKind::kPixel};
  ra.fields = {Field<&RandAugment::num_ops>("num_ops"), Field<&RandAugment::magnitude>("magnitude"),
               Field<&RandAugment::num_magnitude_bins>("num_magnitude_bins"),
               Field<&RandAugment::interpolation>("interpolation"), Field<&RandAugment::fill>("fill")};
  ra.validate = CheckRandAugment;
  ra.place = [](const RandAugment& t, ListState* list) {
    if (list->augment == nullptr) list->augment = "RandAugment";
    return list->AddPixelSteps(t.num_ops, t.num_ops);
  };
  ra.draw = [](const RandAugment& t, SampleDraw* d) {
    AugmentDraw draws[kMaxRandAugmentOps];
    const int n = DrawRandAugment(d->rng(), d->width(), d->height(), t, draws);
    AddSteps(draws, n, t.interpolation, t.fill, d);
    return Status::OK();
  };
  registry->Add(std::move(ra));

  OpSpec<TrivialAugmentWide> ta{"TrivialAugmentWide", OpKind::kPixel};
  ta.fields = {Field<&TrivialAugmentWide::num_magnitude_bins>("num_magnitude_bins"),
               Field<&TrivialAugmentWide::interpolation>("interpolation"), Field<&TrivialAugmentWide::fill>("fill")};
  ta.validate = [](const TrivialAugmentWide& t) {
    return CheckAugment("TrivialAugmentWide", t.num_magnitude_bins, t.interpolation);
  };
  ta.place = [](const TrivialAugmentWide&, ListState* list) {
    if (list->augment == nullptr) list->augment = "TrivialAugmentWide";
    return list->AddPixelSteps(1, 1);
  };
  ta.draw = [](const TrivialAugmentWide& t, SampleDraw* d) {
    const AugmentDraw draw = DrawTrivialAugment(d->rng(), t);
    AddSteps(&draw, 1, t.interpolation, t.fill, d);
    return Status::OK();
  };
  registry->Add(std::move(ta));

  OpSpec<AutoAugment> aa{"AutoAugment", OpKind::kPixel};
  aa.fields = {Field<&AutoAugment::policy>("policy"), Field<&AutoAugment::interpolation>("interpolation"),
               Field<&AutoAugment::fill>("fill")};
  aa.validate = [](const AutoAugment& t) -> Status {
    if (t.policy < 0 || t.policy >= kAutoAugmentPolicies)
      return InvalidArgument("AutoAugment: policy must be 0 (IMAGENET), 1 (CIFAR10) or 2 (SVHN), got ", t.policy);
    return CheckWarpInterpolation("AutoAugment", t.interpolation);
  };
  aa.place = [](const AutoAugment&, ListState* list) {
    if (list->augment == nullptr) list->augment = "AutoAugment";
    return list->AddPixelSteps(2, 2);
  };
  aa.draw = [](const AutoAugment& t, SampleDraw* d) {
    AugmentDraw draws[2];
    int policy = 0;
    const int n = DrawAutoAugment(d->rng(), d->width(), d->height(), t, draws, &policy);
    AddSteps(draws, n, t.interpolation, t.fill, d);
    return Status::OK();
  };
  registry->Add(std::move(aa));
}

}  // namespace sluice
