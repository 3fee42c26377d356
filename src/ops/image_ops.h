// The families of image ops, each registering its entries in the op table (op_registry.h):
// one file per family, listed once in RegisterImageOps (image_ops.cc).
//
// Thread-safety: registration runs once, before the table is used.
#ifndef SLUICE_OPS_IMAGE_OPS_H_
#define SLUICE_OPS_IMAGE_OPS_H_

#include "ops/op_registry.h"

namespace sluice {

void RegisterResizeCropOps(OpRegistry* registry);  // crops, resizes, padding
void RegisterRandomSizeOps(OpRegistry* registry);  // resizes to drawn sizes, zoom-out
void RegisterFlipOps(OpRegistry* registry);        // flips
void RegisterAffineOps(OpRegistry* registry);      // rotations, affine warps
void RegisterColorOps(OpRegistry* registry);       // colour steps
void RegisterPhotometricOps(OpRegistry* registry); // channel order, photometric distortion
void RegisterBlurOp(OpRegistry* registry);         // GaussianBlur
void RegisterAugmentOps(OpRegistry* registry);     // RandAugment, TrivialAugmentWide
void RegisterAugMixOp(OpRegistry* registry);       // AugMix
void RegisterEraseOps(OpRegistry* registry);       // Cutout, RandomErasing, GridMask
void RegisterFinishOps(OpRegistry* registry);      // Normalize, GaussianNoise, Lambda
void RegisterRandomApplyOp(OpRegistry* registry);  // RandomApply
void RegisterChoiceOrderOps(OpRegistry* registry); // RandomChoice, RandomOrder and their ranges

}  // namespace sluice

#endif  // SLUICE_OPS_IMAGE_OPS_H_
