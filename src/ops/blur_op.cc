// The op table's entries for GaussianBlur and ElasticTransform: filters on the resampled image
// (kernels/filter; the elastic one on the CPU only).
#include <algorithm>
#include <cmath>

#include "kernels/filter/gaussian_kernel.h"
#include "ops/arg_checks.h"
#include "ops/image_ops.h"

namespace sluice {

using namespace transforms;

namespace {

Status CheckBlur(const GaussianBlur& t) {
  for (int k : {t.kernel_w, t.kernel_h}) {
    if (k <= 0 || k % 2 == 0)
      return InvalidArgument("GaussianBlur: kernel_size values should be odd and positive, got (", t.kernel_w, ", ",
                             t.kernel_h, ")");
    if (k > 63)
      return InvalidArgument("GaussianBlur: kernel_size values of at most 63 are supported, got (", t.kernel_w, ", ",
                             t.kernel_h, ")");
  }
  if (!(t.sigma[0] > 0.0 && t.sigma[0] <= t.sigma[1] && std::isfinite(t.sigma[1])))
    return InvalidArgument("GaussianBlur: sigma values should be positive and of the form (min, max), got (",
                           t.sigma[0], ", ", t.sigma[1], ")");
  return Status::OK();
}

// sigma uniform in t.sigma, as a float32 value.
Status DrawBlur(const GaussianBlur& t, SampleDraw* d) {
  FilterStep f;
  f.kind = FilterKind::kGaussianBlur;
  const float sigma = static_cast<float>(d->rng().Uniform(t.sigma[0], t.sigma[1]));
  f.sigma = sigma;
  f.kx = t.kernel_w;
  f.ky = t.kernel_h;
  GaussianKernel1d(f.kx, sigma, f.wx);
  GaussianKernel1d(f.ky, sigma, f.wy);
  d->AddFilter(f);
  return Status::OK();
}

}  // namespace

void RegisterBlurOp(OpRegistry* registry) {
  OpSpec<GaussianBlur> op{"GaussianBlur", OpKind::kPixel};
  op.fields = {Field<&GaussianBlur::kernel_w>("kernel_w"), Field<&GaussianBlur::kernel_h>("kernel_h"),
               Field<&GaussianBlur::sigma>("sigma")};
  op.validate = CheckBlur;
  op.place = [](const GaussianBlur&, ListState* list) { return list->AddPixelSteps(0, 1); };
  op.draw = DrawBlur;
  registry->Add(std::move(op));

  OpSpec<ElasticTransform> elastic{"ElasticTransform", OpKind::kPixel};
  elastic.fields = {Field<&ElasticTransform::alpha>("alpha"), Field<&ElasticTransform::sigma>("sigma"),
                    Field<&ElasticTransform::interpolation>("interpolation"), Field<&ElasticTransform::fill>("fill")};
  elastic.validate = [](const ElasticTransform& t) -> Status {
    for (double a : t.alpha)
      if (!(std::isfinite(a) && a >= 0.0)) return InvalidArgument("ElasticTransform: alpha must be >= 0, got ", a);
    for (double s : t.sigma)
      if (!(s > 0.0 && s <= 7.5)) return InvalidArgument("ElasticTransform: sigma must be in (0, 7.5], got ", s);
    return CheckWarpInterpolation("ElasticTransform", t.interpolation);
  };
  elastic.place = [](const ElasticTransform&, ListState* list) {
    list->cpu_only = "ElasticTransform";
    return list->AddPixelSteps(0, 1);
  };
  elastic.draw = [](const ElasticTransform& t, SampleDraw* d) {
    FilterStep f;
    f.kind = FilterKind::kElastic;
    for (int k = 0; k < 2; ++k) {
      f.elastic_alpha[k] = static_cast<float>(t.alpha[static_cast<size_t>(k)]);
      f.elastic_sigma[k] = static_cast<float>(t.sigma[static_cast<size_t>(k)]);
    }
    f.warp.filter = t.interpolation == Interpolation::kNearest ? WarpFilter::kNearest : WarpFilter::kBilinear;
    std::copy(t.fill.begin(), t.fill.end(), f.warp.fill);
    f.key = MakeStreamKey(d->key().seed, d->key().epoch, d->key().sample, d->op_index());
    d->AddFilter(f);
    return Status::OK();
  };
  registry->Add(std::move(elastic));
}

}  // namespace sluice
