// NVTX ranges in the domain "sluice", so that a profiler's timeline (Nsight Systems, or anything
// that loads through NVTX_INJECTION64_PATH) shows the loader's stages and batches beside the
// model's work:
//
//   { NvtxRange r("sluice decode"); ... }              // on one thread, pushed and popped
//   uint64_t id = NvtxStart("sluice batch"); ... NvtxEnd(id);  // may end on another thread
//
// Without a profiler attached NVTX's entry points do nothing (a call through a function
// pointer). Builds without the CUDA toolkit's NVTX headers compile the ranges out.
// Thread-safety: any thread; `name` must be a string literal (or outlive the process).
#ifndef SLUICE_CORE_NVTX_H_
#define SLUICE_CORE_NVTX_H_

#include <cstdint>

#if defined(__has_include)
#if __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define SLUICE_HAS_NVTX 1
#endif
#endif

namespace sluice {

#ifdef SLUICE_HAS_NVTX
inline nvtxDomainHandle_t NvtxDomain() {
  static const nvtxDomainHandle_t domain = nvtxDomainCreateA("sluice");
  return domain;
}

inline nvtxEventAttributes_t NvtxAttributes(const char* name) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  return a;
}

inline uint64_t NvtxStart(const char* name) {
  const nvtxEventAttributes_t a = NvtxAttributes(name);
  return nvtxDomainRangeStartEx(NvtxDomain(), &a);
}
inline void NvtxEnd(uint64_t id) { nvtxDomainRangeEnd(NvtxDomain(), id); }

class NvtxRange {
 public:
  explicit NvtxRange(const char* name) {
    const nvtxEventAttributes_t a = NvtxAttributes(name);
    nvtxDomainRangePushEx(NvtxDomain(), &a);
  }
  ~NvtxRange() { nvtxDomainRangePop(NvtxDomain()); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};
#else
inline uint64_t NvtxStart(const char*) { return 0; }
inline void NvtxEnd(uint64_t) {}
class NvtxRange {
 public:
  explicit NvtxRange(const char*) {}
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};
#endif

}  // namespace sluice

#endif  // SLUICE_CORE_NVTX_H_
