// Spaced: whether an occasional chore (sweeping a loader's idle buffers as an epoch starts) is
// due, at most once per interval: a short epoch comes often, and a chore that costs the driver
// time (freeing pinned memory synchronizes the device) need not come with each. The first call is
// always due; an interval of 0 makes every call due. Pure: the caller passes the clock.
//
// Thread-safety: a value; one thread at a time.
#ifndef SLUICE_CORE_SPACED_H_
#define SLUICE_CORE_SPACED_H_

#include <cstdint>

namespace sluice {

class Spaced {
 public:
  explicit Spaced(int64_t interval_ns) : interval_ns_(interval_ns) {}

  // True when no call returned true within the interval before now_ns (and then this one counts).
  bool Due(int64_t now_ns) {
    if (last_ns_ >= 0 && now_ns - last_ns_ < interval_ns_) return false;
    last_ns_ = now_ns;
    return true;
  }

 private:
  int64_t interval_ns_;
  int64_t last_ns_ = -1;
};

}  // namespace sluice

#endif  // SLUICE_CORE_SPACED_H_
