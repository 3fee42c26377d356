// nvJPEG loaded at run time: libnvjpeg.so.13, else .12 (from the system's library path, then the
// folder of the nvidia-nvjpeg wheel found at build time), so that one build runs on machines
// with and without it. Only the header is needed to build.
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

struct NvjpegApi {
#define SLUICE_NVJPEG_FN(name) decltype(&::name) name = nullptr;
  SLUICE_NVJPEG_FN(nvjpegCreateExV2)
  SLUICE_NVJPEG_FN(nvjpegDestroy)
  SLUICE_NVJPEG_FN(nvjpegGetHardwareDecoderInfo)
  SLUICE_NVJPEG_FN(nvjpegJpegStateCreate)
  SLUICE_NVJPEG_FN(nvjpegJpegStateDestroy)
  SLUICE_NVJPEG_FN(nvjpegDecodeBatchedInitialize)
  SLUICE_NVJPEG_FN(nvjpegDecodeBatchedEx)
  SLUICE_NVJPEG_FN(nvjpegDecodeBatchedPreAllocate)
  SLUICE_NVJPEG_FN(nvjpegDecodeBatchedSupportedEx)
  SLUICE_NVJPEG_FN(nvjpegJpegStreamCreate)
  SLUICE_NVJPEG_FN(nvjpegJpegStreamDestroy)
  SLUICE_NVJPEG_FN(nvjpegJpegStreamParse)
  SLUICE_NVJPEG_FN(nvjpegDecodeParamsCreate)
  SLUICE_NVJPEG_FN(nvjpegDecodeParamsDestroy)
  SLUICE_NVJPEG_FN(nvjpegDecodeParamsSetOutputFormat)
  SLUICE_NVJPEG_FN(nvjpegDecodeParamsSetROI)
  SLUICE_NVJPEG_FN(nvjpegDecoderCreate)
  SLUICE_NVJPEG_FN(nvjpegDecoderDestroy)
  SLUICE_NVJPEG_FN(nvjpegDecoderJpegSupported)
  SLUICE_NVJPEG_FN(nvjpegDecoderStateCreate)
  SLUICE_NVJPEG_FN(nvjpegBufferPinnedCreateV2)
  SLUICE_NVJPEG_FN(nvjpegBufferPinnedDestroy)
  SLUICE_NVJPEG_FN(nvjpegBufferDeviceCreateV2)
  SLUICE_NVJPEG_FN(nvjpegBufferDeviceDestroy)
  SLUICE_NVJPEG_FN(nvjpegStateAttachPinnedBuffer)
  SLUICE_NVJPEG_FN(nvjpegStateAttachDeviceBuffer)
  SLUICE_NVJPEG_FN(nvjpegDecodeJpegHost)
  SLUICE_NVJPEG_FN(nvjpegDecodeJpegTransferToDevice)
  SLUICE_NVJPEG_FN(nvjpegDecodeJpegDevice)
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
