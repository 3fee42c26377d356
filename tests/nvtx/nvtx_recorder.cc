// A profiler stand-in for tests: an NVTX injection library (loaded by NVTX through
// NVTX_INJECTION64_PATH, as Nsight Systems' is) that records the ranges of the domain "sluice".
// The test reads them back with sluice_nvtx_recorded() from the same library (dlopen of the same
// path returns the loaded copy).
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace {

std::mutex g_mu;
nvtxDomainHandle_t g_sluice = nullptr;       // the handle this library gave the domain "sluice"
std::map<std::string, long> g_opened;        // range name -> ranges opened (pushed or started)
long g_pushes = 0, g_pops = 0, g_starts = 0, g_ends = 0;
nvtxRangeId_t g_next_id = 1;

nvtxDomainHandle_t DomainCreateA(const char* name) {
  std::lock_guard<std::mutex> lock(g_mu);
  static char other;  // any domain but "sluice"
  if (std::strcmp(name, "sluice") != 0) return reinterpret_cast<nvtxDomainHandle_t>(&other);
  static char sluice;
  g_sluice = reinterpret_cast<nvtxDomainHandle_t>(&sluice);
  return g_sluice;
}

void Opened(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  if (d != g_sluice || a == nullptr || a->messageType != NVTX_MESSAGE_TYPE_ASCII) return;
  ++g_opened[a->message.ascii];
}

int DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (d == g_sluice) ++g_pushes;
  Opened(d, a);
  return 0;
}

int DomainRangePop(nvtxDomainHandle_t d) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (d == g_sluice) ++g_pops;
  return 0;
}

nvtxRangeId_t DomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (d == g_sluice) ++g_starts;
  Opened(d, a);
  return g_next_id++;
}

void DomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (d == g_sluice) ++g_ends;
}

template <typename F>
void Set(NvtxFunctionTable table, unsigned size, unsigned id, F f) {
  if (id < size && table[id] != nullptr) *table[id] = reinterpret_cast<NvtxFunctionPointer>(f);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get(NVTX_ETID_CALLBACKS));
  NvtxFunctionTable table = nullptr;
  unsigned size = 0;
  if (callbacks == nullptr || !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size)) return 0;
  Set(table, size, NVTX_CBID_CORE2_DomainCreateA, &DomainCreateA);
  Set(table, size, NVTX_CBID_CORE2_DomainRangePushEx, &DomainRangePushEx);
  Set(table, size, NVTX_CBID_CORE2_DomainRangePop, &DomainRangePop);
  Set(table, size, NVTX_CBID_CORE2_DomainRangeStartEx, &DomainRangeStartEx);
  Set(table, size, NVTX_CBID_CORE2_DomainRangeEnd, &DomainRangeEnd);
  return 1;
}

// "name=count;..." of the ranges opened in the domain "sluice", then "pushes=P;pops=Q;starts=S;ends=E".
extern "C" __attribute__((visibility("default"))) void sluice_nvtx_recorded(char* out, int capacity) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::string s;
  for (const auto& [name, n] : g_opened) s += name + "=" + std::to_string(n) + ";";
  s += "pushes=" + std::to_string(g_pushes) + ";pops=" + std::to_string(g_pops) + ";starts=" +
       std::to_string(g_starts) + ";ends=" + std::to_string(g_ends);
  std::snprintf(out, static_cast<size_t>(capacity), "%s", s.c_str());
}
