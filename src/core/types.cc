// The value types' names: one table per enum, read both ways.
#include "sluice/types.h"

#include <charconv>
#include <string>
#include <utility>

namespace sluice {

namespace {

template <typename E, size_t N>
using NameTable = std::pair<E, const char*>[N];

template <typename E, size_t N>
const char* NameIn(const NameTable<E, N>& table, E value) {
  for (const auto& [v, name] : table)
    if (v == value) return name;
  return "?";
}

// `what` must be one of the table's names; the error lists them.
template <typename E, size_t N>
Result<E> ParseIn(const NameTable<E, N>& table, std::string_view name, const char* what) {
  std::string names;
  for (const auto& [v, n] : table) {
    if (name == n) return v;
    names += (names.empty() ? "'" : ", '") + std::string(n) + "'";
  }
  return InvalidArgument(what, " must be one of ", names, ", got '", name, "'");
}

constexpr NameTable<DType, 4> kDTypes = {
    {DType::kUInt8, "uint8"}, {DType::kInt64, "int64"}, {DType::kFloat16, "float16"}, {DType::kFloat32, "float32"}};
constexpr NameTable<Layout, 2> kLayouts = {{Layout::kNCHW, "NCHW"}, {Layout::kNHWC, "NHWC"}};
constexpr NameTable<OnError, 2> kOnErrors = {{OnError::kRaise, "raise"}, {OnError::kSkip, "skip"}};
constexpr NameTable<LastBatch, 3> kLastBatches = {
    {LastBatch::kPartial, "partial"}, {LastBatch::kDrop, "drop"}, {LastBatch::kPad, "pad"}};
constexpr NameTable<DecodeRoute, 4> kDecodeRoutes = {{DecodeRoute::kAuto, "auto"},
                                                     {DecodeRoute::kHardware, "hardware"},
                                                     {DecodeRoute::kHybrid, "hybrid"},
                                                     {DecodeRoute::kCpu, "cpu"}};

}  // namespace

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kUInt8: return 1;
    case DType::kInt64: return 8;
    case DType::kFloat16: return 2;
    case DType::kFloat32: return 4;
  }
  return 0;
}

const char* DTypeName(DType dtype) { return NameIn(kDTypes, dtype); }

Result<DType> ParseDType(std::string_view name) {
  if (name == "half") return DType::kFloat16;  // torch's aliases
  if (name == "float") return DType::kFloat32;
  return ParseIn(kDTypes, name, "dtype");
}

const char* LayoutName(Layout layout) { return NameIn(kLayouts, layout); }
Result<Layout> ParseLayout(std::string_view name) { return ParseIn(kLayouts, name, "layout"); }

std::string Device::ToString() const {
  if (type == DeviceType::kCPU) return "cpu";
  return "cuda:" + std::to_string(index);
}

Result<Device> ParseDevice(std::string_view name) {
  if (name == "cpu") return Device{DeviceType::kCPU, 0};
  if (name == "cuda") return Device{DeviceType::kCUDA, 0};
  if (name.starts_with("cuda:")) {
    std::string_view rest = name.substr(5);
    int index = -1;
    auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), index);
    if (ec == std::errc() && ptr == rest.data() + rest.size() && index >= 0) return Device{DeviceType::kCUDA, index};
  }
  return InvalidArgument("device must be 'cpu', 'cuda' or 'cuda:N', got '", name, "'");
}

const char* OnErrorName(OnError policy) { return NameIn(kOnErrors, policy); }
Result<OnError> ParseOnError(std::string_view name) { return ParseIn(kOnErrors, name, "on_error"); }

const char* DecodeRouteName(DecodeRoute route) { return NameIn(kDecodeRoutes, route); }
Result<DecodeRoute> ParseDecodeRoute(std::string_view name) { return ParseIn(kDecodeRoutes, name, "decode_route"); }

const char* LastBatchName(LastBatch policy) { return NameIn(kLastBatches, policy); }
Result<LastBatch> ParseLastBatch(std::string_view name) { return ParseIn(kLastBatches, name, "last_batch"); }

}  // namespace sluice
