// What the JPEG engines' decode calls ask of the CUDA driver's memory manager, counted with CUPTI
// (every driver call of this process, whoever makes it: nvJPEG calls the driver directly).
// cuMemFree waits for the whole device; under DDP a device can be busy with an NCCL kernel that
// waits for this very process, and ranks hung for good with gdb showing cuMemFree inside
// nvjpegDecodeBatchedEx (issue 21). nvJPEG grows a state's per-image buffers to the largest image
// each has had; NvjpegHardwareDecoder bounds that size and never initializes a state again, so
// that once the buffers have grown its decode calls allocate and free nothing: checked here, beside
// the contrast that shows the counter sees nvJPEG grow its buffers for a larger image.
// Its own executable: one CUPTI subscriber per process. Skipped without a GPU or JPEG engines.
#include <cuda_runtime.h>
#include <cupti.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "codec/jpeg_cpu.h"
#include "codec/nvjpeg_decoders.h"
#include "gpu/device.h"
#include "gpu/device_pool.h"

namespace sluice {
namespace {

// Counts the driver calls that allocate or free device or pinned memory while it is on.
class DriverMemoryCalls {
 public:
  DriverMemoryCalls() {
    ok_ = cuptiSubscribe(&sub_, reinterpret_cast<CUpti_CallbackFunc>(&OnCall), this) == CUPTI_SUCCESS &&
          cuptiEnableDomain(1, sub_, CUPTI_CB_DOMAIN_DRIVER_API) == CUPTI_SUCCESS;
  }
  ~DriverMemoryCalls() {
    if (sub_ != nullptr) cuptiUnsubscribe(sub_);
  }
  bool ok() const { return ok_; }
  void Start() { frees_ = allocs_ = 0, on_ = true; }
  void Stop() { on_ = false; }
  int frees() const { return frees_; }
  int allocs() const { return allocs_; }

 private:
  static bool Starts(const char* name, const char* prefix) {
    return std::strncmp(name, prefix, std::strlen(prefix)) == 0;
  }
  static void CUPTIAPI OnCall(void* self, CUpti_CallbackDomain, CUpti_CallbackId, const CUpti_CallbackData* call) {
    auto* c = static_cast<DriverMemoryCalls*>(self);
    if (!c->on_ || call->callbackSite != CUPTI_API_ENTER || call->functionName == nullptr) return;
    const char* f = call->functionName;
    // cuMemFree*, cuMemFreeHost, cuMemRelease / cuMemUnmap (virtual memory); cuMemAlloc*,
    // cuMemHostAlloc, cuMemCreate. Not the stream-ordered pool calls (cuMemFreeAsync): those
    // wait for nothing.
    const bool frees = (Starts(f, "cuMemFree") && !Starts(f, "cuMemFreeAsync")) || Starts(f, "cuMemRelease") ||
                       Starts(f, "cuMemUnmap");
    if (frees) ++c->frees_;
    if ((Starts(f, "cuMemAlloc") && !Starts(f, "cuMemAllocAsync") && !Starts(f, "cuMemAllocFromPoolAsync")) ||
        Starts(f, "cuMemHostAlloc") || Starts(f, "cuMemCreate"))
      ++c->allocs_;
  }

  CUpti_SubscriberHandle sub_ = nullptr;
  bool ok_ = false;
  std::atomic<bool> on_{false};
  std::atomic<int> frees_{0}, allocs_{0};
};

// A w x h picture with some detail, as a JPEG of the given subsampling.
std::vector<uint8_t> Jpeg(int w, int h, const char* subsampling) {
  std::vector<uint8_t> px(static_cast<size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        px[(static_cast<size_t>(y) * w + x) * 3 + c] =
            static_cast<uint8_t>(128 + 100 * std::sin(x / (7.0 + c) + y / 11.0));
  const ImageView view{px.data(), h, w, 3, static_cast<ptrdiff_t>(w) * 3};
  Result<std::vector<uint8_t>> jpg = EncodeJpeg(view, 90, subsampling, false);
  EXPECT_TRUE(jpg.ok()) << jpg.status().ToString();
  return jpg.ok() ? *jpg : std::vector<uint8_t>{};
}

struct Call {
  std::vector<std::vector<uint8_t>> files;
  std::vector<Rect> whole;
};

// `count` files of w x h, each a little smaller than the one before unless `same`.
Call MakeCall(int count, int w, int h, const char* subsampling, bool same = false) {
  Call c;
  for (int i = 0; i < count; ++i) {
    const int cw = same ? w : w - 8 * i, ch = same ? h : h - 4 * i;
    c.files.push_back(Jpeg(cw, ch, subsampling));
    c.whole.push_back(Rect{0, 0, cw, ch});
  }
  return c;
}

class EngineMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
    ASSERT_TRUE(calls_.ok()) << "CUPTI would not subscribe to the driver's calls";
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    auto pool = DevicePool::Create(0, int64_t{4} << 30);
    ASSERT_TRUE(pool.ok()) << pool.status().ToString();
    pool_ = *pool;
    auto ctx = NvjpegContext::Create(pool_.get());
    ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
    ctx_ = std::move(*ctx);
    if (ctx_->hardware_handle() == nullptr) GTEST_SKIP() << ctx_->hardware_status().ToString();
    ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&out_, kOutBytes), cudaSuccess);  // before counting: one buffer for every call
  }
  void TearDown() override {
    if (out_ != nullptr) cudaFree(out_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
    ctx_.reset();
    pool_.reset();
  }

  // Decodes `call` whole in one Decode and waits for it.
  void Decode(NvjpegHardwareDecoder& d, const Call& call) {
    std::vector<NvjpegJob> jobs;
    size_t offset = 0;
    for (size_t i = 0; i < call.files.size(); ++i) {
      const Rect r = call.whole[i];
      const std::vector<uint8_t>& f = call.files[i];
      jobs.push_back(NvjpegJob{f.data(), f.size(), r, out_ + offset, static_cast<size_t>(r.w) * 3});
      offset += static_cast<size_t>(r.w) * r.h * 3;
      ASSERT_LE(offset, kOutBytes);
    }
    const Status s = d.Decode(jobs, stream_);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  }

  static int64_t FreeDeviceBytes() {
    size_t free = 0, total = 0;
    cudaMemGetInfo(&free, &total);
    return static_cast<int64_t>(free);
  }

  static constexpr size_t kOutBytes = size_t{8} * 1024 * 1024 * 3;
  DriverMemoryCalls calls_;
  std::shared_ptr<DevicePool> pool_;
  std::unique_ptr<NvjpegContext> ctx_;
  cudaStream_t stream_ = nullptr;
  uint8_t* out_ = nullptr;
};

TEST_F(EngineMemoryTest, OnceGrownCallsNeitherAllocateNorFree) {
  auto made = NvjpegHardwareDecoder::Create(ctx_.get(), 32, /*max_side=*/1024);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  NvjpegHardwareDecoder& d = **made;
  ASSERT_TRUE(d.Reserve(6).ok());
  ASSERT_TRUE(d.Reserve(3).ok());
  const int64_t before = FreeDeviceBytes();
  Decode(d, MakeCall(6, 1024, 1024, "444", /*same=*/true));  // every slot at the largest side
  Decode(d, MakeCall(3, 1024, 1024, "444", /*same=*/true));
  std::printf("6 + 3 slots grown to 1024 x 1024 4:4:4: %.1f MiB of device memory\n",
              static_cast<double>(before - FreeDeviceBytes()) / (1 << 20));
  const Call calls[] = {
      MakeCall(6, 200, 150, "420"),
      MakeCall(6, 1000, 700, "422"),
      MakeCall(6, 1024, 1024, "420"),
      MakeCall(3, 640, 1024, "420"),  // portrait
      MakeCall(2, 1024, 900, "444"),  // padded into the 3-image state
  };
  calls_.Start();
  for (const Call& c : calls) Decode(d, c);
  calls_.Stop();
  EXPECT_EQ(calls_.frees(), 0);
  EXPECT_EQ(calls_.allocs(), 0);
  EXPECT_EQ(d.state_initializations(), 2);
}

// The contrast: a larger image than a slot has had makes nvJPEG grow its buffers inside the decode
// call, freeing the old ones (why the decoder bounds the side). Shows that the counter sees the
// calls the tests around it expect none of.
TEST_F(EngineMemoryTest, ALargerImageMakesNvjpegFreeAndGrowItsBuffers) {
  auto made = NvjpegHardwareDecoder::Create(ctx_.get(), 32, /*max_side=*/1024);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  NvjpegHardwareDecoder& d = **made;
  ASSERT_TRUE(d.Reserve(6).ok());
  Decode(d, MakeCall(6, 64, 64, "444", true));
  calls_.Start();
  Decode(d, MakeCall(6, 1024, 1024, "444", true));
  calls_.Stop();
  std::printf("a call of 6 images of 1024 x 1024 after 64 x 64: %d frees, %d allocations\n", calls_.frees(),
              calls_.allocs());
  EXPECT_GT(calls_.frees(), 0);
}

// Past kMaxStates call sizes, a call takes an existing state (padded, or cut into calls of the
// largest) instead of initializing one again, which would free its buffers.
TEST_F(EngineMemoryTest, CallSizesPastTheStateLimitInitializeNothing) {
  auto made = NvjpegHardwareDecoder::Create(ctx_.get(), 32, /*max_side=*/256);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  NvjpegHardwareDecoder& d = **made;
  constexpr int kStates = NvjpegHardwareDecoder::kMaxStates;
  for (int n = 1; n <= kStates; ++n) {
    ASSERT_TRUE(d.Reserve(n).ok());
    Decode(d, MakeCall(n, 256, 256, "444", true));  // every slot grown
  }
  calls_.Start();
  Decode(d, MakeCall(kStates + 3, 256, 200, "420"));  // two calls in the kStates-image state
  Decode(d, MakeCall(5, 200, 200, "420"));            // its own size
  calls_.Stop();
  EXPECT_EQ(calls_.frees(), 0);
  EXPECT_EQ(calls_.allocs(), 0);
  EXPECT_EQ(d.state_initializations(), kStates);
}

}  // namespace
}  // namespace sluice
