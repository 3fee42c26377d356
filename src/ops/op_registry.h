// The op table: one entry per transform of include/sluice/transforms.h, holding what sluice knows
// about it: its name, its argument fields (the bindings build descriptions from them), its
// argument checks, its placement rules (beyond its kind's, see ListState) and its per-sample
// parameter draw (into a SampleDraw). Plan iterates over the table; nothing else switches over
// transform types.
//
// Ops are registered explicitly, as Arrow registers functions: RegisterImageOps() adds every
// image op; ImageOps() is that table, built once.
//
//   OpSpec<transforms::RandomGrayscale> op{"RandomGrayscale", OpKind::kPixel};
//   op.fields = {Field<&transforms::RandomGrayscale::p>("p")};
//   op.validate = [](const transforms::RandomGrayscale& t) { return CheckProbability("RandomGrayscale", t.p); };
//   op.place = [](const transforms::RandomGrayscale&, ListState* list) { return list->AddPixelSteps(1, 0); };
//   op.draw = [](const transforms::RandomGrayscale& t, SampleDraw* d) {
//     if (d->rng().Bernoulli(t.p)) d->AddColor(ColorKind::kGrayscale, 0.0);
//     return Status::OK();
//   };
//   registry->Add(std::move(op));
//
// Thread-safety: a registry is immutable once built; ImageOps() may be called from any thread.
#ifndef SLUICE_OPS_OP_REGISTRY_H_
#define SLUICE_OPS_OP_REGISTRY_H_

#include <array>
#include <cstddef>
#include <functional>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "ops/list_rules.h"
#include "ops/op_fields.h"
#include "ops/sample_draw.h"
#include "sluice/status.h"
#include "sluice/transforms.h"

namespace sluice {

// One op's entry, typed. Each hook may be left out: no checks, no rules beyond its kind's, no
// draw (a marker such as Normalize draws nothing).
template <typename T>
struct OpSpec {
  OpSpec(const char* op_name, OpKind op_kind) : name(op_name), kind(op_kind) {}
  const char* name;  // torchvision's class name
  OpKind kind;
  std::vector<OpField> fields;
  Status (*validate)(const T& t) = nullptr;
  Status (*place)(const T& t, ListState* list) = nullptr;
  Status (*draw)(const T& t, SampleDraw* draw) = nullptr;
};

// An entry as the table keeps it: the hooks take any transform (of the entry's type).
struct OpDef {
  const char* name = nullptr;
  OpKind kind = OpKind::kGeometry;
  std::vector<OpField> fields;
  transforms::Transform (*make)() = nullptr;  // a description with the defaults
  std::function<Status(const transforms::Transform&)> validate;
  std::function<Status(const transforms::Transform&, ListState*)> place;
  std::function<Status(const transforms::Transform&, SampleDraw*)> draw;
};

class OpRegistry {
 public:
  template <typename T>
  void Add(OpSpec<T> spec);

  // The entry of t's type. REQUIRES: it was registered (ImageOps() has every type).
  const OpDef& Find(const transforms::Transform& t) const { return ops_[t.index()]; }
  // The entry named `name`, or nullptr.
  const OpDef* FindByName(std::string_view name) const;
  // Whether every transform type has an entry.
  bool Complete() const;

  static constexpr size_t kNumTypes = std::variant_size_v<transforms::Transform>;
  // The entries, by the index of their type in transforms::Transform.
  const std::array<OpDef, kNumTypes>& entries() const { return ops_; }

 private:
  std::array<OpDef, kNumTypes> ops_;
};

// Adds every image op (the family files' Register* functions, image_ops.cc).
void RegisterImageOps(OpRegistry* registry);

// The table of every image op.
const OpRegistry& ImageOps();

namespace op_registry_internal {
template <typename T, size_t I = 0>
constexpr size_t IndexOf() {
  if constexpr (std::is_same_v<std::variant_alternative_t<I, transforms::Transform>, T>) {
    return I;
  } else {
    return IndexOf<T, I + 1>();
  }
}
}  // namespace op_registry_internal

template <typename T>
void OpRegistry::Add(OpSpec<T> spec) {
  OpDef& d = ops_[op_registry_internal::IndexOf<T>()];
  d.name = spec.name;
  d.kind = spec.kind;
  d.fields = std::move(spec.fields);
  d.make = [] { return transforms::Transform(T{}); };
  auto validate = spec.validate;
  auto place = spec.place;
  auto draw = spec.draw;
  d.validate = [validate](const transforms::Transform& t) {
    return validate != nullptr ? validate(std::get<T>(t)) : Status::OK();
  };
  d.place = [place](const transforms::Transform& t, ListState* list) {
    return place != nullptr ? place(std::get<T>(t), list) : Status::OK();
  };
  d.draw = [draw](const transforms::Transform& t, SampleDraw* s) {
    return draw != nullptr ? draw(std::get<T>(t), s) : Status::OK();
  };
}

}  // namespace sluice

#endif  // SLUICE_OPS_OP_REGISTRY_H_
