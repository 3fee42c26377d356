#include "io/webdataset_index.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/tar_test_util.h"

namespace sluice {
namespace {
using namespace sluice::testing;  // NOLINT: test helpers

ShardIndex Index(std::vector<uint8_t> bytes, const WebDatasetSpec& spec = {}) {
  MemoryInput in(std::move(bytes));
  TarReader tar(&in, "s.tar");
  return IndexShard(&tar, spec);
}

TEST(WebDatasetIndexTest, ConsecutiveMembersOfAKeyAreOneSample) {
  std::vector<uint8_t> t;
  Member(&t, "a/0001.jpg", "JPEGDATA");
  Member(&t, "a/0001.cls", "3\n");
  Member(&t, "a/0001.json", R"({"x": 1})");
  Member(&t, "README", "not a sample");
  Member(&t, "a/0002.PNG", "PNGDATA!!");
  Member(&t, "a/0002.cls", "-1");
  End(&t);
  const ShardIndex idx = Index(t);
  ASSERT_TRUE(idx.damage.ok()) << idx.damage.ToString();
  ASSERT_EQ(idx.samples.size(), 2u);
  EXPECT_EQ(idx.samples[0].key, "a/0001");
  EXPECT_EQ(idx.samples[0].image_ext, "jpg");
  EXPECT_EQ(idx.samples[0].offset, 512);  // after the first header
  EXPECT_EQ(idx.samples[0].size, 8);
  EXPECT_EQ(idx.samples[0].label, 3);
  EXPECT_EQ(idx.samples[0].problem, "");
  EXPECT_EQ(idx.samples[1].image_ext, "png");
  EXPECT_EQ(idx.samples[1].offset, 512 * 9);  // 4 members of 1 data block, then its header
  EXPECT_EQ(idx.samples[1].label, -1);
}

TEST(WebDatasetIndexTest, PreferenceOrderPicksTheImageAndTheLabel) {
  std::vector<uint8_t> t;
  Member(&t, "k.png", "P");
  Member(&t, "k.jpeg", "JJ");
  Member(&t, "k.txt", "5");
  Member(&t, "k.json", R"({"label": 8})");
  End(&t);
  WebDatasetSpec spec;
  spec.image_exts = {"jpeg", "png"};
  spec.label_exts = {"json", "txt"};
  spec.label_field = "label";
  ShardIndex idx = Index(t, spec);
  ASSERT_EQ(idx.samples.size(), 1u);
  EXPECT_EQ(idx.samples[0].image_ext, "jpeg");
  EXPECT_EQ(idx.samples[0].size, 2);
  EXPECT_EQ(idx.samples[0].label, 8);
  spec.label_exts = {"txt", "json"};
  idx = Index(t, spec);
  EXPECT_EQ(idx.samples[0].label, 5);
  spec.label_exts = {};  // unlabelled
  idx = Index(t, spec);
  EXPECT_EQ(idx.samples[0].label, -1);
  EXPECT_EQ(idx.samples[0].problem, "");
}

TEST(WebDatasetIndexTest, UnusableSamplesKeepTheirPlaceWithTheReason) {
  std::vector<uint8_t> t;
  Member(&t, "ok.jpg", "J");
  Member(&t, "ok.cls", "0");
  Member(&t, "nolabel.jpg", "J");
  Member(&t, "noimage.cls", "1");
  Member(&t, "noimage.txt", "1");
  Member(&t, "badlabel.jpg", "J");
  Member(&t, "badlabel.cls", "dog");
  Member(&t, "twice.jpg", "J");
  Member(&t, "twice.jpg", "J");
  Member(&t, "twice.cls", "0");
  Member(&t, "ok.jpg", "J");  // the first key again, later
  Member(&t, "ok.cls", "1");
  End(&t);
  const ShardIndex idx = Index(t);
  ASSERT_TRUE(idx.damage.ok());
  ASSERT_EQ(idx.samples.size(), 6u);
  EXPECT_EQ(idx.samples[0].problem, "");
  EXPECT_EQ(idx.samples[1].problem, "no label member (looked for .cls)");
  EXPECT_EQ(idx.samples[2].problem, "no image member (looked for .jpg, .jpeg, .png, .webp; found .cls, .txt)");
  EXPECT_EQ(idx.samples[3].problem, "badlabel.cls: the label is not an integer: 'dog'");
  EXPECT_EQ(idx.samples[4].problem, "the member twice.jpg appears twice");
  EXPECT_EQ(idx.samples[5].problem, "a duplicate key: an earlier sample of this shard has it");
}

TEST(WebDatasetIndexTest, DamageKeepsTheSamplesBeforeIt) {
  std::vector<uint8_t> t;
  Member(&t, "a.jpg", "J");
  Member(&t, "a.cls", "1");
  Member(&t, "b.jpg", std::string(2000, 'x'));
  Member(&t, "b.cls", "2");
  t.resize(512 * 5);  // cut inside b.jpg's data
  const ShardIndex idx = Index(t);
  ASSERT_EQ(idx.samples.size(), 1u);
  EXPECT_EQ(idx.samples[0].key, "a");
  EXPECT_EQ(idx.damage.code(), StatusCode::kCorruptData);
  EXPECT_NE(idx.damage.message().find("s.tar: truncated"), std::string::npos) << idx.damage.message();
  // A label member cut short.
  std::vector<uint8_t> u;
  Member(&u, "a.jpg", "J");
  Member(&u, "a.cls", std::string(600, '1'));
  u.resize(512 * 4);
  const ShardIndex cut = Index(u);
  EXPECT_EQ(cut.samples.size(), 0u);
  EXPECT_EQ(cut.damage.code(), StatusCode::kCorruptData);
}

}  // namespace
}  // namespace sluice
