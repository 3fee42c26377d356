// EnvKnob: a tuning experiment's override, read from the environment once per name. Not an
// option: the probe (bench/gpu_probe.py, env.NAME=VALUE) sets these to compare settings in one
// run; the library's defaults are what users get.
//
//   static const double width = EnvKnob("SLUICE_ENGINE_IMAGES", 32);
//   static const std::vector<int> sizes = EnvKnobInts("SLUICE_ENGINE_STATES");
//
// Thread-safety: a pure read of the environment; call it from a function-local static.
#ifndef SLUICE_CORE_ENV_KNOB_H_
#define SLUICE_CORE_ENV_KNOB_H_

#include <cstdlib>
#include <vector>

namespace sluice {

// The number in $name, or `fallback` when it is unset or not a number.
inline double EnvKnob(const char* name, double fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  return end != text && *end == '\0' ? value : fallback;
}

// The whole numbers in $name, separated by ',' or ':' ("128:224"); none when it is unset.
inline std::vector<int> EnvKnobInts(const char* name) {
  std::vector<int> out;
  const char* text = std::getenv(name);
  while (text != nullptr && *text != '\0') {
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    if (end == text) break;
    out.push_back(static_cast<int>(value));
    text = *end == ',' || *end == ':' ? end + 1 : end;
  }
  return out;
}

}  // namespace sluice

#endif  // SLUICE_CORE_ENV_KNOB_H_
