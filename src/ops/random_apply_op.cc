// The op table's entry for RandomApply: a marker that draws whether the transforms after it are
// applied (ListState keeps its range; Plan::Draw skips the range when the draw says no).
#include <utility>

#include "ops/arg_checks.h"
#include "ops/image_ops.h"

namespace sluice {

using transforms::RandomApply;

void RegisterRandomApplyOp(OpRegistry* registry) {
  OpSpec<RandomApply> gate{"RandomApply", OpKind::kGate};
  gate.fields = {Field<&RandomApply::count>("count"), Field<&RandomApply::p>("p")};
  gate.validate = [](const RandomApply& t) -> Status {
    if (t.count < 1) return InvalidArgument("RandomApply: count must be at least 1, got ", t.count);
    return CheckProbability("RandomApply", t.p);
  };
  gate.place = [](const RandomApply& t, ListState* list) { return list->OpenGate(t.count); };
  gate.draw = [](const RandomApply& t, SampleDraw* d) {
    if (!d->rng().Bernoulli(t.p)) d->Skip(t.count);
    return Status::OK();
  };
  registry->Add(std::move(gate));
}

}  // namespace sluice
