// SampleProcessor: one encoded image to its slot in the output batch, on the CPU.
//
//   header -> draw this sample's geometry -> pick the DCT scale -> decode only the region the
//   geometry reads -> EXIF rotation -> resample (one pass per plan segment, then its warp, if
//   any) -> colour steps -> erasing -> user functions -> finish into slot (-> erasing after
//   Normalize -> user functions on the finished sample)
//
// Thread-safety: Process() is const and may run on many threads at once, each with its own
// WorkerScratch.
#ifndef SLUICE_PIPELINE_SAMPLE_PROCESSOR_H_
#define SLUICE_PIPELINE_SAMPLE_PROCESSOR_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "codec/decoder.h"
#include "kernels/finish/finish_cpu.h"
#include "kernels/resize/resize_cpu.h"
#include "ops/augmix.h"
#include "pipeline/plan.h"
#include "core/scratch_gauge.h"
#include "core/stage_counters.h"

namespace sluice {

// Memory one worker thread reuses from sample to sample.
struct WorkerScratch {
  ImageDecoder decoder;
  std::vector<uint8_t> decoded, oriented;
  std::vector<uint8_t> segment[2];
  std::vector<uint8_t> warp_source;  // a warp segment's resampled image
  std::vector<uint8_t> filtered[2];  // the pixel passes' filter outputs
  std::vector<double> filter_rows;   // the blur's row sums
  AugMixScratch augmix;              // AugMix's chains and mix
  ResizeScratch resize;

  // The bytes its buffers hold.
  int64_t bytes() const;
  // Frees the buffers larger than `keep` bytes (one huge image must not stay a thread's memory).
  void Trim(size_t keep);
};

// After a sample on worker `worker`: reports its scratch's bytes to `gauge` (so the peak counts
// this sample), frees the buffers over 64 MiB and reports again.
void SettleScratch(WorkerScratch* scratch, int worker, ScratchGauge* gauge);

class SampleProcessor {
 public:
  SampleProcessor(const Plan& plan, const FinishParams& finish, bool dct_scaling);

  // Where a sample goes: called once with the output size; returns where to write
  // height x width x 3 elements of finish.dtype in finish.layout.
  using SlotFn = std::function<Result<void*>(int height, int width)>;

  // Decodes and transforms one sample into the memory `slot` gives. Errors describe the reason
  // (the caller adds the path).
  Status Process(const uint8_t* data, size_t size, const SampleKey& key, WorkerScratch* scratch,
                 const SlotFn& slot, StageCounters* counters) const;

  // Transforms pixels already decoded (a video frame, RGB8 HWC, which the steps may change in
  // place) into the memory `slot` gives: Process without the decoding. The frames of a clip share
  // `key`, so that they get one crop, one flip and one colour draw.
  Status ProcessPixels(const ImageView& pixels, const SampleKey& key, WorkerScratch* scratch, const SlotFn& slot,
                       StageCounters* counters) const;

  // The steps of Process, for the GPU path, which runs the last segment and the finish itself:
  // Prepare reads the header (with `decoder`, which keeps `data`) and draws the geometry.
  Status Prepare(const uint8_t* data, size_t size, const SampleKey& key, ImageDecoder* decoder,
                 ImageInfo* info, SampleGeometry* geo) const;
  // Decodes the region segment 0 reads (DCT-scaled when allowed) with scratch->decoder, which
  // must have read this sample's header, applies the EXIF rotation, and runs segments
  // [0, cpu_segments) on the CPU. Returns the pixels segment `cpu_segments` reads (valid until
  // the scratch is reused); that segment's map is made relative to them.
  Result<ImageView> DecodeRegion(const ImageInfo& info, SampleGeometry* geo, int cpu_segments,
                                 WorkerScratch* scratch, StageCounters* counters) const;

 private:
  // Segments [0, count) of `geo` from `view`, in the scratch's buffers.
  ImageView RunSegments(ImageView view, const SampleGeometry& geo, int count, WorkerScratch* s) const;
  // What follows the segments: pixel passes, colour, erasing, user functions, the finish.
  Status Complete(ImageView view, const SampleGeometry& geo, const SampleKey& key, WorkerScratch* s,
                  const SlotFn& slot, StageCounters* counters) const;

  const Plan& plan_;
  FinishParams finish_;
  FinishLut lut_;
  bool dct_scaling_;
};

// The input region (display coordinates) a segment reads.
Rect ReadRegion(const ResizeParams& p);
// Re-expresses p's maps relative to a region whose top-left input pixel is (x, y).
void ShiftRegion(ResizeParams* p, int x, int y);

// DCT scale for a first segment: the largest of 2, 4, 8 (up to max_denom) that keeps the
// decoded region at least as large as the output on both axes; 1 if none.
int ChooseScaleDenom(const ResizeParams& p, int max_denom);

}  // namespace sluice

#endif  // SLUICE_PIPELINE_SAMPLE_PROCESSOR_H_
