// The loader's options, checked and resolved once, at Loader::Create: every value is checked
// here (errors name the option), and every policy that picks a value (the automatic thread
// counts and prefetch depth) is decided here, not in the executors.
//
// Thread-safety: pure functions.
#ifndef SLUICE_PIPELINE_RESOLVE_OPTIONS_H_
#define SLUICE_PIPELINE_RESOLVE_OPTIONS_H_

#include "pipeline/plan.h"
#include "sluice/loader_options.h"
#include "sluice/status.h"

namespace sluice {

// InvalidArgument naming the option and its value when one is out of range or contradicts the
// plan (Normalize or GaussianNoise with a uint8 output); FailedPrecondition when the CUDA device
// cannot be used.
Status CheckOptions(const LoaderOptions& options, const Plan& plan);

// `options` with every automatic value set. REQUIRES: CheckOptions(options, ...) is OK.
LoaderOptions ResolveOptions(LoaderOptions options);

}  // namespace sluice

#endif  // SLUICE_PIPELINE_RESOLVE_OPTIONS_H_
