// Reads an ImageFolder with sluice's C++ API and walks two epochs, as a training loop would.
//   train_loop DATA [batch_size]
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "sluice/sluice.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DATA [batch_size]\n", argv[0]);
    return 2;
  }
  auto source = sluice::Source::ImageFolder(argv[1]);
  if (!source.ok()) {
    std::fprintf(stderr, "error: %s\n", source.status().message().c_str());
    return 1;
  }
  sluice::LoaderOptions options;
  options.batch_size = argc > 2 ? std::atoi(argv[2]) : 32;
  options.shuffle = true;
  options.seed = 42;
  options.dtype = sluice::DType::kFloat16;
  options.on_error = sluice::OnError::kSkip;

  namespace T = sluice::transforms;
  std::vector<T::Transform> transforms = {
      T::RandomResizedCrop{224, 224},
      T::RandomHorizontalFlip{},
      T::Normalize{{0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f}},
  };
  auto loader = sluice::Loader::Create(*source, transforms, options);
  if (!loader.ok()) {
    std::fprintf(stderr, "error: %s\n", loader.status().message().c_str());
    return 1;
  }
  std::printf("%lld images in %zu classes, %lld batches per epoch\n",
              static_cast<long long>((*loader)->num_samples()), (*source)->classes().size(),
              static_cast<long long>((*loader)->num_batches()));

  for (int epoch = 0; epoch < 2; ++epoch) {
    if (auto s = (*loader)->StartEpoch(epoch); !s.ok()) return 1;
    const auto start = std::chrono::steady_clock::now();
    int64_t images = 0, batches = 0;
    for (;;) {
      auto batch = (*loader)->Next();
      if (!batch.ok()) {  // only with on_error = kRaise
        std::fprintf(stderr, "error: %s\n", batch.status().message().c_str());
        return 1;
      }
      if (!batch->has_value()) break;  // end of epoch
      const sluice::Batch& b = **batch;
      // Hand the images to any DLPack consumer; here we only look and release.
      DLManagedTensor* dl = b.images.ToDLPack();
      if (dl->dl_tensor.ndim != 4 || dl->dl_tensor.shape[1] != 3 || dl->dl_tensor.dtype.bits != 16) {
        std::fprintf(stderr, "unexpected batch layout\n");
        return 1;
      }
      images += dl->dl_tensor.shape[0];
      dl->deleter(dl);
      ++batches;
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("epoch %d: %lld batches, %lld images, %.0f images/s\n", epoch,
                static_cast<long long>(batches), static_cast<long long>(images), images / s);
  }
  const sluice::LoaderStats st = (*loader)->stats();
  std::printf("decode %.3f s, transform %.3f s, collate %.3f s over %d threads; %lld skipped\n",
              st.decode_s, st.transform_s, st.collate_s, st.num_threads,
              static_cast<long long>(st.skipped_count));
  return 0;
}
