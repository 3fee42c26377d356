#include "codec/nvjpeg_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace sluice {

namespace {

#ifndef SLUICE_NVJPEG_LIB_HINT
#define SLUICE_NVJPEG_LIB_HINT ""
#endif

// Where to look, in order: $SLUICE_NVJPEG_LIBRARY (the Python package sets it to the
// nvidia-nvjpeg wheel's library, the `[cuda]` extra, since a wheel's folder is on no library
// path), then each version by name (the system's library path) and in the build-time hint folder.
std::vector<std::string> Candidates() {
  std::vector<std::string> out;
  if (const char* chosen = std::getenv("SLUICE_NVJPEG_LIBRARY"); chosen != nullptr && *chosen != '\0')
    out.emplace_back(chosen);
  const std::string hint = SLUICE_NVJPEG_LIB_HINT;
  for (const char* name : {"libnvjpeg.so.13", "libnvjpeg.so.12"}) {
    out.emplace_back(name);
    if (!hint.empty()) out.push_back(hint + "/" + name);
  }
  return out;
}

Result<NvjpegApi> Load() {
  std::string tried;
  void* lib = nullptr;
  std::string path;
  for (const std::string& candidate : Candidates()) {
    lib = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) {
      path = candidate;
      break;
    }
    tried += (tried.empty() ? "" : ", ") + candidate;
  }
  if (lib == nullptr)
    return FailedPrecondition("nvJPEG could not be loaded (tried ", tried,
                              "); install the CUDA toolkit's nvJPEG or `pip install nvidia-nvjpeg`, "
                              "or use decode_route='cpu'");
  NvjpegApi api;
  bool ok = true;
  std::string missing;
#define SLUICE_NVJPEG_LOAD(name)                                                  \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(lib, #name));             \
  if (api.name == nullptr) ok = false, missing += std::string(" ") + #name;
  SLUICE_NVJPEG_FUNCTIONS(SLUICE_NVJPEG_LOAD)
#undef SLUICE_NVJPEG_LOAD
  if (!ok) {
    dlclose(lib);
    return FailedPrecondition(path, " lacks functions sluice needs:", missing);
  }
  static std::string loaded;  // written once, under the static initialization below
  loaded = path;
  api.path = loaded.c_str();
  return api;  // the library stays loaded for the life of the process
}

}  // namespace

Result<const NvjpegApi*> NvjpegApi::Get() {
  static const Result<NvjpegApi> api = Load();
  if (!api.ok()) return api.status();
  return &*api;
}

const char* NvjpegStatusName(nvjpegStatus_t s) {
  switch (s) {
    case NVJPEG_STATUS_SUCCESS: return "NVJPEG_STATUS_SUCCESS";
    case NVJPEG_STATUS_NOT_INITIALIZED: return "NVJPEG_STATUS_NOT_INITIALIZED";
    case NVJPEG_STATUS_INVALID_PARAMETER: return "NVJPEG_STATUS_INVALID_PARAMETER";
    case NVJPEG_STATUS_BAD_JPEG: return "NVJPEG_STATUS_BAD_JPEG";
    case NVJPEG_STATUS_JPEG_NOT_SUPPORTED: return "NVJPEG_STATUS_JPEG_NOT_SUPPORTED";
    case NVJPEG_STATUS_ALLOCATOR_FAILURE: return "NVJPEG_STATUS_ALLOCATOR_FAILURE";
    case NVJPEG_STATUS_EXECUTION_FAILED: return "NVJPEG_STATUS_EXECUTION_FAILED";
    case NVJPEG_STATUS_ARCH_MISMATCH: return "NVJPEG_STATUS_ARCH_MISMATCH";
    case NVJPEG_STATUS_INTERNAL_ERROR: return "NVJPEG_STATUS_INTERNAL_ERROR";
    case NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED: return "NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED";
    case NVJPEG_STATUS_INCOMPLETE_BITSTREAM: return "NVJPEG_STATUS_INCOMPLETE_BITSTREAM";
    default: return "NVJPEG_STATUS_UNKNOWN";
  }
}

Status NvjpegStatus(nvjpegStatus_t s, const char* what) {
  switch (s) {
    case NVJPEG_STATUS_SUCCESS: return Status::OK();
    case NVJPEG_STATUS_BAD_JPEG:
    case NVJPEG_STATUS_INCOMPLETE_BITSTREAM:
      return CorruptData("nvJPEG: ", NvjpegStatusName(s), " in ", what);
    case NVJPEG_STATUS_JPEG_NOT_SUPPORTED:
    case NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED:
      return Unsupported("nvJPEG: ", NvjpegStatusName(s), " in ", what);
    case NVJPEG_STATUS_ALLOCATOR_FAILURE:
      return ResourceExhausted("nvJPEG: ", NvjpegStatusName(s), " in ", what);
    default:
      return Internal("nvJPEG: ", NvjpegStatusName(s), " in ", what);
  }
}

}  // namespace sluice
