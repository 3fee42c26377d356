#include "video/nvdec_pictures.h"

#include <algorithm>
#include <cstring>

#include "video/video_decoder.h"

namespace sluice {

namespace {

cudaVideoCodec NvdecCodec(AVCodecID id) {
  switch (id) {
    case AV_CODEC_ID_H264: return cudaVideoCodec_H264;
    case AV_CODEC_ID_HEVC: return cudaVideoCodec_HEVC;
    case AV_CODEC_ID_VP8: return cudaVideoCodec_VP8;
    case AV_CODEC_ID_VP9: return cudaVideoCodec_VP9;
    case AV_CODEC_ID_AV1: return cudaVideoCodec_AV1;
    case AV_CODEC_ID_MPEG4: return cudaVideoCodec_MPEG4;
    case AV_CODEC_ID_MPEG2VIDEO: return cudaVideoCodec_MPEG2;
    default: return cudaVideoCodec_NumCodecs;
  }
}

YuvMatrix MatrixOf(unsigned char coefficients) {
  if (coefficients == 1) return YuvMatrix::kBt709;  // H.273's codes
  if (coefficients == 9 || coefficients == 10) return YuvMatrix::kBt2020;
  return YuvMatrix::kBt601;
}

}  // namespace

Result<std::unique_ptr<VideoDecoder>> VideoDecoder::OpenNvdec(const std::string& path, const VideoIndex& index,
                                                              void* stream, NvdecDecoderSlot* slot) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Demuxer> demuxer, Demuxer::Open(path, /*probe=*/false));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<NvdecPictures> pictures,
                          NvdecPictures::Create(*demuxer, static_cast<cudaStream_t>(stream), slot));
  return std::make_unique<VideoDecoder>(std::move(demuxer), index, std::move(pictures));
}

NvdecDecoderSlot::~NvdecDecoderSlot() {
  if (decoder != nullptr) nv->cuvidDestroyDecoder(decoder);
}

NvdecPictures::NvdecPictures(const Demuxer& demuxer, const NvcuvidApi& nv, cudaVideoCodec codec, cudaStream_t stream,
                             NvdecDecoderSlot* slot)
    : demuxer_(demuxer), nv_(nv), codec_(codec), stream_(stream),
      own_slot_(slot == nullptr ? std::make_unique<NvdecDecoderSlot>() : nullptr),
      slot_(slot == nullptr ? own_slot_.get() : slot) {
  slot_->nv = &nv;
}

Result<std::unique_ptr<NvdecPictures>> NvdecPictures::Create(const Demuxer& demuxer, cudaStream_t stream,
                                                             NvdecDecoderSlot* slot) {
  SLUICE_ASSIGN_OR_RETURN(const NvcuvidApi* nv, NvcuvidApi::Get());
  const FfmpegApi& av = demuxer.av();
  const AVCodecID id = demuxer.codec().codec_id;
  const cudaVideoCodec codec = NvdecCodec(id);
  if (codec == cudaVideoCodec_NumCodecs) return Unsupported("NVDEC has no engine for ", av.avcodec_get_name(id));
  if (const cudaError_t e = cudaFree(nullptr); e != cudaSuccess)  // the device's context, current on this thread
    return FailedPrecondition("NVDEC needs a CUDA device: ", cudaGetErrorString(e));
  std::unique_ptr<NvdecPictures> p(new NvdecPictures(demuxer, *nv, codec, stream, slot));
  const char* filter = id == AV_CODEC_ID_H264 ? "h264_mp4toannexb" : id == AV_CODEC_ID_HEVC ? "hevc_mp4toannexb" : nullptr;
  if (filter != nullptr) {
    const AVBitStreamFilter* f = av.av_bsf_get_by_name(filter);
    if (f == nullptr) return FailedPrecondition("this FFmpeg lacks the ", filter, " bitstream filter NVDEC needs");
    if (av.av_bsf_alloc(f, &p->bsf_) < 0) return ResourceExhausted("out of memory for a bitstream filter");
    int rc = av.avcodec_parameters_copy(p->bsf_->par_in, &demuxer.codec());
    if (rc >= 0) {
      p->bsf_->time_base_in = demuxer.stream().time_base;
      rc = av.av_bsf_init(p->bsf_);
    }
    if (rc < 0) return CorruptData("the stream's parameter sets: ", av.ErrorText(rc));
  }
  if ((p->filtered_ = av.av_packet_alloc()) == nullptr) return ResourceExhausted("out of memory for a packet");
  for (cudaEvent_t& done : p->done_)
    if (const cudaError_t e = cudaEventCreateWithFlags(&done, cudaEventDisableTiming); e != cudaSuccess)
      return Internal("CUDA: ", cudaGetErrorString(e));
  SLUICE_RETURN_IF_ERROR(p->Restart());
  return p;
}

NvdecPictures::~NvdecPictures() {
  (void)ReleaseHeld();  // a destructor: nothing to report to
  for (cudaEvent_t e : done_)
    if (e != nullptr) cudaEventDestroy(e);
  if (parser_ != nullptr) nv_.cuvidDestroyVideoParser(parser_);
  const FfmpegApi& av = demuxer_.av();
  av.av_packet_free(&filtered_);
  av.av_bsf_free(&bsf_);
}

Status NvdecPictures::Restart() {
  SLUICE_RETURN_IF_ERROR(ReleaseHeld());
  if (parser_ != nullptr) nv_.cuvidDestroyVideoParser(parser_);
  parser_ = nullptr;
  shown_.clear();
  CUVIDPARSERPARAMS params{};
  params.CodecType = codec_;
  params.ulMaxNumDecodeSurfaces = 1;  // the sequence callback gives the real count
  const AVRational tb = demuxer_.stream().time_base;
  params.ulClockRate = tb.num == 1 ? static_cast<unsigned>(tb.den) : 0;
  params.ulMaxDisplayDelay = 1;
  params.pUserData = this;
  params.pfnSequenceCallback = &NvdecPictures::OnSequence;
  params.pfnDecodePicture = &NvdecPictures::OnDecode;
  params.pfnDisplayPicture = &NvdecPictures::OnDisplay;
  if (const CUresult r = nv_.cuvidCreateVideoParser(&parser_, &params); r != CUDA_SUCCESS)
    return FailedPrecondition("cannot make an NVDEC parser: ", CuResultText(r));
  // A new parser knows no parameter sets: give it the stream's (start-code form after the filter;
  // for AV1 the OBUs after the 4-byte header of MP4's and Matroska's av1C record). VP8's and
  // VP9's extradata is a description, not bitstream: their key frames carry what they need.
  const AVCodecParameters& par = bsf_ != nullptr ? *bsf_->par_out : demuxer_.codec();
  if (codec_ == cudaVideoCodec_VP8 || codec_ == cudaVideoCodec_VP9) return Status::OK();
  const bool av1c = codec_ == cudaVideoCodec_AV1 && par.extradata_size > 4 && (par.extradata[0] & 0x80) != 0;
  const int skip = av1c ? 4 : 0;
  if (par.extradata_size > skip)
    return Parse(par.extradata + skip, static_cast<size_t>(par.extradata_size - skip), 0, 0);
  return Status::OK();
}

Status NvdecPictures::Parse(const uint8_t* data, size_t size, int64_t pts, unsigned flags) {
  CUVIDSOURCEDATAPACKET packet{};
  packet.flags = flags;
  packet.payload = data;
  packet.payload_size = static_cast<unsigned long>(size);
  packet.timestamp = pts;
  const CUresult r = nv_.cuvidParseVideoData(parser_, &packet);
  SLUICE_RETURN_IF_ERROR(failed_);
  if (r != CUDA_SUCCESS) return CorruptData("NVDEC could not parse the stream: ", CuResultText(r));
  return Status::OK();
}

Status NvdecPictures::Send(AVPacket* packet, const PictureFn& out) {
  if (packet == nullptr) {
    SLUICE_RETURN_IF_ERROR(Parse(nullptr, 0, 0, CUVID_PKT_ENDOFSTREAM));
    const Status taken = TakeShown(out);
    const Status released = ReleaseHeld();
    return taken.ok() ? released : taken;
  }
  const FfmpegApi& av = demuxer_.av();
  if (bsf_ == nullptr) {
    const int64_t pts = packet->pts != AV_NOPTS_VALUE ? packet->pts : packet->dts;
    SLUICE_RETURN_IF_ERROR(Parse(packet->data, static_cast<size_t>(packet->size), pts, CUVID_PKT_TIMESTAMP));
    return TakeShown(out);
  }
  int rc = av.av_bsf_send_packet(bsf_, packet);
  if (rc < 0) return CorruptData("damaged data in the video stream: ", av.ErrorText(rc));
  while ((rc = av.av_bsf_receive_packet(bsf_, filtered_)) == 0) {
    const int64_t pts = filtered_->pts != AV_NOPTS_VALUE ? filtered_->pts : filtered_->dts;
    Status s = Parse(filtered_->data, static_cast<size_t>(filtered_->size), pts, CUVID_PKT_TIMESTAMP);
    av.av_packet_unref(filtered_);
    SLUICE_RETURN_IF_ERROR(s);
    SLUICE_RETURN_IF_ERROR(TakeShown(out));
  }
  if (rc != AVERROR(EAGAIN) && rc != AVERROR_EOF) return CorruptData("damaged data in the video stream: ", av.ErrorText(rc));
  return Status::OK();
}

int CUDAAPI NvdecPictures::OnSequence(void* self, CUVIDEOFORMAT* format) {
  return static_cast<NvdecPictures*>(self)->Sequence(*format);
}

int CUDAAPI NvdecPictures::OnDecode(void* self, CUVIDPICPARAMS* picture) {
  auto* p = static_cast<NvdecPictures*>(self);
  if (p->slot_->decoder == nullptr) return 0;
  if (const CUresult r = p->nv_.cuvidDecodePicture(p->slot_->decoder, picture); r != CUDA_SUCCESS) {
    p->failed_ = CorruptData("NVDEC could not decode a picture: ", CuResultText(r));
    return 0;
  }
  return 1;
}

int CUDAAPI NvdecPictures::OnDisplay(void* self, CUVIDPARSERDISPINFO* info) {
  if (info != nullptr) static_cast<NvdecPictures*>(self)->shown_.push_back(*info);
  return 1;
}

int NvdecPictures::Sequence(const CUVIDEOFORMAT& f) {
  const unsigned surfaces = std::max<unsigned>(f.min_num_decode_surfaces, 8) + 4;
  NvdecDecoderSlot& d = *slot_;
  if (d.decoder != nullptr && f.codec == d.format.codec && f.coded_width == d.format.coded_width &&
      f.coded_height == d.format.coded_height &&
      std::memcmp(&f.display_area, &d.format.display_area, sizeof(f.display_area)) == 0 && surfaces <= d.surfaces) {
    d.format = f;  // the same decoder; this video's colour description
    return static_cast<int>(d.surfaces);
  }
  if (f.chroma_format != cudaVideoChromaFormat_420 || f.bit_depth_luma_minus8 != 0) {
    failed_ = Unsupported("NVDEC path: sluice reads 8-bit 4:2:0 video (this is ", 8 + f.bit_depth_luma_minus8,
                          "-bit, chroma format ", static_cast<int>(f.chroma_format), ")");
    return 0;
  }
  CUVIDDECODECAPS caps{};
  caps.eCodecType = f.codec;
  caps.eChromaFormat = f.chroma_format;
  caps.nBitDepthMinus8 = f.bit_depth_luma_minus8;
  const char* codec = demuxer_.av().avcodec_get_name(demuxer_.codec().codec_id);
  if (nv_.cuvidGetDecoderCaps(&caps) != CUDA_SUCCESS || !caps.bIsSupported) {
    failed_ = Unsupported("this GPU's NVDEC does not decode ", codec, " 4:2:0 8-bit");
    return 0;
  }
  if (f.coded_width < caps.nMinWidth || f.coded_height < caps.nMinHeight || f.coded_width > caps.nMaxWidth ||
      f.coded_height > caps.nMaxHeight) {
    failed_ = Unsupported("this GPU's NVDEC decodes ", codec, " from ", caps.nMinWidth, "x", caps.nMinHeight, " to ",
                          caps.nMaxWidth, "x", caps.nMaxHeight, "; this video is ", f.coded_width, "x", f.coded_height);
    return 0;
  }
  if (Status released = ReleaseHeld(); !released.ok()) {  // mapped from the decoder about to go
    failed_ = released;
    return 0;
  }
  if (d.decoder != nullptr) nv_.cuvidDestroyDecoder(d.decoder);
  d.decoder = nullptr;
  CUVIDDECODECREATEINFO info{};
  info.ulWidth = f.coded_width;
  info.ulHeight = f.coded_height;
  info.ulMaxWidth = f.coded_width;
  info.ulMaxHeight = f.coded_height;
  info.ulNumDecodeSurfaces = surfaces;
  info.CodecType = f.codec;
  info.ChromaFormat = f.chroma_format;
  info.ulCreationFlags = cudaVideoCreate_PreferCUVID;
  info.display_area.left = static_cast<short>(f.display_area.left);
  info.display_area.top = static_cast<short>(f.display_area.top);
  info.display_area.right = static_cast<short>(f.display_area.right);
  info.display_area.bottom = static_cast<short>(f.display_area.bottom);
  info.OutputFormat = cudaVideoSurfaceFormat_NV12;
  info.DeinterlaceMode = cudaVideoDeinterlaceMode_Weave;
  info.ulTargetWidth = static_cast<unsigned>((f.display_area.right - f.display_area.left + 1) & ~1);
  info.ulTargetHeight = static_cast<unsigned>((f.display_area.bottom - f.display_area.top + 1) & ~1);
  info.ulNumOutputSurfaces = 2;
  if (const CUresult r = nv_.cuvidCreateDecoder(&d.decoder, &info); r != CUDA_SUCCESS) {
    d.decoder = nullptr;
    failed_ = FailedPrecondition("cannot make an NVDEC decoder: ", CuResultText(r));
    return 0;
  }
  d.format = f;
  d.surfaces = surfaces;
  d.target_height = static_cast<unsigned>(info.ulTargetHeight);
  return static_cast<int>(surfaces);
}

Status NvdecPictures::TakeShown(const PictureFn& out) {
  Status status;
  for (const CUVIDPARSERDISPINFO& info : shown_) {
    if (!status.ok()) break;
    CUVIDPROCPARAMS proc{};
    proc.progressive_frame = info.progressive_frame;
    proc.top_field_first = info.top_field_first;
    proc.unpaired_field = info.repeat_first_field < 0;
    proc.output_stream = stream_;
    unsigned long long frame = 0;
    unsigned pitch = 0;
    const NvdecDecoderSlot& d = *slot_;
    if (const CUresult r = nv_.cuvidMapVideoFrame64(d.decoder, info.picture_index, &frame, &pitch, &proc);
        r != CUDA_SUCCESS) {
      status = CorruptData("NVDEC could not map a picture: ", CuResultText(r));
      break;
    }
    YuvView view;
    view.y = reinterpret_cast<const uint8_t*>(frame);
    view.u = view.y + static_cast<size_t>(pitch) * d.target_height;
    view.v = view.u + 1;
    view.y_stride = view.uv_stride = pitch;
    view.uv_step = 2;
    view.width = d.format.display_area.right - d.format.display_area.left;
    view.height = d.format.display_area.bottom - d.format.display_area.top;
    view.matrix = MatrixOf(d.format.video_signal_description.matrix_coefficients);
    view.full_range = d.format.video_signal_description.video_full_range_flag != 0;
    view.device = true;
    status = out(info.timestamp, view);
    // The work `out` queued reads the picture: it stays mapped until that is done, which is
    // waited for after the next picture's work is queued.
    const int event = held_ != 0 ? 1 - held_done_ : held_done_;
    const cudaError_t e = cudaEventRecord(done_[event], stream_);
    if (Status released = ReleaseHeld(); !released.ok() && status.ok()) status = released;
    if (e != cudaSuccess) {  // nothing to wait for later: wait now
      cudaStreamSynchronize(stream_);
      nv_.cuvidUnmapVideoFrame64(d.decoder, frame);
      if (status.ok()) status = Internal("CUDA: ", cudaGetErrorString(e));
      continue;
    }
    held_ = frame;
    held_done_ = event;
  }
  shown_.clear();
  return status;
}

Status NvdecPictures::ReleaseHeld() {
  if (held_ == 0) return Status::OK();
  const cudaError_t e = cudaEventSynchronize(done_[held_done_]);
  nv_.cuvidUnmapVideoFrame64(slot_->decoder, held_);
  held_ = 0;
  if (e != cudaSuccess) return Internal("CUDA: ", cudaGetErrorString(e));
  return Status::OK();
}

}  // namespace sluice
