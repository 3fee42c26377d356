// NvdecPictures: a video stream decoded on the GPU's video engines (NVDEC) of the current CUDA
// device. Packets go through FFmpeg's bitstream filter to the start-code form NVDEC's parser
// reads (H.264, HEVC in MP4/MKV); each seek starts a new parser, fed the parameter sets first;
// the decoder is made at the first sequence header and kept. Pictures come out as NV12 in device
// memory, mapped on the caller's stream; each stays mapped while the next is handed over, and is
// released once the work queued on the stream for it is done (an event, waited for then).
//
// Thread-safety: one thread at a time, with the CUDA device current; several may run at once
// (the engines are shared by all).
#ifndef SLUICE_VIDEO_NVDEC_PICTURES_H_
#define SLUICE_VIDEO_NVDEC_PICTURES_H_

#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "video/demuxer.h"
#include "video/nvcuvid_api.h"
#include "video/picture_source.h"

namespace sluice {

// An NVDEC decoder and the format it was made for, kept from video to video by one decode session
// (VideoDecoder::OpenNvdec's `slot`): made again only when a video's coded size, display area or
// codec differs. Destroys the decoder; used by one thread at a time, with the same CUDA device.
struct NvdecDecoderSlot {
  ~NvdecDecoderSlot();
  const NvcuvidApi* nv = nullptr;
  CUvideodecoder decoder = nullptr;
  CUVIDEOFORMAT format{};
  unsigned surfaces = 0;
  unsigned target_height = 0;  // the output surface's rows (the chroma plane follows them)
};

class NvdecPictures : public PictureSource {
 public:
  // For `demuxer`'s stream (which must outlive it); the decoder kept in `slot` (null: its own).
  // Errors: FailedPrecondition (no GPU, no libnvcuvid), Unsupported (a codec NVDEC has no engine
  // for).
  static Result<std::unique_ptr<NvdecPictures>> Create(const Demuxer& demuxer, cudaStream_t stream,
                                                       NvdecDecoderSlot* slot = nullptr);
  ~NvdecPictures() override;

  Status Restart() override;
  Status Send(AVPacket* packet, const PictureFn& out) override;

 private:
  NvdecPictures(const Demuxer& demuxer, const NvcuvidApi& nv, cudaVideoCodec codec, cudaStream_t stream,
                NvdecDecoderSlot* slot);
  static int CUDAAPI OnSequence(void* self, CUVIDEOFORMAT* format);
  static int CUDAAPI OnDecode(void* self, CUVIDPICPARAMS* picture);
  static int CUDAAPI OnDisplay(void* self, CUVIDPARSERDISPINFO* info);
  // Makes (or keeps) the decoder for `format`; the decode surfaces the parser may use, 0 on error.
  int Sequence(const CUVIDEOFORMAT& format);
  Status Parse(const uint8_t* data, size_t size, int64_t pts, unsigned flags);
  // Hands over the pictures the parser displayed, each mapped, then released.
  Status TakeShown(const PictureFn& out);
  // Unmaps the picture held since its hand-over, once the work queued for it is done.
  Status ReleaseHeld();

  const Demuxer& demuxer_;
  const NvcuvidApi& nv_;
  const cudaVideoCodec codec_;
  cudaStream_t stream_;
  AVBSFContext* bsf_ = nullptr;  // to start codes (null where the packets need none)
  AVPacket* filtered_ = nullptr;
  CUvideoparser parser_ = nullptr;
  std::unique_ptr<NvdecDecoderSlot> own_slot_;  // when no session keeps the decoder
  NvdecDecoderSlot* slot_;
  std::vector<CUVIDPARSERDISPINFO> shown_;
  unsigned long long held_ = 0;  // the mapped picture handed over last (0: none)
  cudaEvent_t done_[2] = {};     // recorded on the stream after the work queued for a picture
  int held_done_ = 0;            // held_'s event
  Status failed_;  // an error inside a parser callback
};

}  // namespace sluice

#endif  // SLUICE_VIDEO_NVDEC_PICTURES_H_
