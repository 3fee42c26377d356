#include "sluice/types.h"

#include <charconv>

namespace sluice {

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kUInt8: return 1;
    case DType::kInt64: return 8;
    case DType::kFloat16: return 2;
    case DType::kFloat32: return 4;
  }
  return 0;
}

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kUInt8: return "uint8";
    case DType::kInt64: return "int64";
    case DType::kFloat16: return "float16";
    case DType::kFloat32: return "float32";
  }
  return "?";
}

Result<DType> ParseDType(std::string_view name) {
  if (name == "uint8") return DType::kUInt8;
  if (name == "int64") return DType::kInt64;
  if (name == "float16" || name == "half") return DType::kFloat16;
  if (name == "float32" || name == "float") return DType::kFloat32;
  return InvalidArgument("dtype must be one of 'uint8', 'float16', 'float32', got '", name, "'");
}

const char* LayoutName(Layout layout) { return layout == Layout::kNCHW ? "NCHW" : "NHWC"; }

Result<Layout> ParseLayout(std::string_view name) {
  if (name == "NCHW") return Layout::kNCHW;
  if (name == "NHWC") return Layout::kNHWC;
  return InvalidArgument("layout must be 'NCHW' or 'NHWC', got '", name, "'");
}

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
    if (ec == std::errc() && ptr == rest.data() + rest.size() && index >= 0)
      return Device{DeviceType::kCUDA, index};
  }
  return InvalidArgument("device must be 'cpu', 'cuda' or 'cuda:N', got '", name, "'");
}

Result<OnError> ParseOnError(std::string_view name) {
  if (name == "raise") return OnError::kRaise;
  if (name == "skip") return OnError::kSkip;
  return InvalidArgument("on_error must be 'raise' or 'skip', got '", name, "'");
}

Result<DecodeRoute> ParseDecodeRoute(std::string_view name) {
  if (name == "auto") return DecodeRoute::kAuto;
  if (name == "hardware") return DecodeRoute::kHardware;
  if (name == "hybrid") return DecodeRoute::kHybrid;
  if (name == "cpu") return DecodeRoute::kCpu;
  return InvalidArgument("decode_route must be 'auto', 'hardware', 'hybrid' or 'cpu', got '", name, "'");
}

const char* DecodeRouteName(DecodeRoute route) {
  switch (route) {
    case DecodeRoute::kAuto: return "auto";
    case DecodeRoute::kHardware: return "hardware";
    case DecodeRoute::kHybrid: return "hybrid";
    case DecodeRoute::kCpu: return "cpu";
  }
  return "?";
}

Result<LastBatch> ParseLastBatch(std::string_view name) {
  if (name == "partial") return LastBatch::kPartial;
  if (name == "drop") return LastBatch::kDrop;
  if (name == "pad") return LastBatch::kPad;
  return InvalidArgument("last_batch must be 'partial', 'drop' or 'pad', got '", name, "'");
}

const char* LastBatchName(LastBatch policy) {
  switch (policy) {
    case LastBatch::kPartial: return "partial";
    case LastBatch::kDrop: return "drop";
    case LastBatch::kPad: return "pad";
  }
  return "?";
}

}  // namespace sluice
