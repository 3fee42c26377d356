// NVDEC, the GPU's video decoding engines, through the driver's libnvcuvid.so.1 loaded at run time
// (no link dependency: the CUDA build runs where the driver lacks it, and video then falls back to
// the CPU). Types and function signatures come from FFmpeg's ffnvcodec headers (Debian:
// libffmpeg-nvenc-dev), which sluice needs only to build.
//
//   SLUICE_ASSIGN_OR_RETURN(const NvcuvidApi* nv, NvcuvidApi::Get());
//   nv->cuvidCreateVideoParser(&parser, &params);
//
// Thread-safety: Get() may be called from any thread; the table is immutable once loaded.
#ifndef SLUICE_VIDEO_NVCUVID_API_H_
#define SLUICE_VIDEO_NVCUVID_API_H_

#include <cuda.h>  // before ffnvcodec, which then uses the toolkit's CUDA types

#include <ffnvcodec/dynlink_cuviddec.h>
#include <ffnvcodec/dynlink_nvcuvid.h>

#include <string>

#include "sluice/status.h"

namespace sluice {

// The libnvcuvid functions sluice calls (ffnvcodec names their types tcuvidXxx).
#define SLUICE_NVCUVID_FUNCTIONS(X) \
  X(cuvidGetDecoderCaps)            \
  X(cuvidCreateDecoder)             \
  X(cuvidDestroyDecoder)            \
  X(cuvidDecodePicture)             \
  X(cuvidCreateVideoParser)         \
  X(cuvidParseVideoData)            \
  X(cuvidDestroyVideoParser)

struct NvcuvidApi {
#define SLUICE_NVCUVID_FN(name) t##name* name = nullptr;
  SLUICE_NVCUVID_FUNCTIONS(SLUICE_NVCUVID_FN)
#undef SLUICE_NVCUVID_FN
  // The 64-bit mapping functions (ffnvcodec maps the plain names onto them).
  tcuvidMapVideoFrame64* cuvidMapVideoFrame64 = nullptr;
  tcuvidUnmapVideoFrame64* cuvidUnmapVideoFrame64 = nullptr;

  // The loaded library, or FailedPrecondition saying why (no driver library, too old).
  static Result<const NvcuvidApi*> Get();
};

// "CUDA_ERROR_...: what" for a driver result.
std::string CuResultText(CUresult result);

}  // namespace sluice

#endif  // SLUICE_VIDEO_NVCUVID_API_H_
