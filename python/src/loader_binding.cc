// sluice._core.Loader: the C++ Loader with the GIL released while it works or waits.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "gpu/device.h"
#include "pipeline/gpu_executor.h"
#include "sluice/loader.h"

namespace sluice::python {

namespace {

Source MakeSource(const nb::handle& source) {
  if (nb::isinstance<nb::str>(source)) return Unwrap(Source::ImageFolder(nb::cast<std::string>(source)));
  std::vector<Sample> samples;
  for (nb::handle item : nb::iter(source)) {
    auto pair = nb::cast<std::pair<std::string, int64_t>>(item);
    samples.push_back(Sample{std::move(pair.first), pair.second});
  }
  return Unwrap(Source::FromList(std::move(samples)));
}

nb::dict StatsToDict(const LoaderStats& s, bool gpu) {
  nb::dict d;
  d["samples"] = s.samples;
  d["batches"] = s.batches;
  d["bytes_read"] = s.bytes_read;
  nb::dict stages;
  stages["read"] = s.read_s;
  stages["decode"] = s.decode_s;
  stages["transform"] = s.transform_s;
  stages["collate"] = s.collate_s;
  d["stage_seconds"] = stages;
  d["wait_seconds"] = s.wait_s;
  d["wall_seconds"] = s.wall_s;
  d["num_threads"] = s.num_threads;
  d["io_threads"] = s.io_threads;
  d["host_memory_in_use"] = s.host_memory_in_use;
  d["host_memory_peak"] = s.host_memory_peak;
  if (gpu) {
    d["gpu_memory_in_use"] = s.gpu_memory_in_use;
    d["gpu_memory_peak"] = s.gpu_memory_peak;
    d["pinned_memory_peak"] = s.pinned_memory_peak;
    nb::dict routes;
    routes["hardware"] = s.route_samples[0];
    routes["hybrid"] = s.route_samples[1];
    routes["cpu"] = s.route_samples[2];
    d["route_samples"] = routes;
  }
  d["skipped_count"] = s.skipped_count;
  nb::list skipped;
  for (const SkippedSample& k : s.skipped) {
    nb::dict e;
    e["path"] = k.path;
    e["index"] = k.index;
    e["epoch"] = k.epoch;
    e["reason"] = k.reason;
    skipped.append(e);
  }
  d["skipped"] = skipped;
  return d;
}

nb::dict StateToDict(const LoaderState& st) {
  nb::dict d;
  d["epoch"] = st.epoch;
  d["batches"] = st.batches;
  d["epoch_batches"] = st.epoch_batches;
  d["num_samples"] = st.num_samples;
  d["dataset_digest"] = st.dataset_digest;
  d["shuffle"] = st.shuffle;
  d["seed"] = st.seed;
  d["batch_size"] = st.batch_size;
  d["world_size"] = st.world_size;
  d["last_batch"] = LastBatchName(st.last_batch);
  d["resumed_from"] = nb::bytes(reinterpret_cast<const char*>(st.resumed_from.data()), st.resumed_from.size());
  return d;
}

}  // namespace

void RegisterLoader(nb::module_& m) {
  m.def("cuda_device_count", &CudaDeviceCount,
        "CUDA devices this process can use (0 without a GPU, a driver or the CUDA build)");
  m.attr("built_with_cuda") = BuiltWithCuda();
  m.def("_debug_skip_consumer_wait", &SetSkipConsumerWaitForTesting,
        "Fault injection for tests: batches stop making the consumer's stream wait for them");
  nb::class_<Loader>(m, "Loader")
      .def_static(
          "create",
          [](nb::handle source, std::vector<transforms::Transform> transforms, int batch_size,
             bool shuffle, uint64_t seed, const std::string& last_batch, const std::string& dtype,
             const std::string& layout, const std::string& on_error, const std::string& device,
             int num_threads, int io_threads, int prefetch, bool dct_scaling,
             const std::string& decode_route, int64_t gpu_memory_budget, int rank, int world_size) {
            Source src = MakeSource(source);
            LoaderOptions o;
            o.batch_size = batch_size;
            o.shuffle = shuffle;
            o.seed = seed;
            o.last_batch = Unwrap(ParseLastBatch(last_batch));
            o.dtype = Unwrap(ParseDType(dtype));
            o.layout = Unwrap(ParseLayout(layout));
            o.on_error = Unwrap(ParseOnError(on_error));
            o.device = Unwrap(ParseDevice(device));
            o.num_threads = num_threads;
            o.io_threads = io_threads;
            o.prefetch = prefetch;
            o.dct_scaling = dct_scaling;
            o.decode_route = Unwrap(ParseDecodeRoute(decode_route));
            if (gpu_memory_budget > 0) o.gpu_memory_budget = gpu_memory_budget;
            o.rank = rank;
            o.world_size = world_size;
            Result<std::unique_ptr<Loader>> r = [&] {
              nb::gil_scoped_release release;  // Create() starts threads; raise after it returns
              return Loader::Create(std::move(src), std::move(transforms), o);
            }();
            return Unwrap(std::move(r));
          },
          nb::arg("source"), nb::arg("transforms"), nb::arg("batch_size"), nb::arg("shuffle"),
          nb::arg("seed"), nb::arg("last_batch"), nb::arg("dtype"), nb::arg("layout"),
          nb::arg("on_error"), nb::arg("device"), nb::arg("num_threads"), nb::arg("io_threads"),
          nb::arg("prefetch"), nb::arg("dct_scaling"), nb::arg("decode_route") = "auto",
          nb::arg("gpu_memory_budget") = 0, nb::arg("rank") = 0, nb::arg("world_size") = 1)
      .def_prop_ro("num_samples", &Loader::num_samples)
      .def_prop_ro("num_batches", &Loader::num_batches)
      .def_prop_ro("output_size", &Loader::output_size)
      .def_prop_ro("classes", [](const Loader& l) { return l.source().classes(); })
      .def_prop_ro("samples",
                   [](const Loader& l) {
                     nb::list out;
                     for (const Sample& s : l.source().samples()) out.append(nb::make_tuple(s.path, s.label));
                     return out;
                   })
      .def("start_epoch",
           [](Loader& l, int64_t epoch) {
             Status s;
             {
               nb::gil_scoped_release release;
               s = l.StartEpoch(epoch);
             }
             Check(s);
           })
      .def("next",
           [](Loader& l) -> nb::object {
             Result<std::optional<Batch>> r = [&] {
               nb::gil_scoped_release release;
               return l.Next();
             }();
             std::optional<Batch> batch = Unwrap(std::move(r));
             if (!batch) return nb::none();
             nb::object images;
             if (l.output_size()) {
               images = nb::cast(PyTensor{batch->images});
             } else {  // variable-size outputs: a list
               nb::list list;
               for (const Tensor& t : batch->image_list.tensors()) list.append(PyTensor{t});
               images = list;
             }
             return nb::make_tuple(images, PyTensor{batch->labels}, nb::cast(batch->indices),
                                   batch->epoch, batch->index,
                                   nb::bytes(reinterpret_cast<const char*>(batch->padding.data()),
                                             batch->padding.size()));
           })
      .def("close",
           [](Loader& l) {
             nb::gil_scoped_release release;  // user functions in flight need the GIL to finish
             l.Close();
           })
      .def("state", [](const Loader& l) { return StateToDict(l.State()); })
      .def("load_state",
           [](Loader& l, int64_t epoch, int64_t batches, int64_t epoch_batches, int64_t num_samples,
              uint64_t dataset_digest, bool shuffle, uint64_t seed, int batch_size, int world_size,
              const std::string& last_batch, nb::bytes resumed_from) {
             LoaderState st;
             st.epoch = epoch;
             st.batches = batches;
             st.epoch_batches = epoch_batches;
             st.num_samples = num_samples;
             st.dataset_digest = dataset_digest;
             st.shuffle = shuffle;
             st.seed = seed;
             st.batch_size = batch_size;
             st.world_size = world_size;
             st.last_batch = Unwrap(ParseLastBatch(last_batch));
             const auto* flags = static_cast<const uint8_t*>(resumed_from.data());
             st.resumed_from.assign(flags, flags + resumed_from.size());
             Status loaded;
             {
               nb::gil_scoped_release release;  // may wait for work in flight (user functions)
               loaded = l.LoadState(st);
             }
             Check(loaded);
           })
      .def("stats", [](const Loader& l) {
        return StatsToDict(l.stats(), l.options().device.type == DeviceType::kCUDA);
      })
      .def("reset_stats", &Loader::ResetStats);
}

}  // namespace sluice::python
