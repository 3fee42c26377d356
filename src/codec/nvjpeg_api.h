// nvJPEG loaded at run time: $SLUICE_NVJPEG_LIBRARY where set (sluice's Python package sets it to
// an installed nvidia-nvjpeg wheel's library), else libnvjpeg.so.13, else .12 (from the system's
// library path, then the folder of the nvidia-nvjpeg wheel found at build time), so that one
// build runs on machines with and without it. Only the header is needed to build.
//
// Also holds the process-wide pieces every decoder shares: one library handle per backend.
//
// Thread-safety: NvjpegApi::Get() may be called from any thread; the function table is
// immutable once loaded. nvJPEG handles are thread-safe; states are not (see the decoders).
#ifndef SLUICE_CODEC_NVJPEG_API_H_
#define SLUICE_CODEC_NVJPEG_API_H_

#include <nvjpeg.h>

#include "sluice/status.h"

namespace sluice {

// The nvJPEG functions sluice calls, each declared and loaded from this one list.
#define SLUICE_NVJPEG_FUNCTIONS(X) \
  X(nvjpegCreateExV2) \
  X(nvjpegDestroy) \
  X(nvjpegGetHardwareDecoderInfo) \
  X(nvjpegJpegStateCreate) \
  X(nvjpegJpegStateDestroy) \
  X(nvjpegDecodeBatchedInitialize) \
  X(nvjpegDecodeBatchedEx) \
  X(nvjpegJpegStreamCreate) \
  X(nvjpegJpegStreamDestroy) \
  X(nvjpegJpegStreamParse) \
  X(nvjpegDecodeParamsCreate) \
  X(nvjpegDecodeParamsDestroy) \
  X(nvjpegDecodeParamsSetOutputFormat) \
  X(nvjpegDecodeParamsSetROI) \
  X(nvjpegDecoderCreate) \
  X(nvjpegDecoderDestroy) \
  X(nvjpegDecoderStateCreate) \
  X(nvjpegBufferPinnedCreateV2) \
  X(nvjpegBufferPinnedDestroy) \
  X(nvjpegBufferDeviceCreateV2) \
  X(nvjpegBufferDeviceDestroy) \
  X(nvjpegStateAttachPinnedBuffer) \
  X(nvjpegStateAttachDeviceBuffer) \
  X(nvjpegDecodeJpegHost) \
  X(nvjpegDecodeJpegTransferToDevice) \
  X(nvjpegDecodeJpegDevice)

struct NvjpegApi {
#define SLUICE_NVJPEG_FN(name) decltype(&::name) name = nullptr;
  SLUICE_NVJPEG_FUNCTIONS(SLUICE_NVJPEG_FN)
#undef SLUICE_NVJPEG_FN

  // The loaded library, or why it could not be loaded (the error names the files tried).
  static Result<const NvjpegApi*> Get();
  const char* path = "";  // the file that was loaded
};

// "NVJPEG_STATUS_BAD_JPEG" and the like.
const char* NvjpegStatusName(nvjpegStatus_t s);

// OK, or `code`("<what>: <status name>"); bad or unsupported streams map to CorruptData and
// Unsupported, the rest to Internal.
Status NvjpegStatus(nvjpegStatus_t s, const char* what);

#define SLUICE_NVJPEG_RETURN_IF_ERROR(expr)                                               \
  do {                                                                                    \
    const nvjpegStatus_t sluice_nvjpeg_status_ = (expr);                                  \
    if (sluice_nvjpeg_status_ != NVJPEG_STATUS_SUCCESS)                                   \
      return ::sluice::NvjpegStatus(sluice_nvjpeg_status_, #expr);                        \
  } while (0)

}  // namespace sluice

#endif  // SLUICE_CODEC_NVJPEG_API_H_
