// Umbrella header for the sluice C++ API.
#ifndef SLUICE_SLUICE_H_
#define SLUICE_SLUICE_H_

#include "sluice/batch.h"
#include "sluice/dlpack.h"
#include "sluice/loader.h"
#include "sluice/loader_options.h"
#include "sluice/loader_state.h"
#include "sluice/loader_stats.h"
#include "sluice/source.h"
#include "sluice/status.h"
#include "sluice/tensor.h"
#include "sluice/tensor_list.h"
#include "sluice/transforms.h"
#include "sluice/types.h"

#endif  // SLUICE_SLUICE_H_
