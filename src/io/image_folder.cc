// Source::ImageFolder: the samples of a folder tree, listed as torchvision's ImageFolder lists them.
#include "sluice/source.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <string_view>
#include <system_error>

#include "core/file_util.h"
#include "io/file_source.h"

namespace sluice {

namespace fs = std::filesystem;

bool HasImageExtension(const std::string& filename) {
  static const char* const kExtensions[] = {".jpg", ".jpeg", ".png", ".ppm", ".bmp",
                                            ".pgm", ".tif",  ".tiff", ".webp"};
  std::string lower = filename;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* ext : kExtensions) {
    const std::string e = ext;
    if (lower.size() >= e.size() && lower.compare(lower.size() - e.size(), e.size(), e) == 0)
      return true;
  }
  return false;
}

namespace {

std::string Join(const std::string& dir, const std::string& name) {
  if (!dir.empty() && dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

// A directory's identity, through symbolic links.
struct DirId {
  dev_t dev;
  ino_t ino;
  bool operator==(const DirId&) const = default;
};

// The files under `dir` in the order of Python's
//   for root, _, files in sorted(os.walk(dir, followlinks=True)): for f in sorted(files)
// except that a link back to a directory being walked (`ancestors`, `dir` last) is not followed:
// os.walk would go round such a loop until the path is too long (with two links, 2^40 times).
void Walk(const std::string& dir, std::map<std::string, std::vector<std::string>>* out, std::vector<DirId>* ancestors) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  if (ec) return;  // os.walk ignores unreadable directories
  std::vector<std::string>& files = (*out)[dir];
  std::vector<std::string> subdirs;
  for (; it != end; it.increment(ec)) {
    if (ec) break;
    const std::string name = it->path().filename().string();
    std::error_code e2;
    if (it->is_directory(e2)) {
      subdirs.push_back(Join(dir, name));
    } else {
      files.push_back(name);
    }
  }
  std::sort(files.begin(), files.end());
  for (const std::string& sub : subdirs) {
    struct stat st;
    if (::stat(sub.c_str(), &st) != 0) continue;  // gone, or a dangling link: os.walk skips it too
    const DirId id{st.st_dev, st.st_ino};
    if (std::find(ancestors->begin(), ancestors->end(), id) != ancestors->end()) continue;  // a loop
    ancestors->push_back(id);
    Walk(sub, out, ancestors);
    ancestors->pop_back();
  }
}

}  // namespace

Result<std::shared_ptr<const Source>> Source::ImageFolder(const std::string& root) {
  SLUICE_RETURN_IF_ERROR(CheckPath(root, "the folder"));
  std::error_code ec;
  if (!fs::exists(root, ec)) return NotFound(root, ": no such directory");
  if (!fs::is_directory(root, ec)) return InvalidArgument(root, ": not a directory");
  std::vector<std::string> classes;
  std::vector<Sample> samples;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (it->is_directory(e2)) classes.push_back(it->path().filename().string());
  }
  if (ec) return IOError(root, ": cannot list the directory: ", ec.message());
  std::sort(classes.begin(), classes.end());
  if (classes.empty())
    return NotFound("Couldn't find any class folder in ", root,
                    " (expected one sub-folder per class, as torchvision's ImageFolder)");
  std::vector<std::string> empty_classes;
  for (size_t label = 0; label < classes.size(); ++label) {
    std::map<std::string, std::vector<std::string>> tree;
    const std::string top = Join(root, classes[label]);
    struct stat st;
    std::vector<DirId> ancestors;
    if (::stat(top.c_str(), &st) == 0) ancestors.push_back(DirId{st.st_dev, st.st_ino});
    Walk(top, &tree, &ancestors);
    size_t before = samples.size();
    for (const auto& [dir, files] : tree)
      for (const std::string& f : files)
        if (HasImageExtension(f)) samples.push_back(Sample{Join(dir, f), static_cast<int64_t>(label)});
    if (samples.size() == before) empty_classes.push_back(classes[label]);
  }
  if (!empty_classes.empty()) {
    std::string list;
    for (const auto& c : empty_classes) list += (list.empty() ? "" : ", ") + c;
    return NotFound("Found no valid file for the classes ", list, " in ", root,
                    ". Supported extensions are: .jpg, .jpeg, .png, .ppm, .bmp, .pgm, .tif, "
                    ".tiff, .webp");
  }
  return std::shared_ptr<const Source>(std::make_shared<FileSource>(std::move(samples), std::move(classes)));
}

}  // namespace sluice
