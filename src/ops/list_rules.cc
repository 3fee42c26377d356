#include "ops/list_rules.h"

#include <string_view>

#include "kernels/color/color_params.h"
#include "kernels/erase/erase_params.h"
#include "ops/sample_geometry.h"

namespace sluice {

Status ListState::CheckOrder(OpKind kind, const char* name) const {
  if (!gates.empty() && (kind == OpKind::kFunction || kind == OpKind::kNormalize))
    return Unsupported(name, " inside ", gates.back().owner, " is not supported; put it after the ",
                       gates.back().owner);
  if (kind == OpKind::kGate) return Status::OK();
  for (const Gate& g : gates)
    if (g.owner == std::string_view("RandomOrder") && kind != OpKind::kPixel)
      return Unsupported("RandomOrder of ", name,
                         " is not supported: only colour transforms and filters are reordered per sample");
  if (kind == OpKind::kFunction) return Status::OK();  // Lambda's own entry places it
  if (!finished_fns.empty() || (!pixel_fns.empty() && kind != OpKind::kNormalize))
    return Unsupported(name, " after ", (finished_fns.empty() ? pixel_fns : finished_fns).front().fn.name,
                       " is not supported; user functions run after the geometric and colour transforms",
                       finished_fns.empty() ? "" : " and Normalize");
  if (erase != nullptr && kind != OpKind::kErase && kind != OpKind::kNormalize)
    return Unsupported(name, " after ", erase,
                       " is not supported; put erasing after the geometric and colour transforms",
                       kind == OpKind::kNoise ? " and GaussianNoise" : "");
  if (kind == OpKind::kNoise) return Status::OK();
  if (has_noise && kind != OpKind::kErase && kind != OpKind::kNormalize)
    return Unsupported(name,
                       " after GaussianNoise is not supported; put GaussianNoise after the geometric and colour "
                       "transforms");
  if (kind == OpKind::kErase) return Status::OK();
  if (kind == OpKind::kPixel) SLUICE_RETURN_IF_ERROR(RefuseAfterNormalize(name));
  if (color != nullptr && kind != OpKind::kPixel && kind != OpKind::kFlip && kind != OpKind::kNormalize)
    return Unsupported(name, " after ", color,
                       " is not supported; put colour transforms after the crops, resizes and padding");
  if (augment != nullptr && kind == OpKind::kFlip)
    return Unsupported(name, " after ", augment,
                       " is not supported (its shears and rotations do not commute with flips); put the flip "
                       "before it");
  return Status::OK();
}

Status ListState::OpenGate(int count, const char* owner) {
  const uint32_t end = placed + 1 + static_cast<uint32_t>(count);
  if (!gates.empty() && end > gates.back().end)
    return InvalidArgument(owner, ": its ", count, " transforms reach past the ", gates.back().owner, " around it");
  gates.push_back(Gate{end, out_height, out_width, owner});
  return Status::OK();
}

Status ListState::OpenBlock(int items, bool order) {
  blocks.push_back(Block{items, placed + 1, order});
  return Status::OK();
}

Status ListState::BlockItem(int count, bool order) {
  const char* owner = order ? "RandomOrder" : "RandomChoice";
  if (blocks.empty() || blocks.back().next != placed || blocks.back().order != order)
    return InvalidArgument(order ? "OrderItem" : "ChoiceOption", " must follow its ", owner,
                           " or the previous range of it");
  Block& b = blocks.back();
  b.next = placed + 1 + static_cast<uint32_t>(count);
  if (--b.remaining == 0) blocks.pop_back();
  return OpenGate(count, owner);
}

Status ListState::Record(OpKind kind, const char* name) {
  if (kind == OpKind::kPixel) {
    has_color = true;
    if (color == nullptr) color = name;
  }
  if (kind == OpKind::kErase) {
    has_erase = true;
    if (erase == nullptr) erase = name;
  }
  if (kind == OpKind::kNoise) has_noise = true;
  ++placed;
  for (; !gates.empty() && gates.back().end == placed; gates.pop_back())
    if (gates.back().out_height != out_height || gates.back().out_width != out_width)
      return Unsupported(gates.back().owner, " of transforms that change the output size (", name,
                         " ends it) is not supported: a batch's samples would differ in size");
  return Status::OK();
}

Status ListState::AddPixelSteps(int steps, int filters) {
  color_steps += steps;
  max_filters += filters;
  if (color_steps > ColorOps::kMaxSteps)
    return Unsupported("more than ", ColorOps::kMaxSteps,
                       " colour adjustments in one list (ColorJitter counts 4, RandAugment num_ops)");
  if (max_filters > PixelPasses::kMax)
    return Unsupported("more than ", PixelPasses::kMax,
                       " blurs, sharpness adjustments and auto-augment warps in one list (RandAugment counts "
                       "num_ops)");
  return Status::OK();
}

Status ListState::AddEraseRects(int rects) {
  erase_rects += rects;
  if (erase_rects > EraseOps::kMaxRects)
    return Unsupported("more than ", EraseOps::kMaxRects, " erased rectangles per sample");
  return Status::OK();
}

Status ListState::RefuseAfterNormalize(const char* name) const {
  if (normalize) return Unsupported(name, " after Normalize is not supported; put Normalize last");
  return Status::OK();
}

}  // namespace sluice
