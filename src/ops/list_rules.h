// ListState: what a transform list implies so far, as Plan::Create walks it (the output size, the
// Normalize, what samples may carry, the user functions), and the placement rules that hold for
// every op by its kind. An op's own rules (the size it gives, what it counts, what it refuses)
// are its op table entry's `place`.
//
// The kinds' rules, in list order: user functions come after every other transform but
// Normalize (after pixel functions) or nothing (after finished ones); erasing comes after the
// geometric, colour and noise transforms; GaussianNoise after the geometric and colour ones;
// colour transforms after the crops, resizes and padding (flips may follow them, not an
// auto-augment), and before Normalize.
//
// Thread-safety: a value used by one thread.
#ifndef SLUICE_OPS_LIST_RULES_H_
#define SLUICE_OPS_LIST_RULES_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "sluice/status.h"
#include "sluice/transforms.h"

namespace sluice {

// What an op does, for the placement rules.
enum class OpKind : uint8_t {
  kGeometry,   // crops, resizes, padding, warps: a resampling of the image
  kFlip,       // flips: geometry that may also follow colour transforms
  kPixel,      // colour steps and filters on the resampled uint8 image
  kNoise,      // GaussianNoise, in the finish step
  kErase,      // erasing, in the finish step
  kNormalize,  // Normalize
  kFunction,   // user functions (Lambda)
  kGate,       // RandomApply, RandomChoice, RandomOrder and their ranges: markers of the ops after them
};

// A user function of the list, and its position there (the op index of its random stream).
struct PlacedFunction {
  transforms::Lambda fn;
  uint32_t position = 0;
};

struct ListState {
  int out_height = 0, out_width = 0;  // the fixed output size so far; 0: depends on the image
  std::optional<transforms::Normalize> normalize;
  bool has_color = false, has_warp = false, has_erase = false, has_grid = false, has_noise = false;
  int color_steps = 0;  // colour adjustments a sample can carry, at most
  int max_filters = 0;  // filters (blurs, sharpness, auto-augment warps) a sample can carry
  int erase_rects = 0;  // erased rectangles a sample can carry
  const char* color = nullptr;    // the first colour transform
  const char* augment = nullptr;  // the first RandAugment, TrivialAugmentWide or AutoAugment
  const char* erase = nullptr;    // the first erasing transform
  const char* cpu_only = nullptr;  // a transform the GPU path does not run (ElasticTransform)
  std::vector<PlacedFunction> pixel_fns, finished_fns;  // user functions, in list order
  uint32_t placed = 0;  // ops recorded so far: the position of the op being placed
  struct Gate {
    uint32_t end;                 // the position after its last op
    int out_height, out_width;    // the output size when it opened
    const char* owner;            // "RandomApply", "RandomChoice" or "RandomOrder"
  };
  std::vector<Gate> gates;        // gated ranges open at the op being placed, innermost last
  struct Block {                  // a RandomChoice's options or a RandomOrder's items to come
    int remaining;
    uint32_t next;                // where the next one's marker must stand
    bool order;
  };
  std::vector<Block> blocks;

  // Whether an op of `kind` named `name` may come next (Unsupported naming both, if not).
  Status CheckOrder(OpKind kind, const char* name) const;
  // Records that it came (after its own `place`); closes the RandomApply ranges it ends
  // (Unsupported when their ops changed the output size).
  Status Record(OpKind kind, const char* name);
  // For RandomApply's `place`: the next `count` ops are gated together (InvalidArgument when
  // they reach past a range around it).
  Status OpenGate(int count, const char* owner = "RandomApply");
  // For RandomChoice's and RandomOrder's `place`: `items` ranges follow, each behind its marker.
  Status OpenBlock(int items, bool order);
  // For ChoiceOption's and OrderItem's `place`: the next of the open block's ranges, `count` ops.
  Status BlockItem(int count, bool order);

  // For the ops' `place`: a pixel transform that adds up to `steps` colour adjustments and
  // `filters` filters per sample; an erasing transform that adds up to `rects` rectangles.
  // Unsupported when a sample could carry more than the kernels take.
  Status AddPixelSteps(int steps, int filters);
  Status AddEraseRects(int rects);
  // Unsupported when a Normalize came before `name` ("put Normalize last").
  Status RefuseAfterNormalize(const char* name) const;
};

}  // namespace sluice

#endif  // SLUICE_OPS_LIST_RULES_H_
