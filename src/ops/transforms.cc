#include <cmath>
#include <utility>

#include "sluice/transforms.h"

namespace sluice::transforms {

namespace {

struct NameOf {
  const char* operator()(const RandomResizedCrop&) const { return "RandomResizedCrop"; }
  const char* operator()(const Resize&) const { return "Resize"; }
  const char* operator()(const CenterCrop&) const { return "CenterCrop"; }
  const char* operator()(const RandomCrop&) const { return "RandomCrop"; }
  const char* operator()(const RandomHorizontalFlip&) const { return "RandomHorizontalFlip"; }
  const char* operator()(const RandomVerticalFlip&) const { return "RandomVerticalFlip"; }
  const char* operator()(const Pad&) const { return "Pad"; }
  const char* operator()(const RandomRotation&) const { return "RandomRotation"; }
  const char* operator()(const RandomAffine&) const { return "RandomAffine"; }
  const char* operator()(const ColorJitter&) const { return "ColorJitter"; }
  const char* operator()(const RandomGrayscale&) const { return "RandomGrayscale"; }
  const char* operator()(const GaussianBlur&) const { return "GaussianBlur"; }
  const char* operator()(const RandAugment&) const { return "RandAugment"; }
  const char* operator()(const TrivialAugmentWide&) const { return "TrivialAugmentWide"; }
  const char* operator()(const GridMask&) const { return "GridMask"; }
  const char* operator()(const GaussianNoise&) const { return "GaussianNoise"; }
  const char* operator()(const Cutout&) const { return "Cutout"; }
  const char* operator()(const RandomErasing&) const { return "RandomErasing"; }
  const char* operator()(const Lambda&) const { return "Lambda"; }
  const char* operator()(const Normalize&) const { return "Normalize"; }
};

Status CheckSize(const char* name, int h, int w) {
  if (h <= 0 || w <= 0)
    return InvalidArgument(name, ": size must be positive, got (", h, ", ", w, ")");
  return Status::OK();
}

Status CheckProbability(const char* name, double p) {
  if (!(p >= 0.0 && p <= 1.0)) return InvalidArgument(name, ": p must be in [0, 1], got ", p);
  return Status::OK();
}

Status CheckResizeInterpolation(const char* name, Interpolation i) {
  if (i == Interpolation::kNearest)
    return InvalidArgument(name, ": interpolation must be BILINEAR or BICUBIC, got NEAREST");
  return Status::OK();
}

Status CheckRange(const char* name, const char* arg, double lo, double hi) {
  if (!(std::isfinite(lo) && std::isfinite(hi) && lo <= hi))
    return InvalidArgument(name, ": ", arg, " must be a finite range (min, max) with min <= max, got (", lo,
                           ", ", hi, ")");
  return Status::OK();
}

Status CheckWarp(const char* name, const std::array<double, 2>& degrees, Interpolation i, bool has_center,
                 const std::array<double, 2>& center) {
  SLUICE_RETURN_IF_ERROR(CheckRange(name, "degrees", degrees[0], degrees[1]));
  if (i == Interpolation::kBicubic)
    return InvalidArgument(name, ": interpolation must be NEAREST or BILINEAR, got BICUBIC");
  if (has_center && !(std::isfinite(center[0]) && std::isfinite(center[1])))
    return InvalidArgument(name, ": center must be finite, got (", center[0], ", ", center[1], ")");
  return Status::OK();
}

Status CheckAugmentWarp(const char* name, int num_magnitude_bins, Interpolation i) {
  if (num_magnitude_bins < 2)
    return InvalidArgument(name, ": num_magnitude_bins must be at least 2, got ", num_magnitude_bins);
  if (i == Interpolation::kBicubic)
    return InvalidArgument(name, ": interpolation must be NEAREST or BILINEAR, got BICUBIC");
  return Status::OK();
}

struct Validator {
  Status operator()(const RandomResizedCrop& t) const {
    SLUICE_RETURN_IF_ERROR(CheckSize("RandomResizedCrop", t.height, t.width));
    SLUICE_RETURN_IF_ERROR(CheckResizeInterpolation("RandomResizedCrop", t.interpolation));
    if (!(t.scale[0] > 0 && t.scale[0] <= t.scale[1]))
      return InvalidArgument("RandomResizedCrop: scale must be (min, max) with 0 < min <= max, got (",
                             t.scale[0], ", ", t.scale[1], ")");
    if (!(t.ratio[0] > 0 && t.ratio[0] <= t.ratio[1]))
      return InvalidArgument("RandomResizedCrop: ratio must be (min, max) with 0 < min <= max, got (",
                             t.ratio[0], ", ", t.ratio[1], ")");
    return Status::OK();
  }
  Status operator()(const Resize& t) const {
    SLUICE_RETURN_IF_ERROR(CheckResizeInterpolation("Resize", t.interpolation));
    if (t.height <= 0 || t.width < 0)
      return InvalidArgument("Resize: size must be positive, got (", t.height, ", ", t.width, ")");
    if (t.max_size < 0) return InvalidArgument("Resize: max_size must be positive, got ", t.max_size);
    if (t.max_size > 0 && t.width > 0)
      return InvalidArgument("Resize: max_size is only allowed when size is a single int");
    if (t.max_size > 0 && t.max_size <= t.height)
      return InvalidArgument("Resize: max_size = ", t.max_size,
                             " must be strictly greater than the requested size for the smaller edge = ",
                             t.height);
    return Status::OK();
  }
  Status operator()(const CenterCrop& t) const { return CheckSize("CenterCrop", t.height, t.width); }
  Status operator()(const RandomCrop& t) const {
    SLUICE_RETURN_IF_ERROR(CheckSize("RandomCrop", t.height, t.width));
    for (int p : t.padding)
      if (p < 0) return InvalidArgument("RandomCrop: padding must be non-negative, got ", p);
    return Status::OK();
  }
  Status operator()(const RandomHorizontalFlip& t) const { return CheckProbability("RandomHorizontalFlip", t.p); }
  Status operator()(const RandomVerticalFlip& t) const { return CheckProbability("RandomVerticalFlip", t.p); }
  Status operator()(const Pad& t) const {
    for (int p : t.padding)
      if (p < 0) return InvalidArgument("Pad: padding must be non-negative, got ", p);
    return Status::OK();
  }
  Status operator()(const RandomRotation& t) const {
    return CheckWarp("RandomRotation", t.degrees, t.interpolation, t.has_center, t.center);
  }
  Status operator()(const RandomAffine& t) const {
    SLUICE_RETURN_IF_ERROR(CheckWarp("RandomAffine", t.degrees, t.interpolation, t.has_center, t.center));
    for (double v : t.translate)
      if (!(v >= 0.0 && v <= 1.0))
        return InvalidArgument("RandomAffine: translate values should be between 0 and 1, got (", t.translate[0],
                               ", ", t.translate[1], ")");
    SLUICE_RETURN_IF_ERROR(CheckRange("RandomAffine", "scale", t.scale[0], t.scale[1]));
    if (!(t.scale[0] > 0.0))
      return InvalidArgument("RandomAffine: scale values should be positive, got (", t.scale[0], ", ", t.scale[1], ")");
    SLUICE_RETURN_IF_ERROR(CheckRange("RandomAffine", "shear (x)", t.shear[0], t.shear[1]));
    SLUICE_RETURN_IF_ERROR(CheckRange("RandomAffine", "shear (y)", t.shear[2], t.shear[3]));
    for (double v : t.shear)
      if (!(std::fabs(v) < 90.0))
        return InvalidArgument("RandomAffine: shear angles must lie in (-90, 90) degrees, got ", v);
    return Status::OK();
  }
  Status operator()(const ColorJitter& t) const {
    const std::pair<const char*, const std::array<double, 2>*> factors[] = {
        {"brightness", &t.brightness}, {"contrast", &t.contrast}, {"saturation", &t.saturation}};
    for (const auto& [name, r] : factors)
      if (!(std::isfinite((*r)[0]) && std::isfinite((*r)[1]) && (*r)[0] >= 0 && (*r)[0] <= (*r)[1]))
        return InvalidArgument("ColorJitter: ", name, " must be a range (min, max) with 0 <= min <= max, got (",
                               (*r)[0], ", ", (*r)[1], ")");
    if (!(t.hue[0] >= -0.5 && t.hue[0] <= t.hue[1] && t.hue[1] <= 0.5))
      return InvalidArgument("ColorJitter: hue must be a range (min, max) with -0.5 <= min <= max <= 0.5, got (",
                             t.hue[0], ", ", t.hue[1], ")");
    return Status::OK();
  }
  Status operator()(const RandomGrayscale& t) const { return CheckProbability("RandomGrayscale", t.p); }
  Status operator()(const GaussianBlur& t) const {
    for (int k : {t.kernel_w, t.kernel_h})
      if (k <= 0 || k % 2 == 0 || k > 63)
        return InvalidArgument("GaussianBlur: kernel_size must be odd and in [1, 63], got (", t.kernel_w, ", ",
                               t.kernel_h, ")");
    if (!(t.sigma[0] > 0.0 && t.sigma[0] <= t.sigma[1] && std::isfinite(t.sigma[1])))
      return InvalidArgument("GaussianBlur: sigma must be positive, as (min, max) with 0 < min <= max, got (",
                             t.sigma[0], ", ", t.sigma[1], ")");
    return Status::OK();
  }
  Status operator()(const RandAugment& t) const {
    if (t.num_ops < 0 || t.num_ops > 4) return InvalidArgument("RandAugment: num_ops must be in [0, 4], got ", t.num_ops);
    SLUICE_RETURN_IF_ERROR(CheckAugmentWarp("RandAugment", t.num_magnitude_bins, t.interpolation));
    if (t.magnitude < 0 || t.magnitude >= t.num_magnitude_bins)
      return InvalidArgument("RandAugment: magnitude must be in [0, num_magnitude_bins - 1] = [0, ",
                             t.num_magnitude_bins - 1, "], got ", t.magnitude);
    return Status::OK();
  }
  Status operator()(const TrivialAugmentWide& t) const {
    return CheckAugmentWarp("TrivialAugmentWide", t.num_magnitude_bins, t.interpolation);
  }
  Status operator()(const GridMask& t) const {
    if (!(t.tile[0] > 0 && t.tile[0] <= t.tile[1]))
      return InvalidArgument("GridMask: tile must be positive, as (min, max) with 0 < min <= max, got (", t.tile[0],
                             ", ", t.tile[1], ")");
    if (!(t.ratio >= 0.0 && t.ratio <= 1.0)) return InvalidArgument("GridMask: ratio must be in [0, 1], got ", t.ratio);
    SLUICE_RETURN_IF_ERROR(CheckRange("GridMask", "angle", t.angle[0], t.angle[1]));
    SLUICE_RETURN_IF_ERROR(CheckRange("GridMask", "shift_x", t.shift_x[0], t.shift_x[1]));
    SLUICE_RETURN_IF_ERROR(CheckRange("GridMask", "shift_y", t.shift_y[0], t.shift_y[1]));
    return Status::OK();
  }
  Status operator()(const GaussianNoise& t) const {
    if (!std::isfinite(t.mean)) return InvalidArgument("GaussianNoise: mean must be finite, got ", t.mean);
    if (!(t.sigma >= 0.0 && std::isfinite(t.sigma)))
      return InvalidArgument("GaussianNoise: sigma shouldn't be negative, got ", t.sigma);
    return Status::OK();
  }
  Status operator()(const Cutout& t) const {
    if (t.n_holes < 1 || t.n_holes > 16)
      return InvalidArgument("Cutout: n_holes must be in [1, 16], got ", t.n_holes);
    if (t.length <= 0) return InvalidArgument("Cutout: length must be positive, got ", t.length);
    return Status::OK();
  }
  Status operator()(const RandomErasing& t) const {
    SLUICE_RETURN_IF_ERROR(CheckProbability("RandomErasing", t.p));
    if (!(t.scale[0] >= 0.0 && t.scale[0] <= t.scale[1] && t.scale[1] <= 1.0))
      return InvalidArgument("RandomErasing: scale must be (min, max) with 0 <= min <= max <= 1, got (", t.scale[0],
                             ", ", t.scale[1], ")");
    if (!(t.ratio[0] > 0.0 && t.ratio[0] <= t.ratio[1] && std::isfinite(t.ratio[1])))
      return InvalidArgument("RandomErasing: ratio must be (min, max) with 0 < min <= max, got (", t.ratio[0], ", ",
                             t.ratio[1], ")");
    for (float v : t.value) {
      if (!std::isfinite(v)) return InvalidArgument("RandomErasing: value must be finite, got ", v);
      if (!t.tensor_scale && !(v >= 0.f && v <= 255.f))
        return InvalidArgument("RandomErasing: value must be in [0, 255] on uint8 pixels (before ToTensor), got ", v);
    }
    return Status::OK();
  }
  Status operator()(const Lambda& t) const {
    if (t.fn == nullptr) return InvalidArgument(t.name, ": no function");
    return Status::OK();
  }
  Status operator()(const Normalize& t) const {
    for (int c = 0; c < 3; ++c) {
      if (!std::isfinite(t.mean[c]) || !std::isfinite(t.std[c]))
        return InvalidArgument("Normalize: mean and std must be finite");
      if (t.std[c] == 0.0f)
        return InvalidArgument("Normalize: std evaluated to zero (channel ", c,
                               "), leading to division by zero");
    }
    return Status::OK();
  }
};

}  // namespace

const char* TransformName(const Transform& t) { return std::visit(NameOf{}, t); }

Status Validate(const Transform& t) { return std::visit(Validator{}, t); }

}  // namespace sluice::transforms
