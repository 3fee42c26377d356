#include "sluice/source.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "core/host_pool.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

class SourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "sluice_source_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    base_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(base_, ec);
  }
  void Touch(const std::string& rel) {
    const fs::path p = fs::path(base_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << "x";
  }
  void Mkdir(const std::string& rel) { fs::create_directories(fs::path(base_) / rel); }
  void Symlink(const std::string& target_rel, const std::string& link_rel) {
    fs::create_directory_symlink(fs::path(base_) / target_rel, fs::path(base_) / link_rel);
  }
  std::string Path(const std::string& rel) const { return base_ + "/" + rel; }

  std::string base_;
};

TEST(HasImageExtensionTest, TorchvisionExtensionsCaseInsensitive) {
  for (const char* name : {"a.jpg", "a.jpeg", "a.png", "a.ppm", "a.bmp", "a.pgm", "a.tif",
                           "a.tiff", "a.webp", "A.JPG", "b.JpEg", "c.PNG", "x.y.WebP", ".jpg"})
    EXPECT_TRUE(HasImageExtension(name)) << name;
  for (const char* name : {"a.gif", "a.txt", "a.jpg.bak", "jpg", "a.jp", "a.heic", "a.jpgx",
                           "a_jpg", "", "a.avif", "png"})
    EXPECT_FALSE(HasImageExtension(name)) << name;
}

TEST_F(SourceTest, ImageFolderOrderFollowsTorchvision) {
  // torchvision: classes = sorted(d.name for d in scandir(root) if d.is_dir()); then per class
  //   for root, _, files in sorted(os.walk(class_dir, followlinks=True)):
  //     for f in sorted(files): keep if f.lower().endswith(IMG_EXTENSIONS)
  // sorted(os.walk(...)) orders directories by their whole path string, so "sub-2" ('-' is
  // 0x2D) comes before "sub/deeper" ('/' is 0x2F), unlike a depth-first walk.
  Touch("root/README.txt");                // a file at the top is not a class
  Touch("root/b_dogs/x.JPG");
  Touch("root/b_dogs/a.png");
  Touch("root/b_dogs/B.jpeg");             // 'B' sorts before 'a'
  Touch("root/b_dogs/notes.txt");
  Touch("root/b_dogs/img.gif");            // not one of torchvision's extensions
  Touch("root/b_dogs/archive.jpg.bak");
  Touch("root/b_dogs/.jpg");               // "...".endswith(".jpg")
  Touch("root/b_dogs/sub/z.webp");
  Touch("root/b_dogs/sub/deeper/d.tiff");
  Touch("root/b_dogs/sub-2/y.Tif");
  Touch("root/b_dogs/dir.jpg/inner.ppm");  // a directory named like an image is walked
  Touch("root/a_cats/2.pgm");
  Touch("root/a_cats/1.bmp");
  Touch("outside/o2.JPEG");
  Touch("outside/o1.jpg");
  Symlink("outside", "root/a_cats/linked");  // followed
  Touch("elsewhere/k.png");
  Symlink("elsewhere", "root/c_link");       // a class folder reached through a link
  Mkdir("root/b_dogs/empty_sub");

  Result<std::shared_ptr<const Source>> src = Source::ImageFolder(Path("root"));
  ASSERT_TRUE(src.ok()) << src.status().ToString();
  EXPECT_EQ((*src)->classes(), (std::vector<std::string>{"a_cats", "b_dogs", "c_link"}));
  const std::vector<std::pair<std::string, int64_t>> expected = {
      {"root/a_cats/1.bmp", 0},
      {"root/a_cats/2.pgm", 0},
      {"root/a_cats/linked/o1.jpg", 0},
      {"root/a_cats/linked/o2.JPEG", 0},
      {"root/b_dogs/.jpg", 1},
      {"root/b_dogs/B.jpeg", 1},
      {"root/b_dogs/a.png", 1},
      {"root/b_dogs/x.JPG", 1},
      {"root/b_dogs/dir.jpg/inner.ppm", 1},
      {"root/b_dogs/sub/z.webp", 1},
      {"root/b_dogs/sub-2/y.Tif", 1},
      {"root/b_dogs/sub/deeper/d.tiff", 1},
      {"root/c_link/k.png", 2},
  };
  ASSERT_EQ((*src)->size(), static_cast<int64_t>(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ((*src)->name(i), Path(expected[i].first)) << i;
    EXPECT_EQ((*src)->label(i), expected[i].second) << i;
  }
  // A trailing slash on the root gives the same paths (os.path.join).
  Result<std::shared_ptr<const Source>> slash = Source::ImageFolder(Path("root") + "/");
  ASSERT_TRUE(slash.ok());
  EXPECT_EQ((*slash)->name(0), Path("root/a_cats/1.bmp"));
}

TEST_F(SourceTest, MissingRootIsNotFound) {
  Result<std::shared_ptr<const Source>> src = Source::ImageFolder(Path("nope"));
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(src.status().message(), Path("nope") + ": no such directory");
}

TEST_F(SourceTest, FileAsRootIsInvalidArgument) {
  Touch("file.jpg");
  Result<std::shared_ptr<const Source>> src = Source::ImageFolder(Path("file.jpg"));
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(src.status().message(), Path("file.jpg") + ": not a directory");
}

TEST_F(SourceTest, NoClassFolderIsNotFound) {
  Touch("flat/a.jpg");
  Touch("flat/b.jpg");
  Result<std::shared_ptr<const Source>> src = Source::ImageFolder(Path("flat"));
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.status().code(), StatusCode::kNotFound);
  EXPECT_NE(src.status().message().find("Couldn't find any class folder in " + Path("flat")),
            std::string::npos)
      << src.status().message();
}

TEST_F(SourceTest, EmptyClassesAreNamed) {
  Touch("ds/cats/a.jpg");
  Touch("ds/dogs/notes.txt");
  Touch("ds/dogs/sub/also_not.gif");
  Mkdir("ds/emu");
  Result<std::shared_ptr<const Source>> src = Source::ImageFolder(Path("ds"));
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.status().code(), StatusCode::kNotFound);
  EXPECT_NE(src.status().message().find("Found no valid file for the classes dogs, emu in " + Path("ds")),
            std::string::npos)
      << src.status().message();
  EXPECT_NE(src.status().message().find(".webp"), std::string::npos);  // lists the extensions
}

TEST_F(SourceTest, FromList) {
  Result<std::shared_ptr<const Source>> src = Source::FromList({{"a.jpg", 3}, {"b.png", 1}});
  ASSERT_TRUE(src.ok());
  EXPECT_EQ((*src)->size(), 2);
  EXPECT_EQ((*src)->name(1), "b.png");
  EXPECT_EQ((*src)->label(0), 3);
  EXPECT_TRUE((*src)->classes().empty());

  Result<std::shared_ptr<const Source>> empty = Source::FromList({});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(empty.status().message(), "the sample list is empty");

  Result<std::shared_ptr<const Source>> blank = Source::FromList({{"a.jpg", 0}, {"", 0}});
  ASSERT_FALSE(blank.ok());
  EXPECT_EQ(blank.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(blank.status().message(), "sample 1 has an empty path");
}

TEST_F(SourceTest, ReadGivesTheFileOrAnErrorNamingIt) {
  Touch("ds/cats/a.jpg");  // holds "x"
  Result<std::shared_ptr<const Source>> src = Source::FromList({{Path("ds/cats/a.jpg"), 0}, {Path("ds/none.jpg"), 1}});
  ASSERT_TRUE(src.ok());
  std::shared_ptr<HostPool> pool = HostPool::Create();
  const ByteAllocator memory = [&](size_t n) { return pool->Allocate(n); };
  Result<SampleBytes> bytes = (*src)->Read(0, memory, 1 << 20);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(bytes->data), bytes->size), "x");
  Result<SampleBytes> missing = (*src)->Read(1, memory, 1 << 20);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), Path("ds/none.jpg") + ": no such file");
}

// What is not a regular file is refused without waiting on it (a FIFO with no writer would block
// open() forever), and a file over the size limit without reading it (a sparse 4 GiB file).
TEST_F(SourceTest, HostileFilesAreRefusedWithoutReading) {
  Mkdir("ds");
  ASSERT_EQ(mkfifo(Path("ds/fifo.jpg").c_str(), 0600), 0);
  Mkdir("ds/dir.jpg");
  fs::create_symlink("/dev/zero", Path("ds/zero.jpg"));
  {
    std::ofstream(Path("ds/big.jpg")) << "x";
    fs::resize_file(Path("ds/big.jpg"), std::uintmax_t{4} << 30);  // sparse: no disk used
  }
  Result<std::shared_ptr<const Source>> src = Source::FromList(
      {{Path("ds/fifo.jpg"), 0}, {Path("ds/dir.jpg"), 0}, {Path("ds/zero.jpg"), 0}, {Path("ds/big.jpg"), 0}});
  ASSERT_TRUE(src.ok());
  int64_t allocated = 0;
  const ByteAllocator memory = [&](size_t n) {
    allocated += static_cast<int64_t>(n);
    return std::shared_ptr<uint8_t>(new uint8_t[n], std::default_delete<uint8_t[]>());
  };
  const std::string expected[] = {
      Path("ds/fifo.jpg") + ": a FIFO, not a regular file",
      Path("ds/dir.jpg") + ": a directory, not a regular file",
      Path("ds/zero.jpg") + ": a character device, not a regular file",
      Path("ds/big.jpg") + ": 4294967296 bytes, over the file size limit of 1073741824 bytes (max_file_bytes)",
  };
  for (int64_t i = 0; i < 4; ++i) {
    Result<SampleBytes> r = (*src)->Read(i, memory, int64_t{1} << 30);
    ASSERT_FALSE(r.ok()) << i;
    EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
    EXPECT_EQ(r.status().message(), expected[i]);
  }
  EXPECT_EQ(allocated, 0);
}

TEST_F(SourceTest, PathsWithANulByteAreRefused) {
  Result<std::shared_ptr<const Source>> list = Source::FromList({{std::string("a\0b.jpg", 7), 0}});
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().message(), "sample path 'a\\0b.jpg' contains a NUL byte");
  Result<std::shared_ptr<const Source>> folder = Source::ImageFolder(std::string("root\0x", 6));
  ASSERT_FALSE(folder.ok());
  EXPECT_EQ(folder.status().code(), StatusCode::kInvalidArgument);
}

// Two links back to their own folder: each real folder is walked once, its files listed once.
TEST_F(SourceTest, SymlinkLoopsAreNotFollowed) {
  Touch("root/c0/a.jpg");
  Touch("root/c0/sub/b.jpg");
  Symlink("root/c0", "root/c0/l1");
  Symlink("root/c0", "root/c0/l2");
  Symlink("root/c0", "root/c0/sub/up");
  Result<std::shared_ptr<const Source>> src = Source::ImageFolder(Path("root"));
  ASSERT_TRUE(src.ok()) << src.status().ToString();
  ASSERT_EQ((*src)->size(), 2);
  EXPECT_EQ((*src)->name(0), Path("root/c0/a.jpg"));
  EXPECT_EQ((*src)->name(1), Path("root/c0/sub/b.jpg"));
}

TEST(SourceDigestTest, LabelsAndFileNamesInOrderNotTheRoot) {
  auto make = [](std::vector<Sample> v) { return Source::FromList(std::move(v)).value()->Digest(); };
  const uint64_t base = make({{"/data/a/cat/1.jpg", 0}, {"/data/a/dog/2.jpg", 1}});
  // The same class folders and files under another root: the same dataset.
  EXPECT_EQ(make({{"/mnt/b/cat/1.jpg", 0}, {"/mnt/b/dog/2.jpg", 1}}), base);
  EXPECT_EQ(make({{"cat/1.jpg", 0}, {"dog/2.jpg", 1}}), base);
  // Anything else differs: a label, a file name, a class folder, the order, one sample more.
  EXPECT_NE(make({{"/data/a/cat/1.jpg", 0}, {"/data/a/dog/2.jpg", 2}}), base);
  EXPECT_NE(make({{"/data/a/cat/1.jpg", 0}, {"/data/a/dog/3.jpg", 1}}), base);
  EXPECT_NE(make({{"/data/a/cow/1.jpg", 0}, {"/data/a/dog/2.jpg", 1}}), base);
  EXPECT_NE(make({{"/data/a/dog/2.jpg", 1}, {"/data/a/cat/1.jpg", 0}}), base);
  EXPECT_NE(make({{"/data/a/cat/1.jpg", 0}, {"/data/a/dog/2.jpg", 1}, {"/data/a/dog/4.jpg", 1}}), base);
  // Component boundaries count: "ab" + "c" is not "a" + "bc".
  EXPECT_NE(make({{"ab/c.jpg", 0}}), make({{"a/bc.jpg", 0}}));
  EXPECT_NE(make({{"x/ab", 0}, {"x/c", 0}}), make({{"x/a", 0}, {"x/bc", 0}}));
}

}  // namespace
}  // namespace sluice
