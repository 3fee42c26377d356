// The nvJPEG routes against libjpeg-turbo (ImageDecoder) on the same files and regions. GPU
// decoders differ from libjpeg-turbo's ISLOW IDCT and fancy upsampling by a few levels, so the
// bounds are on the mean and the 99th percentile of |difference|. Skipped without a GPU.
#include "codec/nvjpeg_decoders.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "codec/decoder.h"
#include "codec/engine_call_split.h"
#include "codec/jpeg_cpu.h"
#include "codec/padded_run.h"
#include "core/clock.h"
#include "gpu/cuda_util.h"
#include "gpu/device.h"

namespace sluice {
namespace {

// A photo-like picture: smooth shapes plus sensor noise.
std::vector<uint8_t> Photo(int w, int h, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, 6.0);
  std::vector<uint8_t> p(static_cast<size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) {
        const double v = 128 + 80 * std::sin(x / (9.0 + 3 * c) + y / 13.0) + 40 * std::cos(y / (7.0 + c)) + noise(rng);
        p[(static_cast<size_t>(y) * w + x) * 3 + c] = static_cast<uint8_t>(std::clamp(v, 0.0, 255.0));
      }
  return p;
}

struct Diff {
  double mean = 0, p99 = 0;
};

Diff Compare(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  std::vector<int> d(a.size());
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += d[i] = std::abs(int(a[i]) - int(b[i]));
  std::sort(d.begin(), d.end());
  return Diff{sum / static_cast<double>(a.size()), static_cast<double>(d[d.size() * 99 / 100])};
}

class NvjpegTest : public ::testing::Test {
 protected:
  static constexpr int kMaxSide = 1024;  // the engines' side limit (CheckRoute's files are smaller)

  void SetUp() override {
    if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    auto pool = DevicePool::Create(0, int64_t{1} << 30);
    ASSERT_TRUE(pool.ok()) << pool.status().ToString();
    pool_ = *pool;
    auto ctx = NvjpegContext::Create(pool_.get());
    ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
    ctx_ = std::move(*ctx);
  }
  void TearDown() override {
    ctx_.reset();
    pool_.reset();
  }

  // libjpeg-turbo's pixels for `roi` (the decoder may return a wider region; cut it down).
  static std::vector<uint8_t> CpuRegion(const std::vector<uint8_t>& jpg, Rect roi) {
    ImageDecoder dec;
    EXPECT_TRUE(dec.ReadHeader(jpg.data(), jpg.size()).ok());
    std::vector<uint8_t> px;
    Result<Rect> got = dec.Decode(DecodeRequest{roi, 1}, &px);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    std::vector<uint8_t> out(static_cast<size_t>(roi.w) * roi.h * 3);
    for (int y = 0; y < roi.h; ++y)
      std::copy_n(px.data() + (static_cast<size_t>(y + roi.y - got->y) * got->w + (roi.x - got->x)) * 3,
                  static_cast<size_t>(roi.w) * 3, out.data() + static_cast<size_t>(y) * roi.w * 3);
    return out;
  }

  // Decodes `jpgs` (one ROI each) with the hardware (batched; `hw`, or a new decoder) or hybrid
  // decoder.
  std::vector<std::vector<uint8_t>> GpuRegions(const std::vector<std::vector<uint8_t>>& jpgs,
                                               const std::vector<Rect>& rois, bool hardware,
                                               NvjpegHardwareDecoder* hw = nullptr) {
    CudaStream stream;
    EXPECT_TRUE(stream.Create().ok());
    std::vector<NvjpegJob> jobs;
    std::vector<uint8_t*> bufs;
    for (size_t i = 0; i < jpgs.size(); ++i) {
      uint8_t* d = nullptr;
      EXPECT_EQ(cudaMalloc(&d, static_cast<size_t>(rois[i].w) * rois[i].h * 3), cudaSuccess);
      bufs.push_back(d);
      jobs.push_back(NvjpegJob{jpgs[i].data(), jpgs[i].size(), rois[i], d, static_cast<size_t>(rois[i].w) * 3});
    }
    if (hardware) {
      std::unique_ptr<NvjpegHardwareDecoder> own;
      if (hw == nullptr) {
        auto made = NvjpegHardwareDecoder::Create(ctx_.get(), 32, kMaxSide);
        EXPECT_TRUE(made.ok()) << made.status().ToString();
        own = std::move(*made);
        hw = own.get();
      }
      const Status s = hw->Decode(jobs, stream.get());
      EXPECT_TRUE(s.ok()) << s.ToString();
      EXPECT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
    } else {
      auto hy = NvjpegHybridDecoder::Create(ctx_.get(), 1);
      EXPECT_TRUE(hy.ok()) << hy.status().ToString();
      for (const NvjpegJob& j : jobs) {
        const Status s = (*hy)->Decode(0, j, stream.get());
        EXPECT_TRUE(s.ok()) << s.ToString();
      }
      EXPECT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
    }
    std::vector<std::vector<uint8_t>> out;
    for (size_t i = 0; i < jobs.size(); ++i) {
      out.emplace_back(static_cast<size_t>(rois[i].w) * rois[i].h * 3);
      EXPECT_EQ(cudaMemcpy(out.back().data(), bufs[i], out.back().size(), cudaMemcpyDeviceToHost), cudaSuccess);
      cudaFree(bufs[i]);
    }
    return out;
  }

  // `count` files of the three subsamplings and various sizes, decoded in one call.
  void CheckRoute(bool hardware, bool progressive, NvjpegHardwareDecoder* hw = nullptr, int count = 6) {
    std::vector<std::vector<uint8_t>> jpgs;
    std::vector<Rect> rois;
    const char* subs[] = {"444", "420", "422"};
    for (int i = 0; i < count; ++i) {
      const int k = i % 20;  // sizes repeat: within the engines' side limit however many files
      const int w = 200 + 37 * k, h = 150 + 23 * k;
      const std::vector<uint8_t> px = Photo(w, h, static_cast<uint32_t>(i));
      auto jpg = EncodeJpeg(ImageView{px.data(), h, w, 3, static_cast<ptrdiff_t>(w) * 3}, 90, subs[i % 3], progressive);
      ASSERT_TRUE(jpg.ok());
      jpgs.push_back(*jpg);
      // Whole image, then regions at odd offsets (not on MCU boundaries).
      rois.push_back(k == 0 ? Rect{0, 0, w, h} : Rect{5 * k + 3, 7 * k + 1, w / 2 + k, h / 2 - k});
    }
    const auto gpu = GpuRegions(jpgs, rois, hardware, hw);
    for (size_t i = 0; i < jpgs.size(); ++i) {
      const Diff d = Compare(gpu[i], CpuRegion(jpgs[i], rois[i]));
      // Bounds: IDCT differences (4:4:4), plus nvJPEG's different chroma upsampling for 4:2:x
      // (measured up to a mean of 2.8 and a 99th percentile of 32 on noisy pictures); a region
      // one pixel off gives a mean of 9-13 levels, a colour swap 20-40.
      const bool full_chroma = i % 3 == 0;
      EXPECT_LE(d.mean, full_chroma ? 1.5 : 4.0) << "image " << i << " (" << subs[i % 3] << ")";
      EXPECT_LE(d.p99, full_chroma ? 8 : 40) << "image " << i << " (" << subs[i % 3] << ")";
    }
  }

  // A hardware decoder with the states' slots bounded and a call width of at least min_width
  // images; nullptr (a failed expectation) if it cannot be made.
  std::unique_ptr<NvjpegHardwareDecoder> BoundedDecoder(int min_width, std::shared_ptr<EngineStatePool> pool = nullptr) {
    const int engines = ctx_->hardware_engines();
    auto hw = NvjpegHardwareDecoder::Create(ctx_.get(), (min_width + engines - 1) / engines, kMaxSide,
                                            EnginePads::kTinyJpegBoundedSlots, std::move(pool));
    EXPECT_TRUE(hw.ok()) << hw.status().ToString();
    if (!hw.ok()) return nullptr;
    EXPECT_GE((*hw)->batch_width(), min_width);
    return std::move(hw).value();
  }

  std::shared_ptr<DevicePool> pool_;
  std::unique_ptr<NvjpegContext> ctx_;
};

TEST_F(NvjpegTest, HardwareRegionsMatchLibjpegTurbo) {
  if (ctx_->hardware_handle() == nullptr) GTEST_SKIP() << ctx_->hardware_status().ToString();
  EXPECT_GE(ctx_->hardware_engines(), 1);
  CheckRoute(/*hardware=*/true, /*progressive=*/false);
}

// A call shorter than an initialized state fills it up with pads instead of initializing a
// state of its own (which took 0.1-0.2 s on H200s), and still gives each image its pixels.
TEST_F(NvjpegTest, HardwareShortCallsArePaddedIntoAnInitializedState) {
  if (ctx_->hardware_handle() == nullptr) GTEST_SKIP() << ctx_->hardware_status().ToString();
  auto hw = NvjpegHardwareDecoder::Create(ctx_.get(), 32, kMaxSide);
  ASSERT_TRUE(hw.ok()) << hw.status().ToString();
  NvjpegHardwareDecoder& d = **hw;
  CheckRoute(/*hardware=*/true, false, &d, 6);
  EXPECT_EQ(d.state_initializations(), 1);
  const int64_t state_ns = d.state_ns();  // making it took time, within the engines' turn
  EXPECT_GT(state_ns, 0);
  EXPECT_LE(state_ns, d.busy_ns());
  CheckRoute(/*hardware=*/true, false, &d, 2);  // 2 images + 4 pads
  CheckRoute(/*hardware=*/true, false, &d, 1);  // 1 image + 5 pads
  EXPECT_EQ(d.state_initializations(), 1);
  EXPECT_EQ(d.state_ns(), state_ns);  // padded calls touch no state
  CheckRoute(/*hardware=*/true, false, &d, 8);  // larger: a state of its own
  EXPECT_EQ(d.state_initializations(), 2);
  CheckRoute(/*hardware=*/true, false, &d, 5);  // the smallest state that fits: the 6's
  CheckRoute(/*hardware=*/true, false, &d, 7);  // the 8's
  EXPECT_EQ(d.state_initializations(), 2);
}

// Pads are whole files the engines decode: a call more than kMaxPads below every state gets a
// state of its own (a call of 128 in a state of 208 would do about 1.3x the work).
TEST_F(NvjpegTest, HardwareCallsFarBelowAStateGetAStateOfTheirOwn) {
  if (ctx_->hardware_handle() == nullptr) GTEST_SKIP() << ctx_->hardware_status().ToString();
  constexpr int kPads = NvjpegHardwareDecoder::kMaxPads;
  auto hw = NvjpegHardwareDecoder::Create(ctx_.get(), kPads + 8, kMaxSide);
  ASSERT_TRUE(hw.ok()) << hw.status().ToString();
  NvjpegHardwareDecoder& d = **hw;
  ASSERT_TRUE(d.Reserve(kPads + 8).ok());
  CheckRoute(/*hardware=*/true, false, &d, 8);  // kMaxPads pads
  EXPECT_EQ(d.state_initializations(), 1);
  CheckRoute(/*hardware=*/true, false, &d, 7);  // one more: a state of 7
  EXPECT_EQ(d.state_initializations(), 2);
  CheckRoute(/*hardware=*/true, false, &d, 6);  // in the 7's, one pad
  EXPECT_EQ(d.state_initializations(), 2);
}

// EnginePads::kTinyJpeg: the pads are a 16 x 16 JPEG instead of the call's smallest file; the
// engines take it beside files of every subsampling, and each image still gets its pixels.
TEST_F(NvjpegTest, HardwareShortCallsArePaddedWithATinyJpeg) {
  if (ctx_->hardware_handle() == nullptr) GTEST_SKIP() << ctx_->hardware_status().ToString();
  auto hw = NvjpegHardwareDecoder::Create(ctx_.get(), 32, kMaxSide, EnginePads::kTinyJpeg);
  ASSERT_TRUE(hw.ok()) << hw.status().ToString();
  NvjpegHardwareDecoder& d = **hw;
  ASSERT_TRUE(d.Reserve(9).ok());
  CheckRoute(/*hardware=*/true, false, &d, 7);  // 7 images + 2 pads
  CheckRoute(/*hardware=*/true, false, &d, 1);  // 1 image + 8 pads
  CheckRoute(/*hardware=*/true, false, &d, 9);  // none
  EXPECT_EQ(d.state_initializations(), 1);
  EXPECT_EQ(d.calls(), 3);
}

// EnginePads::kTinyJpegBoundedSlots: the states hold at most batch_width() + kMaxPads image
// slots; past that, a call that no state holds takes the least recently used state (initialized
// again) and older ones are destroyed; every image still gets its pixels.
TEST_F(NvjpegTest, HardwareStatesKeepTheirSlotsWithinTheBound) {
  if (ctx_->hardware_handle() == nullptr) GTEST_SKIP() << ctx_->hardware_status().ToString();
  constexpr int kPads = NvjpegHardwareDecoder::kMaxPads;
  const std::unique_ptr<NvjpegHardwareDecoder> hw = BoundedDecoder(2 * kPads + 2);
  ASSERT_NE(hw, nullptr);
  NvjpegHardwareDecoder& d = *hw;
  const int w = d.batch_width();
  auto call = [&](int n, int inits, int slots) {
    CheckRoute(/*hardware=*/true, false, &d, n);
    EXPECT_EQ(d.state_initializations(), inits) << "after a call of " << n;
    EXPECT_EQ(d.state_slots(), slots) << "after a call of " << n;
    EXPECT_LE(d.state_slots(), w + kPads);
  };
  call(w, 1, w);
  call(w - kPads, 1, w);                    // kMaxPads tiny pads
  call(8, 2, w + 8);                        // a state of its own fits beside it
  call(w - kPads - 1, 3, w - kPads - 1 + 8);  // the w's, least recently used, initialized again
  call(w, 4, w);                            // the 8's again; the (w - kMaxPads - 1)'s destroyed
  call(8, 5, w + 8);
  call(w, 5, w + 8);
}

// kTinyJpegBoundedSlots: a call size padded PaddedRun::kCalls calls in a row (a share `auto`
// holds) gets a state of its own within the bound, and the calls after it decode no pads; every
// image still gets its pixels.
TEST_F(NvjpegTest, HardwareCallsPaddedCallAfterCallGetAStateOfTheirOwn) {
  if (ctx_->hardware_handle() == nullptr) GTEST_SKIP() << ctx_->hardware_status().ToString();
  constexpr int kPads = NvjpegHardwareDecoder::kMaxPads, kRun = PaddedRun::kCalls;
  auto pool = std::make_shared<EngineStatePool>(ctx_.get(), 2);  // room for two states
  const std::unique_ptr<NvjpegHardwareDecoder> hw = BoundedDecoder(2 * kPads + 2, pool);
  ASSERT_NE(hw, nullptr);
  NvjpegHardwareDecoder& d = *hw;
  const int w = d.batch_width(), n = w - kPads / 2;
  CheckRoute(/*hardware=*/true, false, &d, w);
  for (int i = 1; i < kRun; ++i) CheckRoute(/*hardware=*/true, false, &d, n);  // in the w's, padded
  EXPECT_EQ(d.state_initializations(), 1);
  EXPECT_EQ(d.pads_decoded(), (kRun - 1) * (w - n));
  CheckRoute(/*hardware=*/true, false, &d, n);  // the kRun-th in a row: a state of n
  EXPECT_EQ(d.state_initializations(), 2);
  EXPECT_EQ(d.state_sizes(), (std::vector<int>{w, n}));
  CheckRoute(/*hardware=*/true, false, &d, n);
  CheckRoute(/*hardware=*/true, false, &d, w);  // both sizes kept
  EXPECT_EQ(d.state_initializations(), 2);
  EXPECT_EQ(d.pads_decoded(), (kRun - 1) * (w - n));
}

// ... but not where the new state would not fit beside the one it was padded into (one decoder's
// bound, w + kMaxPads): two sizes taking turns would initialize each other's state every time.
TEST_F(NvjpegTest, HardwareCallsPaddedCallAfterCallKeepTheirStateWhereTwoWouldNotFit) {
  if (ctx_->hardware_handle() == nullptr) GTEST_SKIP() << ctx_->hardware_status().ToString();
  constexpr int kPads = NvjpegHardwareDecoder::kMaxPads;
  const std::unique_ptr<NvjpegHardwareDecoder> hw = BoundedDecoder(2 * kPads + 2);
  ASSERT_NE(hw, nullptr);
  NvjpegHardwareDecoder& d = *hw;
  const int w = d.batch_width(), n = w - kPads / 2;
  ASSERT_GT(w + n, d.slot_bound());
  CheckRoute(/*hardware=*/true, false, &d, w);
  for (int i = 0; i < 2 * PaddedRun::kCalls; ++i) CheckRoute(/*hardware=*/true, false, &d, n);
  EXPECT_EQ(d.state_initializations(), 1);
  EXPECT_EQ(d.pads_decoded(), 2 * PaddedRun::kCalls * (w - n));
}

// Two decoders on one pool (the GPU path's two engine threads): a call size either initialized
// serves the other, on other streams, and two sizes fit side by side within twice one decoder's
// bound, so going back and forth between them initializes nothing; every image gets its pixels.
TEST_F(NvjpegTest, HardwareDecodersSharingAPoolInitializeEachSizeOnce) {
  if (ctx_->hardware_handle() == nullptr) GTEST_SKIP() << ctx_->hardware_status().ToString();
  constexpr int kPads = NvjpegHardwareDecoder::kMaxPads;
  auto pool = std::make_shared<EngineStatePool>(ctx_.get(), 2);
  std::unique_ptr<NvjpegHardwareDecoder> a = BoundedDecoder(2 * kPads + 2, pool);
  std::unique_ptr<NvjpegHardwareDecoder> b = BoundedDecoder(2 * kPads + 2, pool);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  const int w = a->batch_width();
  EXPECT_EQ(a->slot_bound(), 2 * (w + kPads));
  const int small = w - kPads - 1;  // too far below w for pads: a state of its own
  auto call = [&](NvjpegHardwareDecoder& d, int n) { CheckRoute(/*hardware=*/true, false, &d, n); };
  call(*a, w);
  EXPECT_EQ(a->state_initializations(), 1);
  call(*b, w);
  EXPECT_EQ(b->state_initializations(), 0);  // a's state, after a's call on another stream
  call(*b, small);
  call(*a, small);
  EXPECT_EQ(b->state_initializations(), 1);
  EXPECT_EQ(a->state_initializations(), 1);
  for (int round = 0; round < 2; ++round) {
    call(*a, w);
    call(*b, small);
    call(*b, w);
    call(*a, small);
  }
  EXPECT_EQ(a->state_initializations() + b->state_initializations(), 2);
  EXPECT_EQ(a->state_slots(), w + small);
  EXPECT_EQ(b->state_sizes(), (std::vector<int>{w, small}));
  // The pool outlives the first decoder to go: the other still decodes in its states.
  pool.reset();
  a.reset();
  call(*b, w);
  EXPECT_EQ(b->state_initializations(), 1);
}

// EngineCallSizes with full_calls_first on a real decoder: a turn a little larger than the width,
// after calls of the full width, goes as a full call plus the rest, which fit the bound beside
// the state of the width: one state more, none initialized again (balanced calls of about half
// the width would have taken the width's state, and given it back on the next full call).
TEST_F(NvjpegTest, HardwareFullCallsFirstMakeNoStateAgain) {
  if (ctx_->hardware_handle() == nullptr) GTEST_SKIP() << ctx_->hardware_status().ToString();
  constexpr int kPads = NvjpegHardwareDecoder::kMaxPads;
  // A width past 2 * kMaxPads + 8: half of w + 8 is more than kMaxPads short of w.
  const std::unique_ptr<NvjpegHardwareDecoder> hw = BoundedDecoder(2 * kPads + 9);
  ASSERT_NE(hw, nullptr);
  NvjpegHardwareDecoder& d = *hw;
  const int w = d.batch_width();
  EXPECT_EQ(d.slot_bound(), w + kPads);
  CheckRoute(/*hardware=*/true, false, &d, w);
  EXPECT_EQ(d.state_sizes(), std::vector<int>{w});
  for (int round = 0; round < 2; ++round) {
    const std::vector<int> sizes = EngineCallSizes(w + 8, w, d.state_sizes(), d.slot_bound(), kPads, true);
    ASSERT_EQ(sizes, (std::vector<int>{w, 8}));
    for (int n : sizes) CheckRoute(/*hardware=*/true, false, &d, n);
    CheckRoute(/*hardware=*/true, false, &d, w);  // back to full calls
    EXPECT_EQ(d.state_initializations(), 2) << "round " << round;
    EXPECT_EQ(d.state_slots(), w + 8);
  }
  EXPECT_EQ(EngineCallSizes(w + 8, w, d.state_sizes(), d.slot_bound(), kPads, false),
            (std::vector<int>{(w + 9) / 2, (w + 8) / 2}));
}

TEST_F(NvjpegTest, HardwareStatesCanBeReservedAhead) {
  if (ctx_->hardware_handle() == nullptr) GTEST_SKIP() << ctx_->hardware_status().ToString();
  auto hw = NvjpegHardwareDecoder::Create(ctx_.get(), 32, kMaxSide);
  ASSERT_TRUE(hw.ok()) << hw.status().ToString();
  NvjpegHardwareDecoder& d = **hw;
  ASSERT_TRUE(d.Reserve(6).ok());
  ASSERT_TRUE(d.Reserve(6).ok());  // there already
  EXPECT_EQ(d.state_initializations(), 1);
  CheckRoute(/*hardware=*/true, false, &d, 6);  // uses it
  EXPECT_EQ(d.state_initializations(), 1);
  EXPECT_EQ(d.Reserve(0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(d.Reserve(d.batch_width() + 1).code(), StatusCode::kInvalidArgument);
  for (int n = 1; n <= NvjpegHardwareDecoder::kMaxStates; ++n) ASSERT_TRUE(d.Reserve(n).ok()) << n;
  EXPECT_EQ(d.Reserve(NvjpegHardwareDecoder::kMaxStates + 1).code(), StatusCode::kResourceExhausted);
  // Past the limit, a longer call is cut into calls of the largest state (no state is initialized
  // again: that frees device memory), and still gives each image its pixels.
  const int64_t inits = d.state_initializations();
  CheckRoute(/*hardware=*/true, false, &d, NvjpegHardwareDecoder::kMaxStates + 3);
  EXPECT_EQ(d.state_initializations(), inits);
}

TEST_F(NvjpegTest, HardwareDecoderNeedsAPositiveMaxSide) {
  if (ctx_->hardware_handle() == nullptr) GTEST_SKIP() << ctx_->hardware_status().ToString();
  EXPECT_EQ(NvjpegHardwareDecoder::Create(ctx_.get(), 32, 0).status().code(), StatusCode::kInvalidArgument);
}

// busy_ns counts the time calls held the engines: some for a call, none while idle, never more
// than the time around the calls.
TEST_F(NvjpegTest, HardwareBusyTimeCountsTheCallsOnly) {
  if (ctx_->hardware_handle() == nullptr) GTEST_SKIP() << ctx_->hardware_status().ToString();
  auto hw = NvjpegHardwareDecoder::Create(ctx_.get(), 32, kMaxSide);
  ASSERT_TRUE(hw.ok()) << hw.status().ToString();
  NvjpegHardwareDecoder& d = **hw;
  EXPECT_EQ(d.busy_ns(), 0);
  const int64_t t0 = NowNs();
  CheckRoute(/*hardware=*/true, false, &d, 6);
  CheckRoute(/*hardware=*/true, false, &d, 3);
  const int64_t around = NowNs() - t0;
  const int64_t busy = d.busy_ns();
  EXPECT_GT(busy, 0);
  EXPECT_LE(busy, around);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(d.busy_ns(), busy);
}

TEST_F(NvjpegTest, HybridRegionsMatchLibjpegTurboBaselineAndProgressive) {
  CheckRoute(/*hardware=*/false, /*progressive=*/false);
  CheckRoute(/*hardware=*/false, /*progressive=*/true);
}

TEST_F(NvjpegTest, HybridRejectsGarbageWithAnError) {
  auto hy = NvjpegHybridDecoder::Create(ctx_.get(), 1);
  ASSERT_TRUE(hy.ok());
  std::vector<uint8_t> junk(4096);
  for (size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<uint8_t>(i * 31 + 7);
  junk[0] = 0xFF, junk[1] = 0xD8;  // a JPEG signature, then nothing valid
  uint8_t* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 64 * 64 * 3), cudaSuccess);
  const Status s = (*hy)->Decode(0, NvjpegJob{junk.data(), junk.size(), Rect{0, 0, 64, 64}, d, 64 * 3}, nullptr);
  EXPECT_FALSE(s.ok());
  cudaDeviceSynchronize();
  cudaFree(d);
}

TEST(NvjpegRouting, WhichFilesEachRouteTakes) {
  ImageInfo info;
  info.format = ImageFormat::kJpeg;
  info.components = 3;
  info.subsampling = "420";
  EXPECT_TRUE(HardwareDecodable(info));
  EXPECT_TRUE(HybridDecodable(info));
  info.progressive = true;
  EXPECT_FALSE(HardwareDecodable(info));
  EXPECT_TRUE(HybridDecodable(info));
  info.progressive = false;
  info.subsampling = "411";
  EXPECT_FALSE(HardwareDecodable(info));
  info.components = 4;  // CMYK: the CPU converts it as PIL does
  EXPECT_FALSE(HybridDecodable(info));
  info.components = 1;
  info.subsampling = "gray";
  EXPECT_FALSE(HardwareDecodable(info));
  EXPECT_TRUE(HybridDecodable(info));
  info.format = ImageFormat::kPng;
  EXPECT_FALSE(HybridDecodable(info));
}

TEST(NvjpegRouting, TheEnginesTakeNoSideAboveTheirPreallocation) {
  ImageInfo info;
  info.format = ImageFormat::kJpeg;
  info.components = 3;
  info.subsampling = "444";
  info.width = 1024, info.height = 768;
  EXPECT_TRUE(EnginesTake(info, 1024));
  EXPECT_FALSE(EnginesTake(info, 1023));
  info.width = 700, info.height = 1025;
  EXPECT_FALSE(EnginesTake(info, 1024));
  info.height = 1024;
  info.progressive = true;
  EXPECT_FALSE(EnginesTake(info, 1024));
}

}  // namespace
}  // namespace sluice
