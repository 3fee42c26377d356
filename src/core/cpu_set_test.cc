#include "core/cpu_set.h"

#include <gtest/gtest.h>

#include <thread>

namespace sluice {
namespace {

using Cpus = std::vector<int>;

TEST(CpuSet, ParsesTheListsSysfsWrites) {
  EXPECT_EQ(ParseCpuList("0-3,8\n"), (Cpus{0, 1, 2, 3, 8}));
  EXPECT_EQ(ParseCpuList("0-1,32-33"), (Cpus{0, 1, 32, 33}));
  EXPECT_EQ(ParseCpuList("5"), (Cpus{5}));
  EXPECT_EQ(ParseCpuList("3,1-2,2"), (Cpus{1, 2, 3}));  // sorted, each once
}

TEST(CpuSet, RefusesWhatIsNotAList) {
  for (const char* bad : {"", "\n", "a", "1-", "-1", "3-1", "1,", ",1", "1,,2", "1 2", "99999999", "0-5000"})
    EXPECT_TRUE(ParseCpuList(bad).empty()) << bad;
}

TEST(CpuSet, Intersects) {
  EXPECT_EQ(IntersectCpus({0, 1, 2, 5}, {1, 2, 3, 5, 9}), (Cpus{1, 2, 5}));
  EXPECT_TRUE(IntersectCpus({0, 1}, {2}).empty());
}

TEST(CpuSet, PinsAThreadToOneOfTheProcessCpus) {
  const Cpus mine = ProcessCpus();
  ASSERT_FALSE(mine.empty());
  Cpus seen;
  std::thread t([&] {
    ASSERT_TRUE(PinThread(pthread_self(), {mine.back()}));
    cpu_set_t set;
    CPU_ZERO(&set);
    ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(set), &set), 0);
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) seen.push_back(c);
  });
  t.join();
  EXPECT_EQ(seen, (Cpus{mine.back()}));
  EXPECT_EQ(ProcessCpus(), mine);  // the process's own set is untouched
}

}  // namespace
}  // namespace sluice
