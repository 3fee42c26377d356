// EpochReads: a Source whose reads are served by the epoch they are for. A StreamSession keeps
// a plan for the current epoch and one for the announced next; a batch the loader reads ahead
// into the next epoch must take its samples from the next plan, though the current one holds
// the same indices. The Reader passes each read's epoch where its source is one of these.
//
//   if (const auto* e = dynamic_cast<const EpochReads*>(&source)) bytes = e->ReadIn(epoch, i, memory, max);
//
// Thread-safety: as the Source's Read.
#ifndef SLUICE_IO_EPOCH_READS_H_
#define SLUICE_IO_EPOCH_READS_H_

#include <cstdint>

#include "sluice/source.h"

namespace sluice {

class EpochReads {
 public:
  virtual ~EpochReads() = default;
  // As Source::Read, for a sample of epoch `epoch`.
  virtual Result<SampleBytes> ReadIn(int64_t epoch, int64_t index, const ByteAllocator& memory,
                                     int64_t max_bytes) const = 0;
};

}  // namespace sluice

#endif  // SLUICE_IO_EPOCH_READS_H_
