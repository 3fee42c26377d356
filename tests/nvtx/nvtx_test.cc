// The loader's NVTX ranges as a profiler sees them: this program runs with NVTX_INJECTION64_PATH
// pointing at nvtx_recorder (set before the first NVTX call, which is when NVTX loads it), loads
// an ImageFolder of generated JPEGs on the CPU path for two epochs, and checks that the domain
// "sluice" got every stage's range, one range per batch and one wait per Next(), balanced.
// Its own executable: the injection is chosen once per process.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "codec/jpeg_cpu.h"
#include "sluice/loader.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

std::map<std::string, long> Recorded() {
  void* lib = dlopen(SLUICE_NVTX_RECORDER, RTLD_NOW);
  EXPECT_NE(lib, nullptr) << dlerror();
  using Fn = void (*)(char*, int);
  auto fn = reinterpret_cast<Fn>(dlsym(lib, "sluice_nvtx_recorded"));
  EXPECT_NE(fn, nullptr);
  std::vector<char> text(8192);
  fn(text.data(), static_cast<int>(text.size()));
  std::map<std::string, long> out;
  std::stringstream in(text.data());
  for (std::string item; std::getline(in, item, ';');) {
    const size_t eq = item.rfind('=');
    out[item.substr(0, eq)] = std::stol(item.substr(eq + 1));
  }
  return out;
}

// 20 JPEGs of 40 x 30 in two classes.
std::string MakeFolder() {
  const fs::path root = fs::temp_directory_path() / ("sluice_nvtx_" + std::to_string(getpid()));
  std::vector<uint8_t> pixels(40 * 30 * 3);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 7);
  for (int i = 0; i < 20; ++i) {
    fs::create_directories(root / (i % 2 ? "b" : "a"));
    Result<std::vector<uint8_t>> jpeg = EncodeJpeg(ImageView{pixels.data(), 30, 40, 3, 120}, 90, "420", false);
    EXPECT_TRUE(jpeg.ok());
    std::ofstream((root / (i % 2 ? "b" : "a") / (std::to_string(i) + ".jpg")).string(), std::ios::binary)
        .write(reinterpret_cast<const char*>(jpeg->data()), static_cast<std::streamsize>(jpeg->size()));
  }
  return root.string();
}

TEST(Nvtx, AProfilerSeesEveryStageBatchAndWait) {
  const std::string root = MakeFolder();
  Result<std::shared_ptr<const Source>> source = Source::ImageFolder(root);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  LoaderOptions o;
  o.batch_size = 8;  // 3 batches per epoch, the last one short
  o.num_threads = 2;
  o.io_threads = 1;
  int batches = 0;
  {
    Result<std::unique_ptr<Loader>> loader =
        Loader::Create(*source, {transforms::RandomResizedCrop{16, 16}, transforms::RandomHorizontalFlip{}}, o);
    ASSERT_TRUE(loader.ok()) << loader.status().ToString();
    for (int epoch = 0; epoch < 2; ++epoch) {
      ASSERT_TRUE((*loader)->StartEpoch(epoch).ok());
      while (true) {
        Result<std::optional<Batch>> b = (*loader)->Next();
        ASSERT_TRUE(b.ok()) << b.status().ToString();
        if (!*b) break;
        ++batches;
      }
    }
  }  // closed: every batch's range has ended
  fs::remove_all(root);
  ASSERT_EQ(batches, 6);
  std::map<std::string, long> r = Recorded();
  EXPECT_GE(r["sluice read"], 40);  // each file read once per epoch
  EXPECT_GE(r["sluice decode"], 40);
  EXPECT_GE(r["sluice transform"], 40);
  EXPECT_GE(r["sluice collate"], 6);
  EXPECT_GE(r["sluice batch"], 6);  // batches read ahead into a third epoch may add some
  EXPECT_GE(r["sluice wait"], 6);
  EXPECT_EQ(r["pushes"], r["pops"]);
  EXPECT_EQ(r["starts"], r["ends"]);
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  setenv("NVTX_INJECTION64_PATH", SLUICE_NVTX_RECORDER, 1);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
