#include "codec/exif.h"

#include <cstring>

namespace sluice {

int ExifOrientationFromTiff(const uint8_t* d, size_t n) {
  if (n < 8) return 1;
  bool little;
  if (d[0] == 'I' && d[1] == 'I') {
    little = true;
  } else if (d[0] == 'M' && d[1] == 'M') {
    little = false;
  } else {
    return 1;
  }
  auto u16 = [&](size_t off) -> uint32_t {
    return little ? (d[off] | (d[off + 1] << 8)) : ((d[off] << 8) | d[off + 1]);
  };
  auto u32 = [&](size_t off) -> uint32_t {
    return little ? (u16(off) | (u16(off + 2) << 16)) : ((u16(off) << 16) | u16(off + 2));
  };
  if (u16(2) != 42) return 1;
  const uint32_t ifd = u32(4);
  if (ifd > n || n - ifd < 2) return 1;
  const uint32_t entries = u16(ifd);
  for (uint32_t i = 0; i < entries; ++i) {
    const size_t e = ifd + 2 + static_cast<size_t>(i) * 12;
    if (e + 12 > n) return 1;
    if (u16(e) == 0x0112) {
      const uint32_t type = u16(e + 2);
      const uint32_t value = type == 3 ? u16(e + 8) : (type == 4 ? u32(e + 8) : 0);
      return value >= 1 && value <= 8 ? static_cast<int>(value) : 1;
    }
  }
  return 1;
}

int ExifOrientationFromApp1(const uint8_t* d, size_t n) {
  if (n < 6 || std::memcmp(d, "Exif\0\0", 6) != 0) return 1;
  return ExifOrientationFromTiff(d + 6, n - 6);
}

}  // namespace sluice
