// sluice._core.Loader: the C++ Loader with the GIL released while it works or waits.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "bindings.h"
#include "gpu/device.h"
#include "io/weighted_source.h"
#include "pipeline/gpu/gpu_executor.h"
#include "sluice/loader.h"

namespace sluice::python {

namespace {

// A source made in C++ (PySource), an ImageFolder root (a path), or (path, label) pairs (Python
// checked that they are pairs).
std::shared_ptr<const Source> MakeSource(const nb::handle& source) {
  if (nb::isinstance<PySource>(source)) return nb::cast<const PySource&>(source).source;
  if (nb::isinstance<nb::str>(source) || nb::isinstance<nb::bytes>(source))
    return Unwrap(Source::ImageFolder(PathFromPy(source, "source")));
  std::vector<Sample> samples;
  for (nb::handle item : nb::iter(source)) {
    const std::string what = "source[" + std::to_string(samples.size()) + "]";
    samples.push_back(Sample{PathFromPy(item[0], what + " path"), ToInt(what + " label", item[1], INT64_MIN, INT64_MAX)});
  }
  return Unwrap(Source::FromList(std::move(samples)));
}

// The GPU path's figures: its memory, routes and engines.
void AddGpuStats(nb::dict& d, const LoaderStats& s) {
  d["gpu_memory_in_use"] = s.gpu_memory_in_use;
  d["gpu_memory_peak"] = s.gpu_memory_peak;
  d["gpu_memory_reserved"] = s.gpu_memory_reserved;
  d["gpu_memory_reserved_nvjpeg"] = s.gpu_memory_reserved_nvjpeg;
  d["gpu_memory_allocated"] = s.gpu_memory_allocated;
  d["gpu_memory_allocated_nvjpeg"] = s.gpu_memory_allocated_nvjpeg;
  d["gpu_pool_overflows"] = s.gpu_pool_overflows;
  d["pinned_memory_peak"] = s.pinned_memory_peak;
  d["pinned_memory_held"] = s.pinned_memory_held;
  nb::dict routes;
  for (int r = 0; r < kNumRoutes; ++r) routes[DecodeRouteName(kRoutes[r])] = s.route_samples[r];
  d["route_samples"] = routes;
  nb::dict pixels;
  for (int r = 0; r < kNumRoutes; ++r) pixels[DecodeRouteName(kRoutes[r])] = s.route_pixels[r];
  d["route_pixels"] = pixels;
  nb::list windows;
  for (const RouteWindow& w : s.route_windows) {
    nb::dict e;
    e["cpu_share"] = w.cpu_share, e["images_per_s"] = w.images_per_s, e["seconds"] = w.seconds;
    e["engine_busy"] = w.engine_busy, e["phase"] = w.phase;
    windows.append(e);
  }
  d["route_windows"] = windows;
  d["engine_busy_seconds"] = s.engine_busy_s;
  nb::dict engine_threads;
  engine_threads["turn"] = s.engine_busy_s, engine_threads["turn_wait"] = s.engine_turn_wait_s;
  engine_threads["memory_wait"] = s.engine_memory_wait_s, engine_threads["pack"] = s.engine_pack_s;
  d["engine_thread_seconds"] = engine_threads;
  d["engine_state_inits"] = s.engine_state_inits;
  d["engine_state_seconds"] = s.engine_state_s;
  d["engine_calls"] = s.engine_calls;
  d["engine_pads"] = s.engine_pads;
  d["gpu_local_cpus"] = s.gpu_local_cpus;
}

nb::dict StatsToDict(const LoaderStats& s, bool gpu) {
  nb::dict d;
  d["samples"] = s.samples;
  d["batches"] = s.batches;
  d["bytes_read"] = s.bytes_read;
  if (s.video_frames_decoded > 0) d["video_frames_decoded"] = s.video_frames_decoded;
  auto stages = [](double read, double decode, double transform, double collate) {
    nb::dict t;
    t["read"] = read, t["decode"] = decode, t["transform"] = transform, t["collate"] = collate;
    return t;
  };
  d["stage_seconds"] = stages(s.read_s, s.decode_s, s.transform_s, s.collate_s);
  d["stage_cpu_seconds"] = stages(s.read_cpu_s, s.decode_cpu_s, s.transform_cpu_s, s.collate_cpu_s);
  d["wait_seconds"] = s.wait_s;
  d["wall_seconds"] = s.wall_s;
  d["num_threads"] = s.num_threads;
  d["io_threads"] = s.io_threads;
  d["prefetch"] = s.prefetch;
  nb::dict tuning;
  tuning["settled"] = s.tuning_settled;
  tuning["why"] = s.tuning;
  d["tuning"] = tuning;
  d["host_memory_in_use"] = s.host_memory_in_use;
  d["host_memory_peak"] = s.host_memory_peak;
  d["host_memory_cached"] = s.host_memory_cached;
  if (s.cache_budget > 0) {
    nb::dict cache;
    cache["hits"] = s.cache_hits;
    cache["misses"] = s.cache_misses;
    cache["bytes"] = s.cache_bytes;
    cache["budget"] = s.cache_budget;
    d["cache"] = cache;
  }
  if (s.stream_shards > 0) {
    nb::dict stream;
    stream["shards"] = s.stream_shards;
    stream["shards_from_disk_cache"] = s.stream_shards_from_disk_cache;
    stream["bytes"] = s.stream_bytes;
    stream["held_peak"] = s.stream_held_peak;
    stream["buffer_bytes"] = s.stream_buffer_bytes;
    d["stream"] = stream;
  }
  if (s.disk_cache_budget > 0) {
    nb::dict disk;
    disk["hits"] = s.disk_cache_hits;
    disk["misses"] = s.disk_cache_misses;
    disk["evictions"] = s.disk_cache_evictions;
    disk["bytes"] = s.disk_cache_bytes;
    disk["budget"] = s.disk_cache_budget;
    d["disk_cache"] = disk;
  }
  if (gpu) AddGpuStats(d, s);
  d["skipped_count"] = s.skipped_count;
  nb::list skipped;
  for (const SkippedSample& k : s.skipped) {
    nb::dict e;
    e["path"] = PathToPy(k.path);
    e["index"] = k.index;
    e["epoch"] = k.epoch;
    e["reason"] = MessageToPy(k.reason);
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

// The inverse of StateToDict. InvalidArgument ("load_state_dict: malformed state: ...") for a key
// missing or of the wrong type.
LoaderState DictToState(const nb::dict& d) {
  auto get = [&d]<typename T>(const char* key, T* out) {
    if (!d.contains(key)) Check(InvalidArgument("load_state_dict: malformed state: no '", key, "'"));
    if (!nb::try_cast<T>(d[key], *out))
      Check(InvalidArgument("load_state_dict: malformed state: '", key, "' is ",
                            nb::cast<std::string>(nb::repr(d[key]))));
  };
  LoaderState st;
  get("epoch", &st.epoch);
  get("batches", &st.batches);
  get("epoch_batches", &st.epoch_batches);
  get("num_samples", &st.num_samples);
  get("dataset_digest", &st.dataset_digest);
  get("shuffle", &st.shuffle);
  get("seed", &st.seed);
  get("batch_size", &st.batch_size);
  get("world_size", &st.world_size);
  std::string last_batch;
  get("last_batch", &last_batch);
  st.last_batch = Unwrap(ParseLastBatch(last_batch));
  nb::bytes flags;
  get("resumed_from", &flags);
  const auto* p = static_cast<const uint8_t*>(flags.data());
  st.resumed_from.assign(p, p + flags.size());
  return st;
}

std::unique_ptr<Loader> Create(nb::handle source, std::vector<transforms::Transform> transforms,
                               const LoaderOptions& options) {
  std::shared_ptr<const Source> src = MakeSource(source);
  Result<std::unique_ptr<Loader>> r = [&] {
    nb::gil_scoped_release release;  // Create() starts threads; raise after it returns
    return Loader::Create(std::move(src), std::move(transforms), options);
  }();
  return Unwrap(std::move(r));
}

// The next batch as (images, labels, indices, epoch, index, padding flags), or None at the end
// of the epoch; images are one tensor, or a list when their sizes vary.
// It waits in short steps with the GIL released, checking for signals between them: Ctrl-C
// raises KeyboardInterrupt at once, and the batch stays in flight for the next call.
nb::object NextBatch(Loader& l) {
  constexpr std::chrono::milliseconds kStep(100);
  Result<std::optional<Batch>> r = DeadlineExceeded("not yet");
  for (;;) {
    {
      nb::gil_scoped_release release;
      r = l.Next(kStep);
    }
    if (r.ok() || r.status().code() != StatusCode::kDeadlineExceeded) break;
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
  }
  if (!r.ok()) ThrowBatchStatus(r.status());
  std::optional<Batch> batch = std::move(r).value();
  if (!batch) return nb::none();
  nb::object images;
  if (l.output_size()) {
    images = nb::cast(PyTensor{batch->images});
  } else {
    nb::list list;
    for (const Tensor& t : batch->image_list.tensors()) list.append(PyTensor{t});
    images = list;
  }
  return nb::make_tuple(images, PyTensor{batch->labels}, nb::cast(batch->indices), batch->epoch, batch->index,
                        nb::bytes(reinterpret_cast<const char*>(batch->padding.data()), batch->padding.size()));
}

}  // namespace

void RegisterLoader(nb::module_& m) {
  m.def("cuda_device_count", &CudaDeviceCount,
        "CUDA devices this process can use (0 without a GPU, a driver or the CUDA build)");
  m.attr("built_with_cuda") = BuiltWithCuda();
  m.def("_debug_skip_consumer_wait", &SetSkipConsumerWaitForTesting,
        "Fault injection for tests: batches stop making the consumer's stream wait for them");
  m.def(
      "weighted_source",
      [](nb::handle source, std::vector<double> weights, bool replacement) {
        return PySource{Unwrap(WeightedSource::Create(MakeSource(source), std::move(weights), replacement))};
      },
      nb::arg("source"), nb::arg("weights"), nb::arg("replacement"),
      "A source (folder, pair list or C++ source) whose epochs are drawn with per-sample weights");
  nb::class_<Loader>(m, "Loader")
      .def_static("create", &Create, nb::arg("source"), nb::arg("transforms"), nb::arg("options"))
      .def_prop_ro(
          "options", [](const Loader& l) { return l.options(); },
          "A copy of the options it runs with, the automatic ones resolved")
      .def_prop_ro("num_samples", &Loader::num_samples)
      .def_prop_ro("num_batches", &Loader::num_batches)
      .def_prop_ro("output_size", &Loader::output_size)
      .def_prop_ro("classes",
                   [](const Loader& l) {
                     nb::list out;
                     for (const std::string& c : l.source().classes()) out.append(PathToPy(c));
                     return out;
                   })
      .def_prop_ro("samples",
                   [](const Loader& l) {
                     nb::list out;
                     const Source& s = l.source();
                     for (int64_t i = 0; i < s.size(); ++i) out.append(nb::make_tuple(PathToPy(s.name(i)), s.label(i)));
                     return out;
                   })
      .def("start_epoch",
           [](Loader& l, nb::handle value) {
             const int64_t epoch = ToInt("epoch", value, 0, INT64_MAX);
             Status s;
             {
               nb::gil_scoped_release release;
               s = l.StartEpoch(epoch);
             }
             Check(s);
           })
      .def("next", &NextBatch)
      .def("close",
           [](Loader& l) {
             nb::gil_scoped_release release;  // user functions in flight need the GIL to finish
             l.Close();
           })
      .def("state", [](const Loader& l) { return StateToDict(l.State()); })
      .def("load_state",
           [](Loader& l, const nb::dict& state) {
             const LoaderState st = DictToState(state);
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
