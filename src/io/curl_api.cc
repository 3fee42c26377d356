#include "io/curl_api.h"

#include <dlfcn.h>

#include <string>

namespace sluice {

namespace {

Result<CurlApi> Load() {
  std::string tried;
  void* lib = nullptr;
  const char* path = nullptr;
  for (const char* name : {"libcurl.so.4", "libcurl-gnutls.so.4"}) {
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) {
      path = name;
      break;
    }
    tried += (tried.empty() ? "" : ", ") + std::string(name);
  }
  if (lib == nullptr)
    return FailedPrecondition("http:// and https:// shards need libcurl, which could not be loaded (tried ", tried,
                              "): install it (Debian and Ubuntu: apt-get install libcurl4), or read the "
                              "shards through 'pipe:curl -s URL'");
  CurlApi api;
  std::string missing;
#define SLUICE_CURL_LOAD(name)                                              \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(lib, #name)); \
  if (api.name == nullptr) missing += std::string(" ") + #name;
  SLUICE_CURL_FUNCTIONS(SLUICE_CURL_LOAD)
#undef SLUICE_CURL_LOAD
  if (!missing.empty()) {
    dlclose(lib);
    return FailedPrecondition(path, " lacks functions sluice needs (libcurl 7.66 or newer):", missing);
  }
  if (api.curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
    return FailedPrecondition(path, ": curl_global_init failed");
  api.path = path;
  return api;  // the library stays loaded for the life of the process
}

}  // namespace

Result<const CurlApi*> CurlApi::Get() {
  static const Result<CurlApi> api = Load();
  if (!api.ok()) return api.status();
  return &*api;
}

}  // namespace sluice
