#include "io/pipe_input.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace sluice {
namespace {

std::string ReadAll(PipeInput* in, Status* status) {
  std::string out;
  std::vector<uint8_t> chunk(7);  // small: many reads
  for (;;) {
    Result<size_t> got = in->Read(chunk);
    if (!got.ok()) {
      *status = got.status();
      return out;
    }
    out.append(reinterpret_cast<const char*>(chunk.data()), *got);
    if (*got < chunk.size()) return out;
  }
}

TEST(PipeInputTest, TheCommandsOutputIsTheShard) {
  auto in = PipeInput::Open("pipe:printf 'abcdefghijklmnop'; printf 'qr' >&2", 5);
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  Status st;
  EXPECT_EQ(ReadAll(in->get(), &st), "abcdefghijklmnop");
  EXPECT_TRUE(st.ok()) << st.ToString();
}

TEST(PipeInputTest, SkipPassesOverBytes) {
  auto in = PipeInput::Open("pipe:printf '0123456789'", 5);
  ASSERT_TRUE(in.ok());
  Result<int64_t> skipped = (*in)->Skip(4);
  ASSERT_TRUE(skipped.ok());
  EXPECT_EQ(*skipped, 4);
  Status st;
  EXPECT_EQ(ReadAll(in->get(), &st), "456789");
  Result<int64_t> past = (*in)->Skip(10);
  ASSERT_TRUE(past.ok());
  EXPECT_EQ(*past, 0);
}

TEST(PipeInputTest, AFailingCommandIsAnErrorWithItsStatusAndStderr) {
  auto in = PipeInput::Open("pipe:printf 'part'; echo 'no such bucket' >&2; exit 3", 5);
  ASSERT_TRUE(in.ok());
  Status st;
  EXPECT_EQ(ReadAll(in->get(), &st), "");
  EXPECT_EQ(st.code(), StatusCode::kIOError);
  EXPECT_NE(st.message().find("pipe:printf 'part'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("exited with status 3 after 4 bytes: no such bucket"), std::string::npos) << st.message();
}

TEST(PipeInputTest, ACommandThatWritesNothingTimesOut) {
  auto in = PipeInput::Open("pipe:sleep 30", 0.3);
  ASSERT_TRUE(in.ok());
  const auto t0 = std::chrono::steady_clock::now();
  Status st;
  ReadAll(in->get(), &st);
  EXPECT_EQ(st.code(), StatusCode::kIOError);
  EXPECT_NE(st.message().find("wrote nothing for"), std::string::npos) << st.message();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

TEST(PipeInputTest, CancelEndsAWait) {
  std::atomic<bool> cancel{false};
  auto in = PipeInput::Open("pipe:sleep 30", 60, &cancel);
  ASSERT_TRUE(in.ok());
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel = true;
  });
  Status st;
  ReadAll(in->get(), &st);
  stopper.join();
  EXPECT_EQ(st.code(), StatusCode::kCancelled) << st.ToString();
}

TEST(PipeInputTest, DestroyingItStopsTheCommand) {
  const auto t0 = std::chrono::steady_clock::now();
  {
    auto in = PipeInput::Open("pipe:yes", 5);
    ASSERT_TRUE(in.ok());
    std::vector<uint8_t> some(100);
    ASSERT_TRUE((*in)->Read(some).ok());
  }  // an endless command: ended here, not waited for
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

TEST(PipeInputTest, NoCommandIsAnError) {
  auto in = PipeInput::Open("pipe:  ", 5);
  EXPECT_EQ(in.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sluice
