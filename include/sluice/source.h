// Source: the list of samples a loader reads, as (path, label) pairs.
//
// ImageFolder() assigns classes and labels exactly as torchvision.datasets.ImageFolder does:
// class folders sorted by name, files found by a sorted walk that follows symbolic links, kept
// when their extension is one of torchvision's image extensions (case-insensitive).
//
// Thread-safety: a Source is an immutable value after construction.
#ifndef SLUICE_SOURCE_H_
#define SLUICE_SOURCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sluice/status.h"

namespace sluice {

struct Sample {
  std::string path;
  int64_t label = 0;
};

class Source {
 public:
  // Errors: NotFound (no such directory, no class folder, or a class folder with no image),
  // InvalidArgument (not a directory).
  static Result<Source> ImageFolder(const std::string& root);
  // Errors: InvalidArgument for an empty list or an empty path.
  static Result<Source> FromList(std::vector<Sample> samples);

  const std::vector<Sample>& samples() const { return samples_; }
  const std::vector<std::string>& classes() const { return classes_; }  // ImageFolder only
  int64_t size() const { return static_cast<int64_t>(samples_.size()); }
  // A 64-bit digest of the samples in order: each label and the last two components of its
  // path (class folder and file name), so it survives moving the dataset's root. A resume
  // checks it (LoaderState::dataset_digest).
  uint64_t Digest() const;

 private:
  std::vector<Sample> samples_;
  std::vector<std::string> classes_;
};

// torchvision's IMG_EXTENSIONS: .jpg .jpeg .png .ppm .bmp .pgm .tif .tiff .webp
bool HasImageExtension(const std::string& filename);

}  // namespace sluice

#endif  // SLUICE_SOURCE_H_
