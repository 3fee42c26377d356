#include "codec/engine_state_pool.h"

#include <algorithm>

#include "gpu/cuda_util.h"

namespace sluice {

EngineStatePool::EngineStatePool(NvjpegContext* ctx, int decoders) : ctx_(ctx), decoders_(std::max(1, decoders)) {
  states_.reserve(kMaxStates);
}

EngineStatePool::~EngineStatePool() {
  for (EngineState& s : states_) {
    if (s.state != nullptr) ctx_->api().nvjpegJpegStateDestroy(s.state);
    if (s.done != nullptr) cudaEventDestroy(s.done);
  }
}

Result<EngineState*> EngineStatePool::Add() {
  if (static_cast<int>(states_.size()) >= kMaxStates) return Internal("the engine state pool is full");
  EngineState fresh;
  SLUICE_NVJPEG_RETURN_IF_ERROR(ctx_->api().nvjpegJpegStateCreate(ctx_->hardware_handle(), &fresh.state));
  states_.push_back(fresh);
  return &states_.back();
}

Status EngineStatePool::Destroy(EngineState* s) {
  SLUICE_RETURN_IF_ERROR(WaitForLastCall(*s, nullptr));
  SLUICE_NVJPEG_RETURN_IF_ERROR(ctx_->api().nvjpegJpegStateDestroy(s->state));
  if (s->done != nullptr) cudaEventDestroy(s->done);
  states_.erase(states_.begin() + (s - states_.data()));
  return Status::OK();
}

Status EngineStatePool::WaitForLastCall(const EngineState& s, cudaStream_t stream) {
  if (s.done == nullptr || (stream != nullptr && s.stream == stream)) return Status::OK();
  SLUICE_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(s.done));
  return Status::OK();
}

Status EngineStatePool::RecordCall(EngineState* s, cudaStream_t stream) {
  if (s->done == nullptr) SLUICE_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&s->done, cudaEventDisableTiming));
  SLUICE_CUDA_RETURN_IF_ERROR(cudaEventRecord(s->done, stream));
  s->stream = stream;
  return Status::OK();
}

}  // namespace sluice
