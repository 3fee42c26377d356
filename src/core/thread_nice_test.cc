// NiceThisThreadOnce: the first call sets the calling thread's nice level (read back with
// getpriority), a later one with another level changes nothing, and other threads keep theirs.
#include "core/thread_nice.h"

#include <gtest/gtest.h>

#include <thread>

namespace sluice {
namespace {

int NiceOf(pid_t tid) { return getpriority(PRIO_PROCESS, static_cast<id_t>(tid)); }
pid_t ThisThread() { return static_cast<pid_t>(syscall(SYS_gettid)); }

TEST(ThreadNiceTest, TheFirstCallSetsTheCallingThreadsLevelOnly) {
  const int mine = NiceOf(ThisThread());
  if (mine > 10) GTEST_SKIP() << "this test runs at nice " << mine;
  int first = 0, second = 0;
  std::thread t([&] {
    NiceThisThreadOnce(mine + 5);
    first = NiceOf(ThisThread());
    NiceThisThreadOnce(mine + 9);
    second = NiceOf(ThisThread());
  });
  t.join();
  EXPECT_EQ(first, mine + 5);
  EXPECT_EQ(second, mine + 5);
  EXPECT_EQ(NiceOf(ThisThread()), mine);
}

}  // namespace
}  // namespace sluice
