// Test helpers: tar archives built in memory by the POSIX ustar layout (checksums computed
// here, independently of the reader), and a ByteInput over bytes in memory.
#ifndef SLUICE_IO_TAR_TEST_UTIL_H_
#define SLUICE_IO_TAR_TEST_UTIL_H_

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "io/tar_reader.h"

namespace sluice::testing {

// ByteInput over bytes in memory.
class MemoryInput : public ByteInput {
 public:
  explicit MemoryInput(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {}
  Result<size_t> Read(std::span<uint8_t> out) override {
    const size_t n = std::min(out.size(), bytes_.size() - pos_);
    if (n > 0) std::memcpy(out.data(), bytes_.data() + pos_, n);  // an empty vector has no data()
    pos_ += n;
    return n;
  }
  Result<int64_t> Skip(int64_t n) override {
    const int64_t step = std::min<int64_t>(n, static_cast<int64_t>(bytes_.size() - pos_));
    pos_ += static_cast<size_t>(step);
    return step;
  }

 private:
  std::vector<uint8_t> bytes_;
  size_t pos_ = 0;
};

// A ustar header block by the POSIX layout, its checksum computed here.
inline std::vector<uint8_t> Header(const std::string& name, int64_t size, char type = '0', const std::string& prefix = "") {
  std::vector<uint8_t> h(512, 0);
  std::memcpy(h.data(), name.data(), std::min<size_t>(name.size(), 100));
  std::snprintf(reinterpret_cast<char*>(h.data()) + 100, 8, "%07o", 0644);
  std::snprintf(reinterpret_cast<char*>(h.data()) + 124, 12, "%011llo", static_cast<unsigned long long>(size));
  h[156] = static_cast<uint8_t>(type);
  std::memcpy(h.data() + 257, "ustar\0" "00", 8);
  std::memcpy(h.data() + 345, prefix.data(), std::min<size_t>(prefix.size(), 155));
  std::memset(h.data() + 148, ' ', 8);
  unsigned sum = 0;
  for (uint8_t b : h) sum += b;
  std::snprintf(reinterpret_cast<char*>(h.data()) + 148, 8, "%06o", sum);
  return h;
}

inline void Append(std::vector<uint8_t>* tar, const std::vector<uint8_t>& bytes) { tar->insert(tar->end(), bytes.begin(), bytes.end()); }

// A member: header, data, zero padding to the block.
inline void Member(std::vector<uint8_t>* tar, const std::string& name, const std::string& data, char type = '0') {
  Append(tar, Header(name, static_cast<int64_t>(data.size()), type));
  tar->insert(tar->end(), data.begin(), data.end());
  tar->resize((tar->size() + 511) / 512 * 512, 0);
}

inline void End(std::vector<uint8_t>* tar) { tar->resize(tar->size() + 1024, 0); }

}  // namespace sluice::testing

#endif  // SLUICE_IO_TAR_TEST_UTIL_H_
