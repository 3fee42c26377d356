#include "io/webdataset_layout.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice {
namespace {

std::span<const uint8_t> Bytes(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

TEST(WebDatasetLayoutTest, KeyIsThePathUpToTheFirstDotOfTheLastComponent) {
  // As webdataset's base_plus_ext: r"^((?:.*/|)[^.]+)[.]([^/]*)$", the suffix lowercased.
  auto m = SplitMemberName("train/a.b/n0153.Left.JPG");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->key, "train/a.b/n0153");
  EXPECT_EQ(m->ext, "left.jpg");
  m = SplitMemberName("x.cls");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->key, "x");
  EXPECT_EQ(m->ext, "cls");
  EXPECT_FALSE(SplitMemberName("README").has_value());
  EXPECT_FALSE(SplitMemberName("dir.d/README").has_value());
  EXPECT_FALSE(SplitMemberName(".hidden").has_value());
  EXPECT_FALSE(SplitMemberName("a/").has_value());
  EXPECT_FALSE(SplitMemberName("a.").has_value());
}

TEST(WebDatasetLayoutTest, ExtensionListsAreSplitLoweredAndChecked) {
  auto l = ParseExtList("jpg;.JPEG;png", "image_key");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(*l, (std::vector<std::string>{"jpg", "jpeg", "png"}));
  EXPECT_EQ(ParseExtList("jpg;;png", "image_key").status().message(), "image_key has an empty extension: 'jpg;;png'");
  EXPECT_FALSE(ParseExtList("", "label_key").ok());
}

TEST(WebDatasetLayoutTest, IntegerLabels) {
  EXPECT_EQ(*ParseIntLabel(Bytes("7")), 7);
  EXPECT_EQ(*ParseIntLabel(Bytes(" 12\n")), 12);
  EXPECT_EQ(*ParseIntLabel(Bytes("-3")), -3);
  EXPECT_EQ(*ParseIntLabel(Bytes("+0")), 0);
  EXPECT_EQ(*ParseIntLabel(Bytes("9223372036854775807")), INT64_MAX);
  EXPECT_EQ(*ParseIntLabel(Bytes("-9223372036854775808")), INT64_MIN);
  EXPECT_EQ(ParseIntLabel(Bytes("9223372036854775808")).status().message(),
            "the label is out of the int64 range: '9223372036854775808'");
  EXPECT_EQ(ParseIntLabel(Bytes("cat")).status().message(), "the label is not an integer: 'cat'");
  EXPECT_EQ(ParseIntLabel(Bytes("1.5")).status().code(), StatusCode::kCorruptData);
  EXPECT_EQ(ParseIntLabel(Bytes("")).status().message(), "the label is not an integer: ''");
  EXPECT_EQ(ParseIntLabel(Bytes("-")).status().code(), StatusCode::kCorruptData);
  EXPECT_EQ(ParseIntLabel(Bytes("1 2")).status().code(), StatusCode::kCorruptData);
  EXPECT_EQ(ParseIntLabel(Bytes(std::string("\x01\x02", 2))).status().message(), "the label is not an integer: '?" "?'");
}

}  // namespace
}  // namespace sluice
