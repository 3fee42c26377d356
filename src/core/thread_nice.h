// NiceThisThreadOnce: the calling thread's nice level set to `nice` the first time it calls this,
// nothing on later calls (Linux keeps a nice level per thread). For pool threads that yield to
// others once they start a kind of work: a higher nice value needs no privilege, a lower one does.
//
//   NiceThisThreadOnce(5);  // a decode thread, beside the threads that feed the engines
//
// Thread-safety: touches only the calling thread.
#ifndef SLUICE_CORE_THREAD_NICE_H_
#define SLUICE_CORE_THREAD_NICE_H_

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace sluice {

inline void NiceThisThreadOnce(int nice) {
  thread_local bool done = false;
  if (done) return;
  done = true;
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), nice);
}

}  // namespace sluice

#endif  // SLUICE_CORE_THREAD_NICE_H_
