#include "ops/op_registry.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <variant>

namespace sluice {
namespace {

// Every transform type has exactly one entry, found by its type and by its name.
TEST(OpRegistryTest, EveryTransformIsRegisteredOnce) {
  const OpRegistry& ops = ImageOps();
  ASSERT_TRUE(ops.Complete());
  std::set<std::string> names;
  for (size_t i = 0; i < OpRegistry::kNumTypes; ++i) {
    const OpDef& def = ops.entries()[i];
    ASSERT_NE(def.name, nullptr) << "alternative " << i << " has no entry";
    EXPECT_TRUE(names.insert(def.name).second) << def.name << " twice";
    const transforms::Transform t = def.make();
    EXPECT_EQ(t.index(), i) << def.name;
    EXPECT_EQ(&ops.Find(t), &def);
    EXPECT_EQ(ops.FindByName(def.name), &def);
    EXPECT_STREQ(transforms::TransformName(t), def.name);
  }
  EXPECT_EQ(ops.FindByName("NoSuchOp"), nullptr);
}

// A field's address lies inside the description it belongs to, and names are unique per op.
TEST(OpRegistryTest, FieldsAddressTheirDescription) {
  const OpRegistry& ops = ImageOps();
  for (const char* name : {"RandomResizedCrop", "RandomAffine", "GridMask", "RandomErasing", "Normalize"}) {
    const OpDef* def = ops.FindByName(name);
    ASSERT_NE(def, nullptr);
    transforms::Transform t = def->make();
    std::set<std::string> fields;
    for (const OpField& f : def->fields) {
      EXPECT_TRUE(fields.insert(f.name).second) << name << "." << f.name;
      const auto* p = static_cast<const char*>(f.address(t));
      const auto* begin = reinterpret_cast<const char*>(&t);
      EXPECT_TRUE(p >= begin && p < begin + sizeof(t)) << name << "." << f.name;
    }
  }
  // Writing through a field changes the description: RandomResizedCrop's height.
  const OpDef* rrc = ops.FindByName("RandomResizedCrop");
  transforms::Transform t = rrc->make();
  *static_cast<int*>(rrc->fields[0].address(t)) = 123;
  EXPECT_EQ(std::get<transforms::RandomResizedCrop>(t).height, 123);
}

// The kind rules and an op's own rules, in the order Plan::Create applies them.
TEST(OpRegistryTest, ListStateAppliesTheKindRules) {
  ListState list;
  EXPECT_TRUE(list.CheckOrder(OpKind::kGeometry, "Resize").ok());
  ASSERT_TRUE(list.Record(OpKind::kPixel, "ColorJitter").ok());
  EXPECT_TRUE(list.CheckOrder(OpKind::kFlip, "RandomHorizontalFlip").ok());
  const Status crop = list.CheckOrder(OpKind::kGeometry, "RandomCrop");
  EXPECT_EQ(crop.code(), StatusCode::kUnsupported);
  EXPECT_EQ(crop.message(), "RandomCrop after ColorJitter is not supported; put colour transforms after the crops, "
                            "resizes and padding");
  EXPECT_TRUE(list.AddPixelSteps(ColorOps::kMaxSteps, PixelPasses::kMax).ok());
  EXPECT_EQ(list.AddPixelSteps(1, 0).code(), StatusCode::kUnsupported);
  ASSERT_TRUE(list.Record(OpKind::kErase, "Cutout").ok());
  EXPECT_TRUE(list.CheckOrder(OpKind::kNormalize, "Normalize").ok());
  EXPECT_NE(list.CheckOrder(OpKind::kNoise, "GaussianNoise").message().find("and GaussianNoise"), std::string::npos);
}

}  // namespace
}  // namespace sluice
