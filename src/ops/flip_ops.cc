// The op table's entries for RandomHorizontalFlip and RandomVerticalFlip.
#include "ops/arg_checks.h"
#include "ops/image_ops.h"

namespace sluice {

using namespace transforms;

void RegisterFlipOps(OpRegistry* registry) {
  OpSpec<RandomHorizontalFlip> h{"RandomHorizontalFlip", OpKind::kFlip};
  h.fields = {Field<&RandomHorizontalFlip::p>("p")};
  h.validate = [](const RandomHorizontalFlip& t) { return CheckProbability("RandomHorizontalFlip", t.p); };
  h.draw = [](const RandomHorizontalFlip& t, SampleDraw* d) {
    if (d->rng().Bernoulli(t.p)) d->FlipX();
    return Status::OK();
  };
  registry->Add(std::move(h));

  OpSpec<RandomVerticalFlip> v{"RandomVerticalFlip", OpKind::kFlip};
  v.fields = {Field<&RandomVerticalFlip::p>("p")};
  v.validate = [](const RandomVerticalFlip& t) { return CheckProbability("RandomVerticalFlip", t.p); };
  v.draw = [](const RandomVerticalFlip& t, SampleDraw* d) {
    if (d->rng().Bernoulli(t.p)) d->FlipY();
    return Status::OK();
  };
  registry->Add(std::move(v));
}

}  // namespace sluice
