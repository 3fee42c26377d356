#include "sluice/loader.h"

#include "gpu/device.h"
#include "pipeline/executor.h"
#include "pipeline/gpu_executor.h"
#include "pipeline/plan.h"

namespace sluice {

class Loader::Impl {
 public:
  Impl(Source source, Plan plan, LoaderOptions options)
      : source_(std::move(source)), plan_(std::move(plan)), options_(options),
        shard_{source_.size(), options.shuffle, options.seed, options.batch_size, options.last_batch,
               options.rank, options.world_size} {}

  Status Start() {
    // Epoch 0's schedule: checks rank, world size and policy before any work starts.
    SLUICE_ASSIGN_OR_RETURN(EpochSchedule first, EpochSchedule::Create(shard_, 0));
    schedule_ = std::make_shared<const EpochSchedule>(std::move(first));
    if (options_.device.type == DeviceType::kCUDA) {
      SLUICE_ASSIGN_OR_RETURN(executor_, CreateGpuExecutor(source_, plan_, options_));
    } else {
      executor_ = std::make_unique<Executor>(source_, plan_, options_);
    }
    return Status::OK();
  }

  Source source_;
  Plan plan_;
  LoaderOptions options_;
  ShardOptions shard_;
  std::shared_ptr<const EpochSchedule> schedule_;  // of the current (or next) epoch
  std::unique_ptr<BatchExecutor> executor_;
};

namespace {
Status CheckOptions(const LoaderOptions& o, const Plan& plan) {
  if (o.batch_size < 1) return InvalidArgument("batch_size must be at least 1, got ", o.batch_size);
  if (o.num_threads < 0) return InvalidArgument("num_threads must be >= 0 (0 = automatic), got ", o.num_threads);
  if (o.io_threads < 0) return InvalidArgument("io_threads must be >= 0 (0 = automatic), got ", o.io_threads);
  if (o.prefetch < 1) return InvalidArgument("prefetch must be at least 1, got ", o.prefetch);
  if (o.dtype == DType::kInt64) return InvalidArgument("dtype must be uint8, float16 or float32, not int64");
  if (o.dtype == DType::kUInt8 && plan.normalize())
    return InvalidArgument("Normalize needs a float output: pass dtype='float32' or 'float16'");
  if (o.gpu_memory_budget <= 0)
    return InvalidArgument("gpu_memory_budget must be > 0 bytes, got ", o.gpu_memory_budget);
  if (o.device.type == DeviceType::kCUDA) return CheckCudaDevice(o.device.index);
  if (o.decode_route != DecodeRoute::kAuto)
    return InvalidArgument("decode_route='", DecodeRouteName(o.decode_route),
                           "' needs device='cuda' (the CPU path decodes with libjpeg-turbo)");
  return Status::OK();
}
}  // namespace

Result<std::unique_ptr<Loader>> Loader::Create(Source source,
                                               std::vector<transforms::Transform> transforms,
                                               LoaderOptions options) {
  if (source.size() == 0) return InvalidArgument("the dataset is empty");
  if (source.size() >= (int64_t{1} << 32))
    return InvalidArgument("datasets of 2^32 samples or more are not supported");
  SLUICE_ASSIGN_OR_RETURN(Plan plan, Plan::Create(std::move(transforms)));
  SLUICE_RETURN_IF_ERROR(CheckOptions(options, plan));
  auto impl = std::make_unique<Impl>(std::move(source), std::move(plan), options);
  SLUICE_RETURN_IF_ERROR(impl->Start());
  return std::unique_ptr<Loader>(new Loader(std::move(impl)));
}

Loader::Loader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Loader::~Loader() = default;

int64_t Loader::num_samples() const { return impl_->source_.size(); }
int64_t Loader::num_batches() const { return impl_->schedule_->num_batches(); }
std::optional<std::pair<int, int>> Loader::output_size() const {
  if (!impl_->plan_.fixed_size()) return std::nullopt;
  return std::make_pair(impl_->plan_.out_height(), impl_->plan_.out_width());
}
const Source& Loader::source() const { return impl_->source_; }
const LoaderOptions& Loader::options() const { return impl_->options_; }

Status Loader::StartEpoch(int64_t epoch) {
  if (epoch < 0) return InvalidArgument("epoch must be >= 0, got ", epoch);
  if (impl_->schedule_->epoch() != epoch) {
    SLUICE_ASSIGN_OR_RETURN(EpochSchedule s, EpochSchedule::Create(impl_->shard_, epoch));
    impl_->schedule_ = std::make_shared<const EpochSchedule>(std::move(s));
  }
  impl_->executor_->StartEpoch(impl_->schedule_);
  return Status::OK();
}

Result<std::optional<Batch>> Loader::Next() { return impl_->executor_->Next(); }
LoaderStats Loader::stats() const { return impl_->executor_->Stats(); }
void Loader::ResetStats() { impl_->executor_->ResetStats(); }

}  // namespace sluice
