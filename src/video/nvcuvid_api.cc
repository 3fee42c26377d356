#include "video/nvcuvid_api.h"

#include <dlfcn.h>

namespace sluice {

namespace {

Result<NvcuvidApi> Load() {
  void* lib = dlopen("libnvcuvid.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    return FailedPrecondition("NVDEC needs the NVIDIA driver's libnvcuvid.so.1, which could not be loaded (",
                              why != nullptr ? why : "not found", ")");
  }
  NvcuvidApi api;
  std::string missing;
#define SLUICE_NVCUVID_LOAD(name)                                         \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(lib, #name)); \
  if (api.name == nullptr) missing += std::string(" ") + #name;
  SLUICE_NVCUVID_FUNCTIONS(SLUICE_NVCUVID_LOAD)
  SLUICE_NVCUVID_LOAD(cuvidMapVideoFrame64)
  SLUICE_NVCUVID_LOAD(cuvidUnmapVideoFrame64)
#undef SLUICE_NVCUVID_LOAD
  if (!missing.empty()) {
    dlclose(lib);
    return FailedPrecondition("libnvcuvid.so.1 lacks functions sluice needs (a driver too old?):", missing);
  }
  return api;
}

}  // namespace

Result<const NvcuvidApi*> NvcuvidApi::Get() {
  static const Result<NvcuvidApi> api = Load();
  if (!api.ok()) return api.status();
  return &*api;
}

std::string CuResultText(CUresult result) {
  // The driver's own names are in libcuda, which sluice does not load; the common codes by number.
  switch (result) {
    case CUDA_SUCCESS: return "CUDA_SUCCESS";
    case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
    case CUDA_ERROR_OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
    case CUDA_ERROR_NOT_SUPPORTED: return "CUDA_ERROR_NOT_SUPPORTED";
    case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
    case CUDA_ERROR_INVALID_CONTEXT: return "CUDA_ERROR_INVALID_CONTEXT";
    case CUDA_ERROR_MAP_FAILED: return "CUDA_ERROR_MAP_FAILED";
    case CUDA_ERROR_INVALID_SOURCE: return "CUDA_ERROR_INVALID_SOURCE";
    default: return "CUresult " + std::to_string(static_cast<int>(result));
  }
}

}  // namespace sluice
