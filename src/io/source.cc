#include "sluice/source.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <string_view>
#include <system_error>

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

// The files under `dir` in the order of Python's
//   for root, _, files in sorted(os.walk(dir, followlinks=True)): for f in sorted(files)
void Walk(const std::string& dir, std::map<std::string, std::vector<std::string>>* out, int depth) {
  if (depth > 64) return;  // a symlink cycle
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
  for (const std::string& sub : subdirs) Walk(sub, out, depth + 1);
}

}  // namespace

Result<Source> Source::ImageFolder(const std::string& root) {
  std::error_code ec;
  if (!fs::exists(root, ec)) return NotFound(root, ": no such directory");
  if (!fs::is_directory(root, ec)) return InvalidArgument(root, ": not a directory");
  Source src;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (it->is_directory(e2)) src.classes_.push_back(it->path().filename().string());
  }
  if (ec) return IOError(root, ": cannot list the directory: ", ec.message());
  std::sort(src.classes_.begin(), src.classes_.end());
  if (src.classes_.empty())
    return NotFound("Couldn't find any class folder in ", root,
                    " (expected one sub-folder per class, as torchvision's ImageFolder)");
  std::vector<std::string> empty_classes;
  for (size_t label = 0; label < src.classes_.size(); ++label) {
    std::map<std::string, std::vector<std::string>> tree;
    Walk(Join(root, src.classes_[label]), &tree, 0);
    size_t before = src.samples_.size();
    for (const auto& [dir, files] : tree)
      for (const std::string& f : files)
        if (HasImageExtension(f)) src.samples_.push_back(Sample{Join(dir, f), static_cast<int64_t>(label)});
    if (src.samples_.size() == before) empty_classes.push_back(src.classes_[label]);
  }
  if (!empty_classes.empty()) {
    std::string list;
    for (const auto& c : empty_classes) list += (list.empty() ? "" : ", ") + c;
    return NotFound("Found no valid file for the classes ", list, " in ", root,
                    ". Supported extensions are: .jpg, .jpeg, .png, .ppm, .bmp, .pgm, .tif, "
                    ".tiff, .webp");
  }
  return src;
}

Result<Source> Source::FromList(std::vector<Sample> samples) {
  if (samples.empty()) return InvalidArgument("the sample list is empty");
  for (size_t i = 0; i < samples.size(); ++i)
    if (samples[i].path.empty()) return InvalidArgument("sample ", i, " has an empty path");
  Source src;
  src.samples_ = std::move(samples);
  return src;
}

uint64_t Source::Digest() const {
  // FNV-1a, 64 bit, over (label, last two path components) of every sample.
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  };
  for (const Sample& s : samples_) {
    mix(&s.label, sizeof(s.label));
    size_t cut = s.path.find_last_of('/');
    if (cut != std::string::npos && cut > 0) cut = s.path.find_last_of('/', cut - 1);
    const std::string_view tail = cut == std::string::npos ? std::string_view(s.path)
                                                           : std::string_view(s.path).substr(cut + 1);
    mix(tail.data(), tail.size());
    mix("", 1);  // a separator: ("ab", "c") and ("a", "bc") differ
  }
  return h;
}

}  // namespace sluice
