// FileSource: a Source of files on a file system, one (path, label) per sample: what
// Source::ImageFolder and Source::FromList make. A sample's bytes are its whole file (ReadFile).
//
// Thread-safety: immutable after construction.
#ifndef SLUICE_IO_FILE_SOURCE_H_
#define SLUICE_IO_FILE_SOURCE_H_

#include <string>
#include <vector>

#include "sluice/source.h"

namespace sluice {

class FileSource : public Source {
 public:
  // REQUIRES: samples not empty, no empty path.
  FileSource(std::vector<Sample> samples, std::vector<std::string> classes)
      : samples_(std::move(samples)), classes_(std::move(classes)) {}

  int64_t size() const override { return static_cast<int64_t>(samples_.size()); }
  int64_t label(int64_t index) const override { return samples_[static_cast<size_t>(index)].label; }
  std::string name(int64_t index) const override { return samples_[static_cast<size_t>(index)].path; }
  Result<SampleBytes> Read(int64_t index, const ByteAllocator& memory, int64_t max_bytes) const override;
  // FNV-1a over each sample's label and the last two components of its path (class folder
  // and file name).
  uint64_t Digest() const override;
  const std::vector<std::string>& classes() const override { return classes_; }

 private:
  std::vector<Sample> samples_;
  std::vector<std::string> classes_;
};

}  // namespace sluice

#endif  // SLUICE_IO_FILE_SOURCE_H_
