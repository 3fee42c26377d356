// Source: the samples a loader reads, by index: each one's encoded bytes, its label, and the name
// that errors and skip reports give it. Sharding, shuffling, resume and on_error come from the
// loader, not from the source; a source only answers for one index at a time.
//
// ImageFolder() lists the samples exactly as torchvision.datasets.ImageFolder does: class
// folders sorted by name, files found by a sorted walk that follows symbolic links, kept when
// their extension is one of torchvision's image extensions (case-insensitive); labels are the
// class folders' positions. FromList() takes (path, label) pairs. Both read whole files.
//
//   Result<std::shared_ptr<const Source>> source = Source::ImageFolder("data/train");
//   if (!source.ok()) return source.status();   // NotFound naming the folder
//   (*source)->size();                           // samples
//   (*source)->name(0);                          // "data/train/cat/0001.jpg"
//
// Implementing a source (tar shards, video clips): size(), label(), name(), Read() and Digest().
//
// Thread-safety: a Source is immutable; Read() and every accessor may run on many threads at once.
#ifndef SLUICE_SOURCE_H_
#define SLUICE_SOURCE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sluice/status.h"

namespace sluice {

struct Sample {
  std::string path;
  int64_t label = 0;
};

// The encoded bytes of one sample: `data` stays valid while `owner` (or a copy of it) lives.
struct SampleBytes {
  std::shared_ptr<uint8_t> owner;
  const uint8_t* data = nullptr;
  size_t size = 0;
};

// Memory for a sample's bytes: a buffer of at least `bytes` bytes, or nullptr when none can be had.
using ByteAllocator = std::function<std::shared_ptr<uint8_t>(size_t bytes)>;

class Source {
 public:
  virtual ~Source() = default;

  // Errors: NotFound (no such directory, no class folder, or a class folder with no image),
  // InvalidArgument (not a directory).
  static Result<std::shared_ptr<const Source>> ImageFolder(const std::string& root);
  // Errors: InvalidArgument for an empty list, an empty path or one with a NUL byte.
  static Result<std::shared_ptr<const Source>> FromList(std::vector<Sample> samples);

  virtual int64_t size() const = 0;
  // REQUIRES (all three): 0 <= index < size().
  virtual int64_t label(int64_t index) const = 0;
  // What names sample `index` in errors and skip reports (a file's path).
  virtual std::string name(int64_t index) const = 0;
  // Its bytes, in memory from `memory`. Errors name it: NotFound, IOError, ResourceExhausted, and
  // Unsupported for what is not a regular file (a directory, a FIFO, a device: refused without
  // waiting on it) or holds more than `max_bytes` (refused before reading).
  virtual Result<SampleBytes> Read(int64_t index, const ByteAllocator& memory, int64_t max_bytes) const = 0;

  // A 64-bit digest of the samples in order (their labels and the tail of their names, so that
  // it survives moving the dataset's root). A resume checks it (LoaderState::dataset_digest).
  virtual uint64_t Digest() const = 0;
  // Class names in label order (ImageFolder's folders); empty when the source has none.
  virtual const std::vector<std::string>& classes() const;

  // The order of epoch `epoch`: global position -> sample index, every index once (a weighted
  // source, io/weighted_source.h, may repeat indices); rank r of
  // `world_size` takes positions r, r + world_size, ... The default is a permutation drawn from
  // (seed, epoch), or 0, 1, 2, ... without shuffle, the same for every world size. A source whose
  // samples are read as streams lays it out so that each rank's positions follow its streams.
  virtual std::vector<int64_t> EpochOrder(bool shuffle, uint64_t seed, int64_t epoch, int world_size) const;
};

// torchvision's IMG_EXTENSIONS: .jpg .jpeg .png .ppm .bmp .pgm .tif .tiff .webp
bool HasImageExtension(const std::string& filename);

}  // namespace sluice

#endif  // SLUICE_SOURCE_H_
