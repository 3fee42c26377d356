#include "pipeline/plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "core/rng.h"
#include "kernels/resize/resize_ref.h"
#include "ops/resize_crop_ops.h"

namespace sluice {
namespace {

using namespace sluice::transforms;

Status CreateStatus(std::vector<Transform> list) {
  Result<Plan> p = Plan::Create(std::move(list));
  return p.ok() ? Status::OK() : p.status();
}

TEST(PlanTest, CreateErrorsNameTheProblem) {
  struct Case {
    std::vector<Transform> list;
    StatusCode code;
    std::string message;  // a substring
  };
  const std::vector<Case> cases = {
      {{Normalize{}, CenterCrop{224, 224}, Normalize{}}, StatusCode::kInvalidArgument,
       "transform 2: Normalize appears twice; combine them into one"},
      {{RandomResizedCrop{0, 224}}, StatusCode::kInvalidArgument,
       "transform 0: RandomResizedCrop: size must be positive, got (0, 224)"},
      {{RandomResizedCrop{224, 224, {0.5, 0.1}}}, StatusCode::kInvalidArgument,
       "transform 0: RandomResizedCrop: scale must be (min, max) with 0 < min <= max, got (0.5, 0.1)"},
      {{CenterCrop{224, 224}, RandomHorizontalFlip{1.5}}, StatusCode::kInvalidArgument,
       "transform 1: RandomHorizontalFlip: p must be in [0, 1], got 1.5"},
      {{Resize{256, 0, 200}, CenterCrop{224, 224}}, StatusCode::kInvalidArgument,
       "transform 0: Resize: max_size = 200 must be strictly greater than the requested size for "
       "the smaller edge = 256"},
      {{CenterCrop{8, 8}, Normalize{{0, 0, 0}, {1, 0, 1}}}, StatusCode::kInvalidArgument,
       "transform 1: Normalize: std evaluated to zero (channel 1)"},
      {{RandomCrop{8, 8, {0, -1, 0, 0}}}, StatusCode::kInvalidArgument,
       "transform 0: RandomCrop: padding must be non-negative, got -1"},
      {{Normalize{}, RandomCrop{8, 8, {0, 0, 0, 0}, true}}, StatusCode::kUnsupported,
       "transform 1: RandomCrop with padding after Normalize is not supported"},
      {{CenterCrop{8, 8}, RandomVerticalFlip{-0.1}}, StatusCode::kInvalidArgument,
       "transform 1: RandomVerticalFlip: p must be in [0, 1], got -0.1"},
      {{Pad{{1, 2, -3, 4}}}, StatusCode::kInvalidArgument, "transform 0: Pad: padding must be non-negative, got -3"},
      {{Normalize{}, Pad{{1, 1, 1, 1}}}, StatusCode::kUnsupported,
       "transform 1: Pad after Normalize is not supported"},
      {{Resize{50, 50}, Resize{40, 40}, Resize{30, 30}, Resize{20, 20}, Resize{10, 10}},
       StatusCode::kUnsupported, "needs more than 4 resampling passes"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Status s = CreateStatus(cases[i].list);
    ASSERT_FALSE(s.ok()) << "case " << i;
    EXPECT_EQ(s.code(), cases[i].code) << "case " << i << ": " << s.ToString();
    EXPECT_NE(s.message().find(cases[i].message), std::string::npos)
        << "case " << i << ": " << s.message();
  }
}

// Lists that do not end in a fixed size are valid; each sample then has its own size.
class Unchanged : public SampleFunction {
 public:
  Status Call(void*, int, int, DType, Layout, uint64_t) const override { return Status::OK(); }
};

TEST(PlanTest, UserFunctionsKeepTheirPositionInTheList) {
  // The position keys a function's random stream (the seed its call gets), so it is the index in
  // the whole list, counting every op before it.
  Lambda pixels, finished;
  pixels.fn = finished.fn = std::make_shared<Unchanged>();
  finished.stage = SampleFunction::Stage::kFinished;
  Result<Plan> p = Plan::Create({Resize{32, 32}, RandomHorizontalFlip{}, pixels, Normalize{}, finished});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->pixel_functions().size(), 1u);
  ASSERT_EQ(p->finished_functions().size(), 1u);
  EXPECT_EQ(p->pixel_functions()[0].position, 2u);
  EXPECT_EQ(p->finished_functions()[0].position, 4u);
}

TEST(PlanTest, VariableOutputSize) {
  const std::vector<std::vector<Transform>> lists = {
      {}, {Resize{256, 0, 0}}, {RandomHorizontalFlip{}, Normalize{}},
      {CenterCrop{224, 224}, Resize{256, 0, 0}}};
  for (size_t i = 0; i < lists.size(); ++i) {
    Result<Plan> p = Plan::Create(lists[i]);
    ASSERT_TRUE(p.ok()) << "list " << i << ": " << p.status().ToString();
    EXPECT_FALSE(p->fixed_size()) << "list " << i;
  }
  Result<Plan> p = Plan::Create({Resize{256, 0, 0}});
  SampleGeometry g;
  ASSERT_TRUE(p->Draw(500, 375, SampleKey{}, &g).ok());
  ASSERT_EQ(g.num_segments, 1);
  EXPECT_EQ(g.segments[0].x.out_len, 341);  // torchvision: int(256 * 500 / 375)
  EXPECT_EQ(g.segments[0].y.out_len, 256);
  ASSERT_TRUE(p->Draw(375, 500, SampleKey{}, &g).ok());
  EXPECT_EQ(g.segments[0].x.out_len, 256);
  EXPECT_EQ(g.segments[0].y.out_len, 341);
  p = Plan::Create({});
  ASSERT_TRUE(p->Draw(31, 17, SampleKey{}, &g).ok());
  EXPECT_TRUE(g.segments[0].x.identity && g.segments[0].y.identity);
  EXPECT_EQ(g.segments[0].x.out_len, 31);
  EXPECT_EQ(g.segments[0].y.out_len, 17);
}

TEST(PlanTest, OutputSizeAndNormalize) {
  Result<Plan> p = Plan::Create({Resize{256}, CenterCrop{224, 200}, Normalize{{0.5f, 0.5f, 0.5f}, {0.2f, 0.3f, 0.4f}}});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->out_height(), 224);
  EXPECT_EQ(p->out_width(), 200);
  ASSERT_TRUE(p->normalize().has_value());
  EXPECT_EQ(p->normalize()->std[2], 0.4f);
  p = Plan::Create({RandomResizedCrop{32, 48}, RandomHorizontalFlip{}});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->out_height(), 32);
  EXPECT_EQ(p->out_width(), 48);
  EXPECT_FALSE(p->normalize().has_value());
  // The last geometric transform decides: a crop after Resize((h, w)).
  p = Plan::Create({Resize{300, 400}, RandomCrop{100, 120}});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->out_height(), 100);
  EXPECT_EQ(p->out_width(), 120);
}

int Segments(std::vector<Transform> list, int w = 500, int h = 375) {
  Result<Plan> p = Plan::Create(std::move(list));
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return -1;
  SampleGeometry g;
  const Status s = p->Draw(w, h, SampleKey{1, 2, 3}, &g);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return g.num_segments;
}

TEST(PlanTest, SegmentCounts) {
  EXPECT_EQ(Segments({RandomResizedCrop{224, 224}}), 1);
  EXPECT_EQ(Segments({RandomResizedCrop{224, 224}, RandomHorizontalFlip{}, Normalize{}}), 1);
  EXPECT_EQ(Segments({Resize{256}, CenterCrop{224, 224}}), 1);
  EXPECT_EQ(Segments({CenterCrop{300, 300}, Resize{224, 224}}), 1);       // crop folds into the resize
  EXPECT_EQ(Segments({Resize{256}, RandomResizedCrop{224, 224}}), 2);     // crop of a resized image
  EXPECT_EQ(Segments({Resize{300, 300}, Resize{224, 224}}), 2);
  EXPECT_EQ(Segments({CenterCrop{600, 600}, Resize{224, 224}}), 2);       // resize after padding
  EXPECT_EQ(Segments({RandomCrop{400, 400, {0, 0, 0, 0}, true}, Resize{100, 100}}), 2);
  EXPECT_EQ(Segments({RandomCrop{100, 100}, RandomHorizontalFlip{1.0}, CenterCrop{50, 50}}), 1);
  // Two paddings in a row share a pass only when they pad with the same value.
  EXPECT_EQ(Segments({RandomCrop{45, 45, {0, 0, 0, 0}, true}, CenterCrop{60, 60}}, 40, 30), 1);
  EXPECT_EQ(Segments({RandomCrop{45, 45, {0, 0, 0, 0}, true, {5, 6, 7}}, CenterCrop{60, 60}}, 40, 30), 2);
}

TEST(PlanTest, WarpsJoinTheSegmentTheyFollow) {
  const RandomRotation rot{{-20.0, 20.0}};
  EXPECT_EQ(Segments({Resize{268}, rot, RandomCrop{224, 224}, RandomHorizontalFlip{}}), 1);
  EXPECT_EQ(Segments({rot, Resize{100, 100}}), 2);                  // a resize of the warped image
  EXPECT_EQ(Segments({rot, rot}), 2);                               // a warp of the warped image
  EXPECT_EQ(Segments({rot, RandomResizedCrop{32, 32}}), 2);
  EXPECT_EQ(Segments({Pad{{3, 3, 3, 3}}, rot, CenterCrop{80, 80}, Pad{{2, 2, 2, 2}}}), 1);
  // Window padding with two fills after a warp materializes the first.
  EXPECT_EQ(Segments({rot, Pad{{2, 2, 2, 2}, {1, 1, 1}}, Pad{{2, 2, 2, 2}, {9, 9, 9}}}), 2);
  EXPECT_EQ(CreateStatus({Normalize{}, rot}).code(), StatusCode::kUnsupported);
  EXPECT_EQ(CreateStatus({RandomRotation{{0, 10}, Interpolation::kBicubic}}).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(CreateStatus({Resize{32, 32, 0, Interpolation::kNearest}}).ok());
  EXPECT_EQ(CreateStatus({RandomResizedCrop{32, 32, {0.08, 1.0}, {0.75, 4.0 / 3.0}, Interpolation::kNearest}}).code(),
            StatusCode::kInvalidArgument);

  // The seed pipeline's geometry on a 500 x 375 image: Resize(268) -> 357 x 268, read by the warp,
  // whose window is RandomCrop's draw, mirrored by the flip.
  Result<Plan> plan = Plan::Create({Resize{268}, rot, RandomCrop{224, 224}, RandomHorizontalFlip{1.0}});
  ASSERT_TRUE(plan.ok());
  SampleGeometry g;
  ASSERT_TRUE(plan->Draw(500, 375, SampleKey{1, 2, 3}, &g).ok());
  ASSERT_EQ(g.num_segments, 1);
  EXPECT_EQ(g.segments[0].x.resized_len, 357);
  EXPECT_EQ(g.segments[0].y.resized_len, 268);
  const WarpParams& w = g.warps[0];
  ASSERT_TRUE(w.enabled);
  EXPECT_EQ(w.src_w, 357);
  EXPECT_EQ(w.src_h, 268);
  // The resize makes only the window the warp reads (warp_window.h): narrower than 357 here.
  EXPECT_EQ(g.segments[0].x.out_off, w.src_x0);
  EXPECT_EQ(g.segments[0].y.out_off, w.src_y0);
  EXPECT_LT(g.segments[0].x.out_len, 357);
  EXPECT_LE(w.src_x0 + g.segments[0].x.out_len, 357);
  EXPECT_LE(w.src_y0 + g.segments[0].y.out_len, 268);
  EXPECT_EQ(g.out_width(0), 224);
  EXPECT_EQ(g.out_height(0), 224);
  SampleRng crop_rng(1, 2, 3, 2);
  AxisWindow wx, wy;
  ASSERT_TRUE(DrawRandomCrop(crop_rng, 357, 268, RandomCrop{224, 224}, &wx, &wy).ok());
  EXPECT_EQ(w.x.off, wx.start);
  EXPECT_EQ(w.y.off, wy.start);
  EXPECT_TRUE(w.x.flip);
  EXPECT_FALSE(w.y.flip);
  // The matrix is rotate(angle)'s: affine with -angle, the angle drawn as float32.
  SampleRng rot_rng(1, 2, 3, 1);
  const double angle = static_cast<float>(rot_rng.Uniform(-20.0, 20.0));
  const double rad = -angle * (3.14159265358979323846 / 180.0);
  EXPECT_NEAR(w.m[0], std::cos(rad), 1e-12);
  EXPECT_NEAR(w.m[1], std::sin(rad), 1e-12);
  EXPECT_NEAR(w.m[3], -std::sin(rad), 1e-12);
  EXPECT_DOUBLE_EQ(w.m[2], 0.0);
}

TEST(PlanTest, ResizeThenCenterCropGeometryMatchesTorchvision) {
  // torchvision on a 500x375 image: Resize(256) -> 341x256; CenterCrop(224):
  // left = round((341 - 224) / 2) = round(58.5) = 58, top = round(16.0) = 16.
  Result<Plan> plan = Plan::Create({Resize{256}, CenterCrop{224, 224}});
  ASSERT_TRUE(plan.ok());
  SampleGeometry g;
  ASSERT_TRUE(plan->Draw(500, 375, SampleKey{}, &g).ok());
  ASSERT_EQ(g.num_segments, 1);
  const ResizeParams& p = g.segments[0];
  EXPECT_EQ(p.x.in_lo, 0);
  EXPECT_EQ(p.x.in_hi, 500);
  EXPECT_EQ(p.x.origin, 0.0);
  EXPECT_DOUBLE_EQ(p.x.scale, 500.0 / 341.0);
  EXPECT_EQ(p.x.resized_len, 341);
  EXPECT_EQ(p.x.out_off, 58);
  EXPECT_EQ(p.x.out_len, 224);
  EXPECT_FALSE(p.x.flip);
  EXPECT_FALSE(p.x.identity);
  EXPECT_EQ(p.y.in_lo, 0);
  EXPECT_EQ(p.y.in_hi, 375);
  EXPECT_DOUBLE_EQ(p.y.scale, 375.0 / 256.0);
  EXPECT_EQ(p.y.resized_len, 256);
  EXPECT_EQ(p.y.out_off, 16);
  EXPECT_EQ(p.y.out_len, 224);
  EXPECT_EQ(p.filter, Filter::kBilinear);
  EXPECT_TRUE(p.antialias);
}

TEST(PlanTest, RandomResizedCropGeometryUsesTheDrawnWindow) {
  RandomResizedCrop rrc{224, 224};
  rrc.interpolation = Interpolation::kBicubic;
  rrc.antialias = false;
  Result<Plan> plan = Plan::Create({rrc});
  ASSERT_TRUE(plan.ok());
  for (uint64_t sample = 0; sample < 50; ++sample) {
    const SampleKey key{11, 4, sample};
    SampleGeometry g;
    ASSERT_TRUE(plan->Draw(500, 375, key, &g).ok());
    SampleRng rng(key.seed, key.epoch, key.sample, 0);  // op index 0: first in the list
    const Rect r = DrawResizedCropWindow(rng, 500, 375, rrc);
    const ResizeParams& p = g.segments[0];
    EXPECT_EQ(p.x.in_lo, r.x);
    EXPECT_EQ(p.x.in_hi, r.x + r.w);
    EXPECT_EQ(p.x.origin, r.x);
    EXPECT_DOUBLE_EQ(p.x.scale, r.w / 224.0);
    EXPECT_EQ(p.x.out_off, 0);
    EXPECT_EQ(p.x.out_len, 224);
    EXPECT_EQ(p.y.in_lo, r.y);
    EXPECT_EQ(p.y.in_hi, r.y + r.h);
    EXPECT_DOUBLE_EQ(p.y.scale, r.h / 224.0);
    EXPECT_EQ(p.filter, Filter::kBicubic);
    EXPECT_FALSE(p.antialias);
  }
}

TEST(PlanTest, FlipsToggleTheXAxis) {
  auto flip_of = [](std::vector<Transform> list) {
    Result<Plan> plan = Plan::Create(std::move(list));
    EXPECT_TRUE(plan.ok());
    SampleGeometry g;
    EXPECT_TRUE(plan->Draw(64, 48, SampleKey{5, 0, 9}, &g).ok());
    EXPECT_FALSE(g.segments[0].y.flip);
    return g.segments[static_cast<size_t>(g.num_segments - 1)].x.flip;
  };
  EXPECT_TRUE(flip_of({RandomResizedCrop{16, 16}, RandomHorizontalFlip{1.0}}));
  EXPECT_FALSE(flip_of({RandomResizedCrop{16, 16}, RandomHorizontalFlip{0.0}}));
  EXPECT_FALSE(flip_of({RandomResizedCrop{16, 16}, RandomHorizontalFlip{1.0}, RandomHorizontalFlip{1.0}}));
  EXPECT_TRUE(flip_of({RandomHorizontalFlip{1.0}, CenterCrop{16, 16}}));

  // p = 0.5: about half the samples flip, decided per sample.
  Result<Plan> plan = Plan::Create({CenterCrop{16, 16}, RandomHorizontalFlip{}});
  ASSERT_TRUE(plan.ok());
  int flipped = 0;
  for (uint64_t s = 0; s < 1000; ++s) {
    SampleGeometry g;
    ASSERT_TRUE(plan->Draw(64, 48, SampleKey{0, 0, s}, &g).ok());
    flipped += g.segments[0].x.flip ? 1 : 0;
    SampleRng rng(0, 0, s, 1);  // the flip's own stream: op index 1
    EXPECT_EQ(g.segments[0].x.flip, rng.Bernoulli(0.5));
  }
  EXPECT_NEAR(flipped, 500, 80);  // sd 16
}

TEST(PlanTest, VerticalFlipTogglesTheYAxisAndPadWidensTheWindow) {
  Result<Plan> plan = Plan::Create({CenterCrop{16, 20}, Pad{{1, 2, 3, 4}, {9, 8, 7}}, RandomVerticalFlip{1.0}});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->out_height(), 16 + 2 + 4);
  EXPECT_EQ(plan->out_width(), 20 + 1 + 3);
  SampleGeometry g;
  ASSERT_TRUE(plan->Draw(64, 48, SampleKey{}, &g).ok());
  ASSERT_EQ(g.num_segments, 1);  // crop, pad and flip: one pass
  const ResizeParams& p = g.segments[0];
  EXPECT_TRUE(p.y.flip);
  EXPECT_FALSE(p.x.flip);
  // x: the centre 20 of 64 (offset 22), one padding pixel before it: output 0 is padding.
  EXPECT_EQ(p.x.out_len, 24);
  EXPECT_EQ(p.x.origin + p.x.out_off, 22 - 1);
  // y: the centre 16 of 48 (offset 16), 2 rows above, 4 below, shown flipped: output row 0 is
  // the last padding row below the image.
  EXPECT_EQ(p.y.out_len, 22);
  EXPECT_EQ(p.y.origin + p.y.ResizedIndex(0), 16 + 16 + 4 - 1);
  EXPECT_EQ(p.y.origin + p.y.ResizedIndex(21), 16 - 2);
  EXPECT_EQ(p.fill[0], 9);
  EXPECT_EQ(p.fill[2], 7);
  // A variable-size list stays variable.
  Result<Plan> var = Plan::Create({Resize{32, 0}, Pad{{1, 1, 1, 1}}});
  ASSERT_TRUE(var.ok());
  EXPECT_FALSE(var->fixed_size());
}

bool SameMap(const AxisMap& a, const AxisMap& b) {
  return a.in_lo == b.in_lo && a.in_hi == b.in_hi && a.origin == b.origin && a.scale == b.scale &&
         a.resized_len == b.resized_len && a.out_off == b.out_off && a.out_len == b.out_len &&
         a.flip == b.flip && a.identity == b.identity;
}

bool SameGeometry(const SampleGeometry& a, const SampleGeometry& b) {
  if (a.num_segments != b.num_segments) return false;
  for (int i = 0; i < a.num_segments; ++i) {
    const ResizeParams &p = a.segments[static_cast<size_t>(i)], &q = b.segments[static_cast<size_t>(i)];
    if (!SameMap(p.x, q.x) || !SameMap(p.y, q.y) || p.filter != q.filter || p.antialias != q.antialias ||
        p.fill[0] != q.fill[0] || p.fill[1] != q.fill[1] || p.fill[2] != q.fill[2])
      return false;
  }
  return true;
}

TEST(PlanTest, RandomApplyDrawsItsTransformsTogetherOrNotAtAll) {
  // RandomApply{2, p} gates the ColorJitter and the flip after it; the Grayscale after the range
  // is always drawn. A nested RandomApply{1, 1.0} is applied whenever its outer one is.
  const ColorJitter jitter{{0.5, 1.5}, {1.0, 1.0}, {1.0, 1.0}, {0.0, 0.0}};
  for (double p : {0.0, 1.0, 0.3}) {
    Result<Plan> plan = Plan::Create({Resize{32, 32}, RandomApply{3, p}, jitter, RandomApply{1, 1.0},
                                      RandomHorizontalFlip{1.0}, RandomGrayscale{1.0}});
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    int applied = 0;
    for (uint64_t s = 0; s < 400; ++s) {
      SampleGeometry g;
      ASSERT_TRUE(plan->Draw(320, 240, SampleKey{1, 0, s}, &g).ok());
      const bool flipped = g.segments[0].x.flip;
      ASSERT_EQ(g.color.num_steps, flipped ? 2 : 1) << s;  // the jitter's brightness with the flip; gray always
      applied += flipped;
    }
    const double expected = p * 400, tolerance = p == 0.3 ? 30 : 0;  // 3.3 sigma at 0.3
    EXPECT_NEAR(applied, expected, tolerance) << p;
  }
}

TEST(PlanTest, RandomApplyErrorsNameTheProblem) {
  const auto error = [](std::vector<Transform> list) {
    Result<Plan> p = Plan::Create(std::move(list));
    return p.ok() ? std::string("ok") : p.status().ToString();
  };
  EXPECT_NE(error({Resize{32, 32}, RandomApply{2, 0.5}, RandomGrayscale{}}).find("RandomApply holds 1 transform(s) "
                                                                                 "more than the list has"),
            std::string::npos);
  EXPECT_NE(error({Resize{32, 32}, RandomApply{1, 0.5}, Normalize{}}).find("Normalize inside RandomApply"),
            std::string::npos);
  EXPECT_NE(error({Resize{64, 64}, RandomApply{1, 0.5}, CenterCrop{32, 32}}).find("change the output size"),
            std::string::npos);
  EXPECT_NE(error({Resize{32, 32}, RandomApply{1, 0.5}, RandomApply{2, 0.5}, RandomGrayscale{}, RandomGrayscale{}})
                .find("reach past the RandomApply around it"),
            std::string::npos);
  EXPECT_NE(error({Resize{32, 32}, RandomApply{0, 0.5}}).find("count must be at least 1"), std::string::npos);
  EXPECT_NE(error({Resize{32, 32}, RandomApply{1, 1.5}, RandomGrayscale{}}).find("RandomApply: p must be in"),
            std::string::npos);
  // A size-keeping geometric transform may be gated: a rotation of a fixed-size image.
  EXPECT_EQ(error({Resize{32, 32}, RandomApply{1, 0.5}, RandomRotation{{-10, 10}}}), "ok");
}

TEST(PlanTest, DrawIsDeterministicPerSampleKey) {
  Result<Plan> plan = Plan::Create({Resize{100}, RandomResizedCrop{32, 32}, RandomHorizontalFlip{},
                                    RandomCrop{28, 28, {2, 2, 2, 2}}});
  ASSERT_TRUE(plan.ok());
  int differ_sample = 0, differ_epoch = 0, differ_seed = 0;
  for (uint64_t s = 0; s < 100; ++s) {
    SampleGeometry a, b, c, d, e;
    ASSERT_TRUE(plan->Draw(320, 240, SampleKey{1, 2, s}, &a).ok());
    ASSERT_TRUE(plan->Draw(320, 240, SampleKey{1, 2, s}, &b).ok());
    ASSERT_TRUE(SameGeometry(a, b)) << s;
    ASSERT_TRUE(plan->Draw(320, 240, SampleKey{1, 2, s + 1}, &c).ok());
    ASSERT_TRUE(plan->Draw(320, 240, SampleKey{1, 3, s}, &d).ok());
    ASSERT_TRUE(plan->Draw(320, 240, SampleKey{2, 2, s}, &e).ok());
    differ_sample += SameGeometry(a, c) ? 0 : 1;
    differ_epoch += SameGeometry(a, d) ? 0 : 1;
    differ_seed += SameGeometry(a, e) ? 0 : 1;
  }
  EXPECT_GE(differ_sample, 98);
  EXPECT_GE(differ_epoch, 98);
  EXPECT_GE(differ_seed, 98);
}

TEST(PlanTest, DrawFailsWhenTheCropDoesNotFit) {
  Result<Plan> plan = Plan::Create({RandomCrop{100, 100}});
  ASSERT_TRUE(plan.ok());  // fits the 640x480 dry run
  SampleGeometry g;
  const Status s = plan->Draw(50, 37, SampleKey{}, &g);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("RandomCrop"), std::string::npos);
}

// ---- The plan's passes against torchvision's one-op-at-a-time semantics ----
//
// A simulator applies the list to real pixels one transform at a time, as torchvision does,
// with the same random draws (each transform's stream is its position in the list); every
// resize is a whole-image resize with the reference kernel. Running the plan's segments with
// the same reference kernel must give the same pixels.

struct Img {
  int w = 0, h = 0;
  std::vector<uint8_t> px;
  ImageView view() const { return ImageView{px.data(), h, w, 3, static_cast<ptrdiff_t>(w) * 3}; }
};

Img RandomImg(int w, int h, unsigned seed) {
  std::mt19937 gen(seed);
  Img im{w, h, std::vector<uint8_t>(static_cast<size_t>(w) * h * 3)};
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        im.px[(static_cast<size_t>(y) * w + x) * 3 + c] =
            static_cast<uint8_t>(((x * 11 + y * 5 + c * 70) % 256) ^ static_cast<int>(gen() % 16));
  return im;
}

Img SimCrop(const Img& in, int x0, int y0, int w, int h, std::array<uint8_t, 3> fill) {
  Img out{w, h, std::vector<uint8_t>(static_cast<size_t>(w) * h * 3)};
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) {
        const int sx = x0 + x, sy = y0 + y;
        out.px[(static_cast<size_t>(y) * w + x) * 3 + c] =
            sx >= 0 && sx < in.w && sy >= 0 && sy < in.h
                ? in.px[(static_cast<size_t>(sy) * in.w + sx) * 3 + c]
                : fill[static_cast<size_t>(c)];
      }
  return out;
}

Img SimFlip(const Img& in) {
  Img out = in;
  for (int y = 0; y < in.h; ++y)
    for (int x = 0; x < in.w; ++x)
      for (int c = 0; c < 3; ++c)
        out.px[(static_cast<size_t>(y) * in.w + x) * 3 + c] =
            in.px[(static_cast<size_t>(y) * in.w + (in.w - 1 - x)) * 3 + c];
  return out;
}

AxisMap WholeAxis(int len, int out) {
  AxisMap m;
  m.in_lo = 0;
  m.in_hi = len;
  m.scale = static_cast<double>(len) / out;
  m.resized_len = m.out_len = out;
  m.identity = len == out;
  return m;
}

Img SimResize(const Img& in, int w, int h, Interpolation interp, bool antialias) {
  ResizeParams p;
  p.x = WholeAxis(in.w, w);
  p.y = WholeAxis(in.h, h);
  p.filter = interp == Interpolation::kBicubic ? Filter::kBicubic : Filter::kBilinear;
  p.antialias = antialias;
  Img out{w, h, std::vector<uint8_t>(static_cast<size_t>(w) * h * 3)};
  ResizeRef(p, in.view(), MutableImageView{out.px.data(), h, w, 3, static_cast<ptrdiff_t>(w) * 3});
  return out;
}

Img Simulate(const Img& src, const std::vector<Transform>& list, const SampleKey& key) {
  Img im = src;
  for (size_t i = 0; i < list.size(); ++i) {
    SampleRng rng(key.seed, key.epoch, key.sample, static_cast<uint32_t>(i));
    const Transform& t = list[i];
    if (const auto* c = std::get_if<RandomResizedCrop>(&t)) {
      const Rect r = DrawResizedCropWindow(rng, im.w, im.h, *c);
      im = SimResize(SimCrop(im, r.x, r.y, r.w, r.h, {0, 0, 0}), c->width, c->height,
                     c->interpolation, c->antialias);
    } else if (const auto* r = std::get_if<Resize>(&t)) {
      int w, h;
      ResizedSize(im.w, im.h, *r, &w, &h);
      im = SimResize(im, w, h, r->interpolation, r->antialias);
    } else if (const auto* cc = std::get_if<CenterCrop>(&t)) {
      const AxisWindow x = CenterCropAxis(im.w, cc->width), y = CenterCropAxis(im.h, cc->height);
      im = SimCrop(im, x.start, y.start, x.size, y.size, {0, 0, 0});
    } else if (const auto* rc = std::get_if<RandomCrop>(&t)) {
      AxisWindow x, y;
      EXPECT_TRUE(DrawRandomCrop(rng, im.w, im.h, *rc, &x, &y).ok());
      im = SimCrop(im, x.start, y.start, x.size, y.size, rc->fill);
    } else if (const auto* f = std::get_if<RandomHorizontalFlip>(&t)) {
      if (rng.Bernoulli(f->p)) im = SimFlip(im);
    }
  }
  return im;
}

Img RunPlan(const Img& src, const Plan& plan, const SampleKey& key) {
  SampleGeometry g;
  EXPECT_TRUE(plan.Draw(src.w, src.h, key, &g).ok());
  Img im = src;
  for (int i = 0; i < g.num_segments; ++i) {
    const ResizeParams& p = g.segments[static_cast<size_t>(i)];
    Img out{p.x.out_len, p.y.out_len, std::vector<uint8_t>(static_cast<size_t>(p.x.out_len) * p.y.out_len * 3)};
    ResizeRef(p, im.view(),
              MutableImageView{out.px.data(), out.h, out.w, 3, static_cast<ptrdiff_t>(out.w) * 3});
    im = std::move(out);
  }
  return im;
}

void ExpectPlanMatchesSimulation(const std::vector<Transform>& list, int max_diff,
                                 const std::string& what) {
  Result<Plan> plan = Plan::Create(list);
  ASSERT_TRUE(plan.ok()) << what << ": " << plan.status().ToString();
  struct Size {
    int w, h;
  };
  int compared = 0;
  for (Size s : {Size{50, 37}, Size{37, 50}, Size{64, 64}}) {
    const Img src = RandomImg(s.w, s.h, static_cast<unsigned>(s.w * 100 + s.h));
    for (uint64_t sample = 0; sample < 25; ++sample) {
      const SampleKey key{3, 1, sample};
      const Img want = Simulate(src, list, key);
      const Img got = RunPlan(src, *plan, key);
      ASSERT_EQ(got.w, plan->out_width()) << what;
      ASSERT_EQ(got.h, plan->out_height()) << what;
      ASSERT_EQ(got.w, want.w) << what;
      ASSERT_EQ(got.h, want.h) << what;
      int worst = 0;
      for (size_t i = 0; i < got.px.size(); ++i) worst = std::max(worst, std::abs(got.px[i] - want.px[i]));
      ASSERT_LE(worst, max_diff) << what << ", image " << s.w << "x" << s.h << ", sample " << sample;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 75);
}

TEST(PlanTest, SegmentsReproduceTorchvisionSemantics) {
  // Exact: the plan composes crops, padding and flips into the maps, and a crop-then-resize uses
  // the same weights as resizing the materialized crop.
  ExpectPlanMatchesSimulation({RandomResizedCrop{24, 24}, RandomHorizontalFlip{}}, 0, "rrc+flip");
  ExpectPlanMatchesSimulation({Resize{20}, CenterCrop{16, 16}}, 0, "resize+center");
  ExpectPlanMatchesSimulation({Resize{20, 0, 0, Interpolation::kBicubic}, CenterCrop{18, 12}}, 0,
                              "bicubic resize+center");
  ExpectPlanMatchesSimulation({Resize{20}, RandomResizedCrop{12, 12}, RandomHorizontalFlip{}}, 0,
                              "resize+rrc+flip");
  ExpectPlanMatchesSimulation({RandomHorizontalFlip{}, CenterCrop{7, 9}}, 0, "flip+odd center");
  ExpectPlanMatchesSimulation({CenterCrop{60, 60}, Resize{24, 24}}, 0, "padded center+resize");
  ExpectPlanMatchesSimulation({RandomCrop{30, 40, {3, 1, 2, 4}, false, {9, 8, 7}}, Resize{12, 16}},
                              0, "padded random crop+resize");
  ExpectPlanMatchesSimulation({RandomCrop{56, 56, {0, 0, 0, 0}, true, {1, 2, 3}}, RandomHorizontalFlip{},
                               CenterCrop{40, 30}},
                              0, "pad_if_needed+flip+center");
  // Padding keeps the fill of the crop that made it, whatever later crops do.
  ExpectPlanMatchesSimulation({CenterCrop{60, 60}, RandomCrop{50, 50, {0, 0, 0, 0}, false, {9, 9, 9}}},
                              0, "zero padding then a random crop inside it");
  ExpectPlanMatchesSimulation({RandomCrop{45, 45, {0, 0, 0, 0}, true, {5, 6, 7}}, CenterCrop{60, 60}},
                              0, "two paddings with different fills");
  ExpectPlanMatchesSimulation({Resize{30, 30}, Resize{20, 20}}, 0, "two resizes");
  ExpectPlanMatchesSimulation({RandomResizedCrop{20, 20, {0.3, 1.0}, {0.5, 2.0}, Interpolation::kBicubic, false},
                               RandomCrop{16, 16}},
                              0, "bicubic rrc without antialias+random crop");
  ExpectPlanMatchesSimulation({CenterCrop{30, 30}, RandomHorizontalFlip{}, Resize{20}, CenterCrop{18, 18}},
                              0, "crop+flip+resize+crop");
  // A flip before a resize reverses the filter's sampling positions: mirrored weights are equal
  // in exact arithmetic but may differ in the last bit, so allow one level.
  ExpectPlanMatchesSimulation({RandomHorizontalFlip{}, RandomResizedCrop{24, 24}}, 1, "flip+rrc");
}

TEST(PlanTest, ChoiceAndOrderRangesMustFollowTheirMarker) {
  const ColorJitter bright{{1.5, 1.5}};
  const RandomGrayscale gray{1.0};
  EXPECT_TRUE(CreateStatus({RandomChoice{2, {1, 1}}, ChoiceOption{1}, bright, ChoiceOption{1}, gray}).ok());
  EXPECT_TRUE(CreateStatus({RandomOrder{2}, OrderItem{1}, bright, OrderItem{0}}).ok());
  const struct {
    std::vector<Transform> list;
    std::string message;
  } bad[] = {
      {{ChoiceOption{1}, bright}, "ChoiceOption must follow its RandomChoice"},
      {{RandomChoice{2, {1, 1}}, ChoiceOption{1}, bright}, "RandomChoice expects 1 more range(s)"},
      {{RandomChoice{2, {1, 1}}, ChoiceOption{1}, bright, OrderItem{1}, gray}, "OrderItem must follow its RandomOrder"},
      {{RandomOrder{1}, OrderItem{1}, CenterCrop{8, 8}}, "RandomOrder of CenterCrop is not supported"},
      {{RandomChoice{1, {1}}, ChoiceOption{3}, bright}, "RandomChoice holds 2 transform(s) more than the list has"},
  };
  for (const auto& c : bad) {
    const Status s = CreateStatus(c.list);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s.message();
  }
}

TEST(PlanTest, ChoiceDrawsOneOptionAndOrderEveryItem) {
  const ColorJitter bright{{1.5, 1.5}};
  const RandomGrayscale gray{1.0};
  const RandomSolarize solar{100.0, 1.0};
  Result<Plan> plan = Plan::Create({RandomChoice{2, {1, 3}}, ChoiceOption{1}, bright, ChoiceOption{2}, gray, solar,
                                    RandomOrder{2}, OrderItem{1}, ColorJitter{{1.0, 1.0}, {0.5, 0.5}}, OrderItem{0}});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  int second = 0, contrast_last = 0;
  for (uint64_t i = 0; i < 400; ++i) {
    SampleGeometry g;
    ASSERT_TRUE(plan->Draw(40, 30, SampleKey{7, 0, i}, &g).ok());
    const ColorOps& c = g.color;
    ASSERT_TRUE(c.num_steps == 2 || c.num_steps == 3) << c.num_steps;  // one option, then the contrast
    if (c.num_steps == 3) {
      ++second;
      EXPECT_EQ(c.steps[0].kind, ColorKind::kGrayscale);
      EXPECT_EQ(c.steps[1].kind, ColorKind::kSolarize);
    } else {
      EXPECT_EQ(c.steps[0].kind, ColorKind::kBrightness);
    }
    contrast_last += c.steps[c.num_steps - 1].kind == ColorKind::kContrast;
  }
  EXPECT_NEAR(second, 300, 40);  // weights 1:3
  EXPECT_EQ(contrast_last, 400);  // the empty item moves nothing
}

}  // namespace
}  // namespace sluice
