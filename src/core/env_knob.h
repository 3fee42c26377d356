// EnvKnob: a tuning experiment's override, read from the environment once per name. Not an
// option: the probe (bench/gpu_probe.py, env.NAME=VALUE) sets these to compare settings in one
// run; the library's defaults are what users get.
//
//   static const double width = EnvKnob("SLUICE_ENGINE_IMAGES", 32);
//
// Thread-safety: a pure read of the environment; call it from a function-local static.
#ifndef SLUICE_CORE_ENV_KNOB_H_
#define SLUICE_CORE_ENV_KNOB_H_

#include <cstdlib>

namespace sluice {

// The number in $name, or `fallback` when it is unset or not a number.
inline double EnvKnob(const char* name, double fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  return end != text && *end == '\0' ? value : fallback;
}

}  // namespace sluice

#endif  // SLUICE_CORE_ENV_KNOB_H_
