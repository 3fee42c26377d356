#include "pipeline/gpu/finish_lut.h"

#include "gpu/cuda_util.h"

namespace sluice {

Result<DeviceFinishLut> UploadFinishLut(const FinishParams& params, DevicePool* pool, cudaStream_t stream) {
  const FinishLut lut = FinishLut::Build(params);
  DeviceFinishLut d;
  d.bytes = sizeof(lut.f32) + sizeof(lut.f16);
  SLUICE_ASSIGN_OR_RETURN(void* dev, pool->Allocate(d.bytes, stream));
  d.data = static_cast<uint8_t*>(dev);
  SLUICE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(d.data, lut.f32, sizeof(lut.f32), cudaMemcpyHostToDevice, stream));
  SLUICE_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(d.data + sizeof(lut.f32), lut.f16, sizeof(lut.f16), cudaMemcpyHostToDevice, stream));
  SLUICE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  d.finish = GpuFinish{params.dtype, params.layout, reinterpret_cast<const float*>(d.data),
                       reinterpret_cast<const uint16_t*>(d.data + sizeof(lut.f32))};
  return d;
}

}  // namespace sluice
