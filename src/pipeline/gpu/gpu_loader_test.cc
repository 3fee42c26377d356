// The GPU path end to end (Loader with device cuda) against the CPU path on the same files and
// seed: same samples, labels and crop windows; pixels within the decoders' tolerance; bad files
// raise naming the file, or are skipped and listed, as on the CPU. Skipped without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "codec/jpeg_cpu.h"
#include "core/half.h"
#include "gpu/device.h"
#include "sluice/loader.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
namespace T = sluice::transforms;

void Write(const fs::path& p, const std::vector<uint8_t>& bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                           static_cast<std::streamsize>(bytes.size()));
}

class GpuLoaderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string tmpl = (fs::temp_directory_path() / "sluice_gpu_loader_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = new std::string(tmpl);
    std::mt19937 rng(5);
    std::normal_distribution<double> noise(0.0, 5.0);
    const char* subs[] = {"444", "420", "422"};
    for (int i = 0; i < 24; ++i) {
      const int w = 160 + 11 * i, h = 120 + 7 * (i % 9);
      std::vector<uint8_t> px(static_cast<size_t>(w) * h * 3);
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
          for (int c = 0; c < 3; ++c)
            px[(static_cast<size_t>(y) * w + x) * 3 + c] = static_cast<uint8_t>(std::clamp(
                128 + 90 * std::sin(x / (6.0 + c + i % 5) + y / 11.0) + noise(rng), 0.0, 255.0));
      // Every fifth file progressive, one with an EXIF rotation: these take fallback routes.
      auto jpg = EncodeJpeg(ImageView{px.data(), h, w, 3, static_cast<ptrdiff_t>(w) * 3}, 92, subs[i % 3],
                            i % 5 == 4, i == 7 ? 6 : 1);
      ASSERT_TRUE(jpg.ok());
      Write(fs::path(*root_) / "data" / (i % 2 ? "b" : "a") / (std::to_string(i) + ".jpg"), *jpg);
      if (i == 3) {
        Write(fs::path(*root_) / "bad" / "a" / "good.jpg", *jpg);
        Write(fs::path(*root_) / "bad" / "a" / "truncated.jpg",
              std::vector<uint8_t>(jpg->begin(), jpg->begin() + static_cast<ptrdiff_t>(jpg->size() / 2)));
        Write(fs::path(*root_) / "bad" / "b" / "empty.jpg", {});
      }
    }
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(*root_, ec);
    delete root_;
  }
  void SetUp() override {
    if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  }

  static std::vector<Batch> Run(const std::string& dir, LoaderOptions o, std::vector<T::Transform> t,
                                Status* error = nullptr, LoaderStats* stats = nullptr) {
    auto src = Source::ImageFolder(*root_ + "/" + dir);
    EXPECT_TRUE(src.ok());
    auto loader = Loader::Create(*src, std::move(t), o);
    EXPECT_TRUE(loader.ok()) << loader.status().ToString();
    std::vector<Batch> out;
    if (!loader.ok()) return out;
    EXPECT_TRUE((*loader)->StartEpoch(0).ok());
    for (;;) {
      auto b = (*loader)->Next();
      if (!b.ok()) {
        if (error != nullptr) *error = b.status();
        continue;
      }
      if (!b->has_value()) break;
      out.push_back(std::move(**b));
    }
    if (stats != nullptr) *stats = (*loader)->stats();
    return out;
  }

  // The batch's images on the host (copies device memory after waiting on its ready event).
  static std::vector<uint8_t> Host(const Tensor& t) {
    std::vector<uint8_t> out(t.nbytes());
    if (t.device().type == DeviceType::kCPU) {
      std::memcpy(out.data(), t.data(), out.size());
    } else {
      EXPECT_TRUE(t.sync()->ConsumeOn(1).ok());
      EXPECT_EQ(cudaMemcpy(out.data(), t.data(), out.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    }
    return out;
  }

  static std::string* root_;
};
std::string* GpuLoaderTest::root_ = nullptr;

LoaderOptions Opts(Device device, DecodeRoute route) {
  LoaderOptions o;
  o.batch_size = 8;
  o.shuffle = true;
  o.seed = 77;
  o.num_threads = 3;
  o.device = device;
  o.decode_route = route;
  return o;
}

TEST_F(GpuLoaderTest, EveryRouteMatchesTheCpuPipeline) {
  const std::vector<T::Transform> t = {T::RandomResizedCrop{64, 64}, T::RandomHorizontalFlip{},
                                       T::Normalize{{0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f}}};
  LoaderOptions cpu = Opts(Device{}, DecodeRoute::kAuto);
  cpu.dct_scaling = false;  // the nvJPEG routes decode at full resolution
  const auto ref = Run("data", cpu, t);
  for (DecodeRoute route : {DecodeRoute::kAuto, DecodeRoute::kHardware, DecodeRoute::kHybrid, DecodeRoute::kCpu}) {
    LoaderStats stats;
    LoaderOptions gpu = Opts(Device{DeviceType::kCUDA, 0}, route);
    gpu.dct_scaling = false;  // as on the CPU side: the "cpu" route must then be bit-exact
    const auto got = Run("data", gpu, t, nullptr, &stats);
    ASSERT_EQ(got.size(), ref.size());
    double sum = 0, worst = 0;
    int64_t n = 0;
    for (size_t b = 0; b < ref.size(); ++b) {
      EXPECT_EQ(got[b].indices, ref[b].indices);
      EXPECT_EQ(got[b].images.shape(), ref[b].images.shape());
      EXPECT_EQ(got[b].images.device().type, DeviceType::kCUDA);
      const auto g = Host(got[b].images), r = Host(ref[b].images);
      const float* gf = reinterpret_cast<const float*>(g.data());
      const float* rf = reinterpret_cast<const float*>(r.data());
      for (size_t k = 0; k < r.size() / 4; ++k, ++n) {
        const double d = std::abs(gf[k] - rf[k]);
        sum += d;
        worst = std::max(worst, d);
      }
    }
    // A few levels of decoder difference after /255/std: mean well under 0.05, no outlier
    // beyond ~40 levels (0.7); a wrong crop window gives means of 0.3 and more.
    EXPECT_LE(sum / static_cast<double>(n), route == DecodeRoute::kCpu ? 1e-6 : 0.05) << DecodeRouteName(route);
    EXPECT_LE(worst, route == DecodeRoute::kCpu ? 1e-6 : 0.7) << DecodeRouteName(route);
    int64_t routed = 0, pixels = 0, want_pixels = 0;
    for (int64_t c : stats.route_samples) routed += c;
    for (int64_t p : stats.route_pixels) pixels += p;
    for (int i = 0; i < 24; ++i) want_pixels += int64_t{160 + 11 * i} * (120 + 7 * (i % 9));  // the files' sizes
    EXPECT_EQ(routed, 24) << DecodeRouteName(route);
    EXPECT_EQ(pixels, want_pixels) << DecodeRouteName(route);
    if (route == DecodeRoute::kHybrid) {
      EXPECT_EQ(stats.route_samples[1], 23);  // all but the rotated file
    }
    if (route == DecodeRoute::kCpu) {
      EXPECT_EQ(stats.route_samples[2], 24);
      EXPECT_EQ(stats.route_pixels[2], want_pixels);
    }
    EXPECT_GT(stats.gpu_memory_peak, 0);
  }
}

TEST_F(GpuLoaderTest, Float16AndVariableSizeUint8) {
  LoaderOptions o = Opts(Device{DeviceType::kCUDA, 0}, DecodeRoute::kAuto);
  o.dtype = DType::kFloat16;
  const auto half = Run("data", o, {T::RandomResizedCrop{32, 48}});
  ASSERT_EQ(half.size(), 3u);
  EXPECT_EQ(half[0].images.shape(), (std::vector<int64_t>{8, 3, 32, 48}));
  const auto h = Host(half[0].images);
  const uint16_t* hv = reinterpret_cast<const uint16_t*>(h.data());
  for (size_t k = 0; k < h.size() / 2; ++k) {
    const float v = HalfBitsToFloat(hv[k]);
    ASSERT_TRUE(v >= 0.0f && v <= 1.0f) << v;
  }
  // No geometry: each image decoded whole, one tensor per sample; compare with the CPU.
  LoaderOptions u = Opts(Device{DeviceType::kCUDA, 0}, DecodeRoute::kHybrid);
  u.dtype = DType::kUInt8;
  u.layout = Layout::kNHWC;
  LoaderOptions uc = u;
  uc.device = Device{};
  uc.decode_route = DecodeRoute::kAuto;
  const auto g = Run("data", u, {}), r = Run("data", uc, {});
  ASSERT_EQ(g.size(), r.size());
  for (size_t b = 0; b < g.size(); ++b) {
    ASSERT_EQ(g[b].image_list.size(), r[b].image_list.size());
    for (int64_t i = 0; i < g[b].image_list.size(); ++i) {
      EXPECT_EQ(g[b].image_list[i].shape(), r[b].image_list[i].shape());
      const auto gi = Host(g[b].image_list[i]), ri = Host(r[b].image_list[i]);
      double sum = 0;
      for (size_t k = 0; k < gi.size(); ++k) sum += std::abs(int(gi[k]) - int(ri[k]));
      // Whole images: nvJPEG upsamples 4:2:x chroma differently (measured means up to 3.5).
      EXPECT_LE(sum / static_cast<double>(gi.size()), 4.0);
    }
  }
}

// Also: the batches `Run` returns outlive their loader unconsumed (no consumer stream set); their
// memory must then be released without the loader's streams (this crashed in cuMemFreeAsync).
TEST_F(GpuLoaderTest, BadFilesRaiseOrSkipAsOnTheCpu) {
  for (DecodeRoute route : {DecodeRoute::kHardware, DecodeRoute::kHybrid, DecodeRoute::kCpu}) {
    LoaderOptions o = Opts(Device{DeviceType::kCUDA, 0}, route);
    o.shuffle = false;
    Status error;
    Run("bad", o, {T::RandomResizedCrop{32, 32}}, &error);
    EXPECT_FALSE(error.ok());
    EXPECT_NE(error.message().find("bad/a/truncated.jpg"), std::string::npos) << error.ToString();
    o.on_error = OnError::kSkip;
    LoaderStats stats;
    const auto got = Run("bad", o, {T::RandomResizedCrop{32, 32}}, nullptr, &stats);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].indices, (std::vector<int64_t>{0}));  // a/good.jpg
    ASSERT_EQ(stats.skipped_count, 2);
    EXPECT_NE(stats.skipped[0].path.find("truncated.jpg"), std::string::npos);
    EXPECT_NE(stats.skipped[1].path.find("empty.jpg"), std::string::npos);
  }
}

TEST_F(GpuLoaderTest, BudgetTooSmallForABatchIsAClearError) {
  LoaderOptions o = Opts(Device{DeviceType::kCUDA, 0}, DecodeRoute::kAuto);
  o.gpu_memory_budget = 64 << 10;
  Status error;
  Run("data", o, {T::RandomResizedCrop{224, 224}}, &error);
  EXPECT_FALSE(error.ok());
  EXPECT_NE(error.message().find("gpu_memory_budget"), std::string::npos) << error.ToString();
}

}  // namespace
}  // namespace sluice
