// The op table's entry for AugMix, its draw (torchvision's AugMix._AUGMENTATION_SPACE at
// _PARAMETER_MAX = 10 bins, Dirichlet weights from Gamma draws) and its CPU mix (augmix.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "kernels/color/color_cpu.h"
#include "kernels/filter/filter_cpu.h"
#include "ops/arg_checks.h"
#include "ops/augmix.h"
#include "ops/image_ops.h"
#include "ops/torch_math.h"

namespace sluice {

using namespace transforms;

namespace {

constexpr int kBins = 10;  // AugMix._PARAMETER_MAX
// The partial space, then the four all_ops adds, in torchvision's dict order.
constexpr AugmentOp kSpace[] = {AugmentOp::kShearX,     AugmentOp::kShearY,     AugmentOp::kTranslateX,
                                AugmentOp::kTranslateY, AugmentOp::kRotate,     AugmentOp::kPosterize,
                                AugmentOp::kSolarize,   AugmentOp::kAutoContrast, AugmentOp::kEqualize,
                                AugmentOp::kBrightness, AugmentOp::kColor,      AugmentOp::kContrast,
                                AugmentOp::kSharpness};

// Bin `bin` of AugMix's magnitude table for `op` on a width x height image, and whether signed.
double AugMixMagnitude(AugmentOp op, int bin, int width, int height, bool* is_signed) {
  *is_signed = op != AugmentOp::kPosterize && op != AugmentOp::kSolarize && op != AugmentOp::kAutoContrast &&
               op != AugmentOp::kEqualize;
  switch (op) {
    case AugmentOp::kShearX:
    case AugmentOp::kShearY: return LinspaceF32(0.0, 0.3, kBins, bin);
    case AugmentOp::kTranslateX: return LinspaceF32(0.0, width / 3.0, kBins, bin);
    case AugmentOp::kTranslateY: return LinspaceF32(0.0, height / 3.0, kBins, bin);
    case AugmentOp::kRotate: return LinspaceF32(0.0, 30.0, kBins, bin);
    case AugmentOp::kPosterize: {  // (4 - arange(10) / ((10 - 1) / 4)).round().int(), float32
      const float q = static_cast<float>(bin) / static_cast<float>((kBins - 1) / 4.0);
      return static_cast<int>(std::nearbyint(4.0f - q));
    }
    case AugmentOp::kSolarize: return LinspaceF32(1.0, 0.0, kBins, bin);
    case AugmentOp::kBrightness:
    case AugmentOp::kColor:
    case AugmentOp::kContrast:
    case AugmentOp::kSharpness: return LinspaceF32(0.0, 0.9, kBins, bin);
    default: return 0.0;
  }
}

// Gamma(alpha, 1) (Marsaglia and Tsang; alpha < 1 through Gamma(alpha + 1) * u^(1 / alpha)).
double Gamma(SampleRng& rng, double alpha) {
  if (alpha < 1.0) return Gamma(rng, alpha + 1.0) * std::pow(1.0 - rng.Uniform01(), 1.0 / alpha);
  const double d = alpha - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    const double u1 = 1.0 - rng.Uniform01(), u2 = rng.Uniform01();
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    const double v = std::pow(1.0 + c * z, 3);
    if (v <= 0.0) continue;
    const double u = 1.0 - rng.Uniform01();
    if (std::log(u) < 0.5 * z * z + d - d * v + d * std::log(v)) return d * v;
  }
}

// Dirichlet(alpha, ..., alpha) of n weights into w.
void Dirichlet(SampleRng& rng, double alpha, int n, double* w) {
  double sum = 0.0;
  for (int k = 0; k < n; ++k) sum += (w[k] = Gamma(rng, alpha));
  for (int k = 0; k < n; ++k) w[k] /= sum;
}

Status CheckAugMix(const AugMix& t) {
  if (t.severity < 1 || t.severity > kBins)
    return InvalidArgument("AugMix: severity must be between [1, 10], got ", t.severity);
  if (t.mixture_width < 1 || t.mixture_width > AugMix::kMaxChains)
    return InvalidArgument("AugMix: mixture_width must be in [1, ", AugMix::kMaxChains, "], got ", t.mixture_width);
  if (t.chain_depth == 0 || t.chain_depth < -1 || t.chain_depth > AugMix::kMaxDepth)
    return InvalidArgument("AugMix: chain_depth must be -1 (1 to 3 drawn) or in [1, ", AugMix::kMaxDepth, "], got ",
                           t.chain_depth);
  if (!(t.alpha > 0.0 && std::isfinite(t.alpha))) return InvalidArgument("AugMix: alpha must be > 0, got ", t.alpha);
  return CheckWarpInterpolation("AugMix", t.interpolation);
}

}  // namespace

void DrawAugMix(SampleRng& rng, int width, int height, const AugMix& t, AugMixDraw* out) {
  double m[2], w[AugMix::kMaxChains];
  Dirichlet(rng, t.alpha, 2, m);
  Dirichlet(rng, t.alpha, t.mixture_width, w);
  out->m0 = static_cast<float>(m[0]);
  out->num_chains = t.mixture_width;
  const int space = t.all_ops ? 13 : 9;
  for (int i = 0; i < t.mixture_width; ++i) {
    out->w[i] = static_cast<float>(w[i]) * static_cast<float>(m[1]);  // float32 tensors' product
    out->depth[i] = t.chain_depth > 0 ? t.chain_depth : static_cast<int>(rng.RandInt(1, 4));
    for (int k = 0; k < out->depth[i]; ++k) {
      AugmentDraw& d = out->ops[i][k];
      d.op = kSpace[rng.RandInt(0, space)];
      bool is_signed = false;
      d.magnitude = AugMixMagnitude(d.op, static_cast<int>(rng.RandInt(0, t.severity)), width, height, &is_signed);
      if (is_signed && rng.Uniform01() <= 0.5) d.magnitude = -d.magnitude;
    }
  }
  out->interpolation = t.interpolation;
  out->fill = t.fill;
  out->mask_fill = t.has_fill;
}

void ApplyAugMix(const AugMixDraw& d, const ImageView& in, const MutableImageView& out, AugMixScratch* s) {
  const int w = in.width, h = in.height;
  const size_t n = static_cast<size_t>(w) * h * 3;
  s->mix.resize(n);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < 3 * w; ++x) s->mix[static_cast<size_t>(y) * w * 3 + x] = d.m0 * static_cast<float>(in.row(y)[x]);
  for (int i = 0; i < d.num_chains; ++i) {
    for (auto& b : s->chain) b.resize(n);
    for (int y = 0; y < h; ++y) std::memcpy(s->chain[0].data() + static_cast<size_t>(y) * w * 3, in.row(y), 3 * w);
    int cur = 0;
    for (int k = 0; k < d.depth[i]; ++k) {
      const AugmentStep step = AugmentToStep(d.ops[i][k], w, h, d.interpolation, d.fill, d.mask_fill);
      const MutableImageView img{s->chain[cur].data(), h, w, 3, static_cast<ptrdiff_t>(w) * 3};
      if (step.type == AugmentStep::Type::kColor) {
        ColorOps ops;
        ops.steps[0] = MakeColorStep(step.color, step.factor);
        ops.num_steps = 1;
        ops.num_stats = NeedsStats(step.color) ? 1 : 0;
        ApplyColorCpu(ops, img);
      } else if (step.type == AugmentStep::Type::kFilter) {
        const MutableImageView next{s->chain[1 - cur].data(), h, w, 3, static_cast<ptrdiff_t>(w) * 3};
        FilterCpu(step.filter, img, next, &s->rows);
        cur = 1 - cur;
      }
    }
    const uint8_t* a = s->chain[cur].data();
    for (size_t k = 0; k < n; ++k) s->mix[k] += d.w[i] * static_cast<float>(a[k]);
  }
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < 3 * w; ++x) {
      const float v = s->mix[static_cast<size_t>(y) * w * 3 + static_cast<size_t>(x)];
      out.row(y)[x] = static_cast<uint8_t>(v < 0.f ? 0.f : (v > 255.f ? 255.f : v));
    }
}

void RegisterAugMixOp(OpRegistry* registry) {
  OpSpec<AugMix> op{"AugMix", OpKind::kPixel};
  op.fields = {Field<&AugMix::severity>("severity"), Field<&AugMix::mixture_width>("mixture_width"),
               Field<&AugMix::chain_depth>("chain_depth"), Field<&AugMix::alpha>("alpha"),
               Field<&AugMix::all_ops>("all_ops"), Field<&AugMix::interpolation>("interpolation"),
               Field<&AugMix::fill>("fill"), Field<&AugMix::has_fill>("has_fill")};
  op.validate = CheckAugMix;
  op.place = [](const AugMix&, ListState* list) {
    if (list->augment == nullptr) list->augment = "AugMix";
    list->cpu_only = "AugMix";
    return list->AddPixelSteps(0, 1);
  };
  op.draw = [](const AugMix& t, SampleDraw* d) {
    DrawAugMix(d->rng(), d->width(), d->height(), t, &d->augmix());
    FilterStep marker;
    marker.kind = FilterKind::kAugMix;
    d->AddFilter(marker);
    return Status::OK();
  };
  registry->Add(std::move(op));
}

}  // namespace sluice
