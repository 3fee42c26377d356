#include "video_nvdec.h"

#include "video/video_decoder.h"

#ifdef SLUICE_WITH_CUDA
#include <cuda_runtime.h>

#include "gpu/cuda_util.h"
#include "kernels/yuv/yuv_gpu.h"
#endif

namespace sluice::python {

#ifndef SLUICE_WITH_CUDA
Status DecodeOnNvdec(const std::string&, const VideoIndex&, const std::vector<int64_t>&, const std::string&, int,
                     std::vector<uint8_t>*, std::vector<uint8_t>*, std::vector<uint8_t>*, std::vector<uint8_t>*) {
  return FailedPrecondition("NVDEC: this build of sluice has no CUDA path");
}
#else
namespace {

// Frame k's picture into host memory: RGB through the GPU kernel, or the planes as they are.
Status CopyOut(const YuvView& pic, size_t k, const std::string& format, uint8_t* device_rgb, cudaStream_t stream,
               std::vector<uint8_t>* rgb_out, std::vector<uint8_t>* y_out, std::vector<uint8_t>* u_out,
               std::vector<uint8_t>* v_out, std::vector<uint8_t>* uv) {
  const size_t h = static_cast<size_t>(pic.height), w = static_cast<size_t>(pic.width);
  if (format == "rgb") {
    uint8_t* rgb = rgb_out->data() + k * h * w * 3;
    SLUICE_CUDA_RETURN_IF_ERROR(LaunchYuvToRgb(pic, device_rgb, static_cast<ptrdiff_t>(w) * 3, stream));
    SLUICE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(rgb, device_rgb, h * w * 3, cudaMemcpyDeviceToHost, stream));
    return Status::OK();
  }
  const size_t ch = (h + 1) / 2, cw = (w + 1) / 2;
  uint8_t *y = y_out->data() + k * h * w, *u = u_out->data() + k * ch * cw, *v = v_out->data() + k * ch * cw;
  uv->resize(ch * cw * 2);
  SLUICE_CUDA_RETURN_IF_ERROR(cudaMemcpy2DAsync(y, w, pic.y, static_cast<size_t>(pic.y_stride), w, h,
                                                cudaMemcpyDeviceToHost, stream));
  SLUICE_CUDA_RETURN_IF_ERROR(cudaMemcpy2DAsync(uv->data(), cw * 2, pic.u, static_cast<size_t>(pic.uv_stride), cw * 2,
                                                ch, cudaMemcpyDeviceToHost, stream));
  SLUICE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  for (size_t i = 0; i < ch * cw; ++i) {
    u[i] = (*uv)[2 * i];
    v[i] = (*uv)[2 * i + 1];
  }
  return Status::OK();
}

}  // namespace

Status DecodeOnNvdec(const std::string& path, const VideoIndex& index, const std::vector<int64_t>& frames,
                     const std::string& format, int device, std::vector<uint8_t>* rgb, std::vector<uint8_t>* y,
                     std::vector<uint8_t>* u, std::vector<uint8_t>* v) {
  SLUICE_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  CudaStream stream;
  SLUICE_RETURN_IF_ERROR(stream.Create());
  const size_t h = static_cast<size_t>(index.height), w = static_cast<size_t>(index.width);
  uint8_t* device_rgb = nullptr;
  SLUICE_CUDA_RETURN_IF_ERROR(cudaMalloc(&device_rgb, h * w * 3));
  std::vector<uint8_t> uv;
  Status s = [&]() -> Status {
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<VideoDecoder> decoder, VideoDecoder::OpenNvdec(path, index, stream.get()));
    return decoder->Decode(frames, [&](size_t k, const YuvView& pic) -> Status {
      if (static_cast<size_t>(pic.height) != h || static_cast<size_t>(pic.width) != w)
        return Unsupported("frame ", frames[k], " is ", pic.width, "x", pic.height, ", not ", w, "x", h);
      return CopyOut(pic, k, format, device_rgb, stream.get(), rgb, y, u, v, &uv);
    });
  }();
  if (s.ok()) s = CudaStatus(cudaStreamSynchronize(stream.get()), "cudaStreamSynchronize");
  cudaFree(device_rgb);
  return s;
}
#endif

}  // namespace sluice::python
