// The op table's entries for the per-sample containers RandomChoice and RandomOrder and the
// markers of their ranges (ChoiceOption, OrderItem): a choice draws one option and the options
// not chosen are skipped; an order draws a permutation, which Plan::Draw follows.
#include <cmath>
#include <utility>

#include "ops/arg_checks.h"
#include "ops/image_ops.h"

namespace sluice {

using namespace transforms;

namespace {

// The option drawn with weights p[0, n) (equal when all are 0), as torch.multinomial would.
int DrawOption(SampleRng& rng, const RandomChoice& t) {
  double total = 0.0;
  for (int k = 0; k < t.num_options; ++k) total += t.p[static_cast<size_t>(k)];
  if (total <= 0.0) return static_cast<int>(rng.RandInt(0, t.num_options));
  const double u = rng.Uniform(0.0, total);
  double sum = 0.0;
  for (int k = 0; k < t.num_options - 1; ++k) {
    sum += t.p[static_cast<size_t>(k)];
    if (u < sum) return k;
  }
  return t.num_options - 1;
}

void RegisterChoice(OpRegistry* registry) {
  OpSpec<RandomChoice> choice{"RandomChoice", OpKind::kGate};
  choice.fields = {Field<&RandomChoice::num_options>("num_options"), Field<&RandomChoice::p>("p")};
  choice.validate = [](const RandomChoice& t) -> Status {
    if (t.num_options < 1 || t.num_options > RandomChoice::kMaxOptions)
      return InvalidArgument("RandomChoice: it takes 1 to ", RandomChoice::kMaxOptions, " transforms, got ",
                             t.num_options);
    for (int k = 0; k < t.num_options; ++k)
      if (!(std::isfinite(t.p[static_cast<size_t>(k)]) && t.p[static_cast<size_t>(k)] >= 0.0))
        return InvalidArgument("RandomChoice: p must be non-negative numbers, got ", t.p[static_cast<size_t>(k)]);
    return Status::OK();
  };
  choice.place = [](const RandomChoice& t, ListState* list) { return list->OpenBlock(t.num_options, false); };
  choice.draw = [](const RandomChoice& t, SampleDraw* d) { return d->OpenChoice(DrawOption(d->rng(), t), t.num_options); };
  registry->Add(std::move(choice));

  OpSpec<ChoiceOption> option{"ChoiceOption", OpKind::kGate};
  option.fields = {Field<&ChoiceOption::count>("count")};
  option.validate = [](const ChoiceOption& t) -> Status {
    if (t.count < 0) return InvalidArgument("ChoiceOption: count must be at least 0, got ", t.count);
    return Status::OK();
  };
  option.place = [](const ChoiceOption& t, ListState* list) { return list->BlockItem(t.count, false); };
  option.draw = [](const ChoiceOption& t, SampleDraw* d) {
    if (!d->NextOptionChosen()) d->Skip(t.count);
    return Status::OK();
  };
  registry->Add(std::move(option));
}

void RegisterOrder(OpRegistry* registry) {
  OpSpec<RandomOrder> order{"RandomOrder", OpKind::kGate};
  order.fields = {Field<&RandomOrder::num_items>("num_items")};
  order.validate = [](const RandomOrder& t) -> Status {
    if (t.num_items < 1 || t.num_items > RandomOrder::kMaxItems)
      return InvalidArgument("RandomOrder: it takes 1 to ", RandomOrder::kMaxItems, " transforms, got ", t.num_items);
    return Status::OK();
  };
  order.place = [](const RandomOrder& t, ListState* list) { return list->OpenBlock(t.num_items, true); };
  order.draw = [](const RandomOrder& t, SampleDraw* d) {
    int perm[RandomOrder::kMaxItems];
    for (int k = 0; k < t.num_items; ++k) perm[k] = k;
    for (int k = t.num_items - 1; k > 0; --k) std::swap(perm[k], perm[d->rng().RandInt(0, k + 1)]);
    d->Order(perm, t.num_items);
    return Status::OK();
  };
  registry->Add(std::move(order));

  OpSpec<OrderItem> item{"OrderItem", OpKind::kGate};
  item.fields = {Field<&OrderItem::count>("count")};
  item.validate = [](const OrderItem& t) -> Status {
    if (t.count < 0) return InvalidArgument("OrderItem: count must be at least 0, got ", t.count);
    return Status::OK();
  };
  item.place = [](const OrderItem& t, ListState* list) { return list->BlockItem(t.count, true); };
  item.draw = [](const OrderItem&, SampleDraw*) { return Status::OK(); };
  registry->Add(std::move(item));
}

}  // namespace

void RegisterChoiceOrderOps(OpRegistry* registry) {
  RegisterChoice(registry);
  RegisterOrder(registry);
}

}  // namespace sluice
