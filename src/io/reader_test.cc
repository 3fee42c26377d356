#include "io/reader.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "core/host_pool.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

class ReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "sluice_reader_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    std::vector<Sample> samples;
    for (int i = 0; i < 6; ++i) {
      const std::string path = dir_ + "/" + std::to_string(i) + ".bin";
      std::ofstream(path) << std::string(static_cast<size_t>(i) * 10, static_cast<char>('a' + i));
      samples.push_back(Sample{path, i});
    }
    samples.push_back(Sample{dir_ + "/missing.bin", 6});
    source_ = *Source::FromList(samples);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string dir_;
  std::shared_ptr<const Source> source_;
};

// Every read comes back once, on an I/O thread, with the file's bytes or the error naming it;
// the counters add what was read.
TEST_F(ReaderTest, ReadsEverySampleOnceWithItsBytesOrError) {
  std::shared_ptr<HostPool> pool = HostPool::Create();
  StageCounters counters;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> got(7);
  std::vector<int> calls(7, 0);
  std::atomic<bool> cancelled{false};
  {
    auto reader = Reader::Create(source_, 3, 1 << 20, [&](size_t n) { return pool->Allocate(n); }, &counters);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    EXPECT_EQ((*reader)->threads(), 3);
    for (int64_t i = 0; i < 7; ++i)
      (*reader)->Read(i, /*epoch=*/0, &cancelled, [&, i](Result<SampleBytes> bytes, int io_thread) {
        EXPECT_TRUE(io_thread >= 0 && io_thread < 3);
        std::lock_guard<std::mutex> lock(mu);
        ++calls[static_cast<size_t>(i)];
        got[static_cast<size_t>(i)] = bytes.ok() ? std::string(reinterpret_cast<const char*>(bytes->data), bytes->size)
                                                 : bytes.status().ToString();
        cv.notify_all();
      });
  }  // the destructor finishes every read and callback
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(calls[static_cast<size_t>(i)], 1);
    EXPECT_EQ(got[static_cast<size_t>(i)], std::string(static_cast<size_t>(i) * 10, static_cast<char>('a' + i)));
  }
  EXPECT_EQ(got[6], "NotFound: " + dir_ + "/missing.bin: no such file");
  EXPECT_EQ(counters.bytes_read.load(), 150);  // 0 + 10 + ... + 50
}

TEST_F(ReaderTest, ACancelledReadIsNotMade) {
  std::shared_ptr<HostPool> pool = HostPool::Create();
  StageCounters counters;
  std::atomic<bool> cancelled{true};
  std::vector<StatusCode> codes;
  std::mutex mu;
  {
    auto reader = Reader::Create(source_, 1, 1 << 20, [&](size_t n) { return pool->Allocate(n); }, &counters);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    for (int64_t i = 0; i < 6; ++i)
      (*reader)->Read(i, /*epoch=*/0, &cancelled, [&](Result<SampleBytes> bytes, int) {
        std::lock_guard<std::mutex> lock(mu);
        codes.push_back(bytes.status().code());
      });
  }
  EXPECT_EQ(codes, std::vector<StatusCode>(6, StatusCode::kCancelled));
  EXPECT_EQ(counters.bytes_read.load(), 0);
}

}  // namespace
}  // namespace sluice
