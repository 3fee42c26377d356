// Small value types shared across sluice: element types, memory layouts and devices.
//
// Thread-safety: plain values; safe to use from any thread.
#ifndef SLUICE_TYPES_H_
#define SLUICE_TYPES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sluice/status.h"

namespace sluice {

enum class DType : uint8_t { kUInt8, kInt64, kFloat16, kFloat32 };

size_t DTypeSize(DType dtype);
const char* DTypeName(DType dtype);            // "uint8", "int64", "float16", "float32"
Result<DType> ParseDType(std::string_view name);  // accepts the names above

// Layout of an image batch: NCHW (PyTorch's default) or NHWC (channels last).
enum class Layout : uint8_t { kNCHW, kNHWC };
const char* LayoutName(Layout layout);
Result<Layout> ParseLayout(std::string_view name);

enum class DeviceType : uint8_t { kCPU, kCUDA };
struct Device {
  DeviceType type = DeviceType::kCPU;
  int index = 0;
  bool operator==(const Device&) const = default;
  std::string ToString() const;  // "cpu", "cuda:0"
};
Result<Device> ParseDevice(std::string_view name);  // "cpu", "cuda", "cuda:1"

// Which decoder the GPU path uses for JPEGs: all three together, split from measured rates
// ("auto"), or one pinned (for tests and benchmarks; files a route cannot take fall back to the
// next: hardware -> hybrid -> cpu). A sample's own route is one of the three (kRoutes).
enum class DecodeRoute : uint8_t { kAuto, kHardware, kHybrid, kCpu };
Result<DecodeRoute> ParseDecodeRoute(std::string_view name);  // "auto", "hardware", "hybrid", "cpu"
const char* DecodeRouteName(DecodeRoute route);
inline constexpr int kNumRoutes = 3;
inline constexpr DecodeRoute kRoutes[kNumRoutes] = {DecodeRoute::kHardware, DecodeRoute::kHybrid, DecodeRoute::kCpu};
// A route's place in kRoutes (and in LoaderStats::route_samples). REQUIRES: route != kAuto.
inline int RouteIndex(DecodeRoute route) { return static_cast<int>(route) - 1; }

// What a loader does with a sample that cannot be read or decoded.
enum class OnError : uint8_t { kRaise, kSkip };
Result<OnError> ParseOnError(std::string_view name);  // "raise", "skip"
const char* OnErrorName(OnError policy);

// What a loader does with the last, incomplete batch of an epoch (see EpochSchedule).
enum class LastBatch : uint8_t { kPartial, kDrop, kPad };
Result<LastBatch> ParseLastBatch(std::string_view name);  // "partial", "drop", "pad"
const char* LastBatchName(LastBatch policy);

}  // namespace sluice

#endif  // SLUICE_TYPES_H_
