#include "io/shard_urls.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace sluice {
namespace {

using Names = std::vector<std::string>;

TEST(ShardUrlsTest, BracesExpandAsTheShellAndBraceexpandDo) {
  EXPECT_EQ(*ExpandBraces("a-{0..2}.tar"), (Names{"a-0.tar", "a-1.tar", "a-2.tar"}));
  EXPECT_EQ(*ExpandBraces("a-{08..10}.tar"), (Names{"a-08.tar", "a-09.tar", "a-10.tar"}));
  EXPECT_EQ(*ExpandBraces("{2..0}"), (Names{"2", "1", "0"}));
  EXPECT_EQ(*ExpandBraces("{train,val}-{0..1}"), (Names{"train-0", "train-1", "val-0", "val-1"}));
  EXPECT_EQ(*ExpandBraces("x{a,b{1,2}}y"), (Names{"xay", "xb1y", "xb2y"}));
  EXPECT_EQ(*ExpandBraces("plain.tar"), (Names{"plain.tar"}));
  EXPECT_EQ(*ExpandBraces("{x}.tar"), (Names{"{x}.tar"}));
  EXPECT_EQ(ExpandBraces("a{0..2").status().message(), "an unmatched '{' in 'a{0..2'");
  EXPECT_EQ(ExpandBraces("a}").status().message(), "an unmatched '}' in 'a}'");
  EXPECT_EQ(ExpandBraces("{0..999}{0..999}{0..9}").status().code(), StatusCode::kInvalidArgument);
}

TEST(ShardUrlsTest, LocalGlobsAreSortedStreamsKept) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("sluice_shard_urls_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (const char* n : {"b.tar", "a.tar", "c.txt"}) std::fclose(std::fopen((dir / n).c_str(), "w"));
  const std::string d = dir.string();
  auto names = ExpandShardUrls({d + "/*.tar", "http://h/{0..1}.tar", "pipe:cat x.tar"});
  ASSERT_TRUE(names.ok()) << names.status().ToString();
  EXPECT_EQ(*names, (Names{d + "/a.tar", d + "/b.tar", "http://h/0.tar", "http://h/1.tar", "pipe:cat x.tar"}));
  EXPECT_EQ(ExpandShardUrls({d + "/*.zip"}).status().message(), "no file matches '" + d + "/*.zip'");
  EXPECT_EQ(ExpandShardUrls({}).status().code(), StatusCode::kInvalidArgument);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sluice
