#include "ops/op_registry.h"

namespace sluice {

const OpDef* OpRegistry::FindByName(std::string_view name) const {
  for (const OpDef& d : ops_)
    if (d.name != nullptr && name == d.name) return &d;
  return nullptr;
}

bool OpRegistry::Complete() const {
  for (const OpDef& d : ops_)
    if (d.name == nullptr) return false;
  return true;
}

}  // namespace sluice
