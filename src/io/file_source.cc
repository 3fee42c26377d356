#include "io/file_source.h"

#include <numeric>
#include <string_view>
#include <utility>

#include "core/file_util.h"
#include "core/fnv.h"
#include "io/sampler.h"

namespace sluice {

const std::vector<std::string>& Source::classes() const {
  static const std::vector<std::string>* const kNone = new std::vector<std::string>();
  return *kNone;
}

std::vector<int64_t> Source::EpochOrder(bool shuffle, uint64_t seed, int64_t epoch, int) const {
  if (shuffle) return Sampler::Permutation(size(), seed, epoch);
  std::vector<int64_t> order(static_cast<size_t>(size()));
  std::iota(order.begin(), order.end(), int64_t{0});
  return order;
}

Result<std::shared_ptr<const Source>> Source::FromList(std::vector<Sample> samples) {
  if (samples.empty()) return InvalidArgument("the sample list is empty");
  for (size_t i = 0; i < samples.size(); ++i) {
    if (samples[i].path.empty()) return InvalidArgument("sample ", i, " has an empty path");
    SLUICE_RETURN_IF_ERROR(CheckPath(samples[i].path, "sample path"));
  }
  return std::shared_ptr<const Source>(std::make_shared<FileSource>(std::move(samples), std::vector<std::string>{}));
}

Result<SampleBytes> FileSource::Read(int64_t index, const ByteAllocator& memory, int64_t max_bytes) const {
  return ReadFile(samples_[static_cast<size_t>(index)].path, memory, max_bytes);
}

uint64_t FileSource::Digest() const {
  // Over (label, last two path components) of every sample.
  Fnv1a h;
  for (const Sample& s : samples_) {
    h.Mix(&s.label, sizeof(s.label));
    size_t cut = s.path.find_last_of('/');
    if (cut != std::string::npos && cut > 0) cut = s.path.find_last_of('/', cut - 1);
    const std::string_view tail = cut == std::string::npos ? std::string_view(s.path)
                                                           : std::string_view(s.path).substr(cut + 1);
    h.Mix(tail);
    h.Mix("", 1);  // a separator: ("ab", "c") and ("a", "bc") differ
  }
  return h.value();
}

}  // namespace sluice
