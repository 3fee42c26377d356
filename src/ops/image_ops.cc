#include "ops/image_ops.h"

namespace sluice {

void RegisterImageOps(OpRegistry* registry) {
  RegisterResizeCropOps(registry);
  RegisterRandomSizeOps(registry);
  RegisterFlipOps(registry);
  RegisterAffineOps(registry);
  RegisterColorOps(registry);
  RegisterPhotometricOps(registry);
  RegisterBlurOp(registry);
  RegisterAugmentOps(registry);
  RegisterAugMixOp(registry);
  RegisterEraseOps(registry);
  RegisterFinishOps(registry);
  RegisterRandomApplyOp(registry);
  RegisterChoiceOrderOps(registry);
}

const OpRegistry& ImageOps() {
  static const OpRegistry* const registry = [] {
    auto* r = new OpRegistry();
    RegisterImageOps(r);
    return r;
  }();
  return *registry;
}

}  // namespace sluice
