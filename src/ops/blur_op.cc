// The op table's entry for GaussianBlur: a filter on the resampled image (kernels/filter).
#include <cmath>

#include "kernels/filter/gaussian_kernel.h"
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
}

}  // namespace sluice
