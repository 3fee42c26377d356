#include "pipeline/plan.h"

#include <string>
#include <utility>

#include "ops/op_registry.h"

namespace sluice {

Result<Plan> Plan::Create(std::vector<transforms::Transform> list) {
  const OpRegistry& ops = ImageOps();
  Plan plan;
  for (size_t i = 0; i < list.size(); ++i) {
    const transforms::Transform& t = list[i];
    const OpDef& op = ops.Find(t);
    const std::string where = "transform " + std::to_string(i);
    SLUICE_RETURN_IF_ERROR(op.validate(t).WithPrefix(where));
    SLUICE_RETURN_IF_ERROR(plan.list_.CheckOrder(op.kind, op.name).WithPrefix(where));
    SLUICE_RETURN_IF_ERROR(op.place(t, &plan.list_).WithPrefix(where));
    SLUICE_RETURN_IF_ERROR(plan.list_.Record(op.kind, op.name).WithPrefix(where));
  }
  if (!plan.list_.gates.empty())
    return InvalidArgument(plan.list_.gates.back().owner, " holds ", plan.list_.gates.back().end - plan.list_.placed,
                           " transform(s) more than the list has after it");
  if (!plan.list_.blocks.empty())
    return InvalidArgument(plan.list_.blocks.back().order ? "RandomOrder" : "RandomChoice", " expects ",
                           plan.list_.blocks.back().remaining, " more range(s) than the list has after it");
  plan.transforms_ = std::move(list);
  // Dry run on a typical image to catch lists that need too many segments.
  SampleGeometry g;
  Status s = plan.Draw(640, 480, SampleKey{}, &g);
  if (!s.ok() && s.code() == StatusCode::kUnsupported) return s;
  return plan;
}

Status Plan::Draw(int width, int height, const SampleKey& key, SampleGeometry* out) const {
  SampleDraw draw(width, height, key, list_.normalize, out);
  SLUICE_RETURN_IF_ERROR(DrawRange(0, transforms_.size(), &draw));
  return draw.Finish();
}

// Draws ops [begin, end) in order, skipping what RandomApply and RandomChoice leave out and
// drawing a RandomOrder's items (each an OrderItem marker and its ops) in the order it drew.
// Every op draws from its own position's stream, in whatever order it is drawn.
Status Plan::DrawRange(size_t begin, size_t end, SampleDraw* draw) const {
  const OpRegistry& ops = ImageOps();
  for (size_t i = begin; i < end; ++i) {
    draw->BeginOp(static_cast<uint32_t>(i));
    SLUICE_RETURN_IF_ERROR(ops.Find(transforms_[i]).draw(transforms_[i], draw));
    i += static_cast<size_t>(draw->TakeSkip());  // a RandomApply not applied: its ops draw nothing
    int perm[transforms::RandomOrder::kMaxItems];
    const int n = draw->TakeOrder(perm);
    if (n == 0) continue;
    size_t starts[transforms::RandomOrder::kMaxItems + 1];  // item k: [starts[k], starts[k + 1])
    starts[0] = i + 1;
    for (int k = 0; k < n; ++k)
      starts[k + 1] = starts[k] + 1 + static_cast<size_t>(std::get<transforms::OrderItem>(transforms_[starts[k]]).count);
    for (int k = 0; k < n; ++k)
      SLUICE_RETURN_IF_ERROR(DrawRange(starts[perm[k]], starts[perm[k] + 1], draw));
    i = starts[n] - 1;
  }
  return Status::OK();
}

FinishParams MakeFinishParams(const Plan& plan, DType dtype, Layout layout) {
  FinishParams p;
  p.dtype = dtype;
  p.layout = layout;
  if (plan.normalize()) {
    p.normalize = true;
    for (size_t c = 0; c < 3; ++c) {
      p.mean[c] = plan.normalize()->mean[c];
      p.std[c] = plan.normalize()->std[c];
    }
  }
  return p;
}

}  // namespace sluice
