#include "video/ffmpeg_api.h"

#include <dlfcn.h>

#include <string>

namespace sluice {

namespace {

#define SLUICE_STR2(x) #x
#define SLUICE_STR(x) SLUICE_STR2(x)

// Loads one library, kept for the life of the process (FFmpeg's globals live in it), local: its
// symbols do not interpose on another copy of FFmpeg in the process (PyAV's, OpenCV's).
Result<void*> Open(const char* soname, const char* package) {
  void* lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (lib != nullptr) return lib;
  const char* why = dlerror();
  return FailedPrecondition("video needs FFmpeg's ", soname, ", which could not be loaded (", why ? why : "not found",
                            "): install it (Debian 12: apt-get install ", package,
                            "), the FFmpeg version whose headers sluice was built with");
}

Result<FfmpegApi> Load() {
  // libavcodec and libavformat need libavutil; load in dependency order.
  SLUICE_ASSIGN_OR_RETURN(void* util, Open("libavutil.so." SLUICE_STR(LIBAVUTIL_VERSION_MAJOR),
                                           "libavutil" SLUICE_STR(LIBAVUTIL_VERSION_MAJOR)));
  SLUICE_ASSIGN_OR_RETURN(void* codec, Open("libavcodec.so." SLUICE_STR(LIBAVCODEC_VERSION_MAJOR),
                                            "libavcodec" SLUICE_STR(LIBAVCODEC_VERSION_MAJOR)));
  SLUICE_ASSIGN_OR_RETURN(void* format, Open("libavformat.so." SLUICE_STR(LIBAVFORMAT_VERSION_MAJOR),
                                             "libavformat" SLUICE_STR(LIBAVFORMAT_VERSION_MAJOR)));
  FfmpegApi api;
  std::string missing;
#define SLUICE_AV_LOAD(lib, name)                                        \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(lib, #name)); \
  if (api.name == nullptr) missing += std::string(" ") + #name;
#define SLUICE_AV_LOAD_UTIL(name) SLUICE_AV_LOAD(util, name)
#define SLUICE_AV_LOAD_CODEC(name) SLUICE_AV_LOAD(codec, name)
#define SLUICE_AV_LOAD_FORMAT(name) SLUICE_AV_LOAD(format, name)
  SLUICE_AVUTIL_FUNCTIONS(SLUICE_AV_LOAD_UTIL)
  SLUICE_AVCODEC_FUNCTIONS(SLUICE_AV_LOAD_CODEC)
  SLUICE_AVFORMAT_FUNCTIONS(SLUICE_AV_LOAD_FORMAT)
#undef SLUICE_AV_LOAD_UTIL
#undef SLUICE_AV_LOAD_CODEC
#undef SLUICE_AV_LOAD_FORMAT
#undef SLUICE_AV_LOAD
  if (!missing.empty()) return FailedPrecondition("FFmpeg's libraries lack functions sluice needs:", missing);
  // Damaged input comes back to the caller as a status naming the file; FFmpeg's own log would
  // repeat it on stderr from every decode thread.
  api.av_log_set_level(AV_LOG_QUIET);
  api.libraries = "libavformat.so." SLUICE_STR(LIBAVFORMAT_VERSION_MAJOR);
  return api;
}

}  // namespace

Result<const FfmpegApi*> FfmpegApi::Get() {
  static const Result<FfmpegApi> api = Load();
  if (!api.ok()) return api.status();
  return &*api;
}

std::string FfmpegApi::ErrorText(int code) const {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  if (av_strerror(code, text, sizeof(text)) < 0) return "FFmpeg error " + std::to_string(code);
  return text;
}

}  // namespace sluice
