// Fnv1a: the 64-bit FNV-1a hash, fed piece by piece: dataset digests (what a resume checks) and
// cache keys. Not for security.
//
//   Fnv1a h;  h.Mix(&label, sizeof(label));  h.Mix(name);  uint64_t d = h.value();
//
// Thread-safety: a value.
#ifndef SLUICE_CORE_FNV_H_
#define SLUICE_CORE_FNV_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace sluice {

class Fnv1a {
 public:
  void Mix(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h_ = (h_ ^ p[i]) * 0x100000001b3ull;
  }
  void Mix(std::string_view s) { Mix(s.data(), s.size()); }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 0xcbf29ce484222325ull;
};

}  // namespace sluice

#endif  // SLUICE_CORE_FNV_H_
