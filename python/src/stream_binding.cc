// Streamed shards: the streaming WebDataset source (io/stream_source.h), shard url expansion
// (io/shard_urls.h), and a whole shard stream's bytes (io/shard_stream.h) for the tests of
// http(s):// and pipe: reading, retries included.
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "io/shard_stream.h"
#include "io/shard_urls.h"
#include "io/stream_order.h"
#include "io/stream_source.h"

namespace sluice::python {

namespace {

std::vector<std::string> UrlsFromPy(nb::handle urls) {
  std::vector<std::string> out;
  for (nb::handle u : nb::iter(urls)) out.push_back(PathFromPy(u, "urls[" + std::to_string(out.size()) + "]"));
  return out;
}

}  // namespace

void RegisterShardStreams(nb::module_& m) {
  m.def(
      "_webdataset_stream",
      [](nb::handle urls, std::vector<int64_t> counts, const std::string& image_key, const std::string& label_key,
         const std::string& label_field, nb::handle index_cache, nb::handle cache_dir, int64_t cache_bytes, int lanes,
         int64_t window, int retries, double timeout) {
        std::vector<std::string> given = UrlsFromPy(urls);
        StreamSource::Options o;
        o.spec = SpecOf(image_key, label_key, label_field);
        o.index_cache = index_cache.is_none() ? std::string() : PathFromPy(index_cache, "index_cache");
        o.cache_dir = cache_dir.is_none() ? std::string() : PathFromPy(cache_dir, "cache_dir");
        o.cache_bytes = cache_bytes;
        o.layout.lanes = lanes;
        o.layout.window = window;
        o.stream.retries = retries;
        o.stream.timeout_s = timeout;
        Result<std::shared_ptr<const StreamSource>> r = [&]() -> Result<std::shared_ptr<const StreamSource>> {
          nb::gil_scoped_release release;  // may walk every shard
          return StreamSource::Create(std::move(given), std::move(counts), std::move(o));
        }();
        std::shared_ptr<const StreamSource> src = Unwrap(std::move(r));
        nb::list shards;
        for (const std::string& u : src->urls()) shards.append(PathToPy(u));
        const int64_t walked = src->walked_shards(), cached = src->cached_indexes();
        return nb::make_tuple(PySource{std::move(src)}, shards, walked, cached);
      },
      nb::arg("urls"), nb::arg("counts"), nb::kw_only(), nb::arg("image_key"), nb::arg("label_key"),
      nb::arg("label_field"), nb::arg("index_cache").none(), nb::arg("cache_dir").none(), nb::arg("cache_bytes"),
      nb::arg("lanes"), nb::arg("window"), nb::arg("retries"), nb::arg("timeout"),
      "(Source, shard urls, shards walked, of them indexed from the cache) of WebDataset shards read as streams; "
      "urls as _expand_shard_urls gives them; counts: samples per shard (from a manifest), or empty to walk them.");
  m.def(
      "_stream_order",
      [](const std::vector<int64_t>& shard_sizes, int lanes, int64_t window, bool shuffle, uint64_t seed, int64_t epoch,
         int world_size) {
        if (lanes < 1 || window < 1 || world_size < 1) Check(InvalidArgument("lanes, window and world_size must be >= 1"));
        for (int64_t n : shard_sizes)
          if (n < 0) Check(InvalidArgument("shard sizes must be >= 0"));
        return StreamOrder(shard_sizes, StreamLayout{lanes, window}, shuffle, seed, epoch, world_size);
      },
      nb::arg("shard_sizes"), nb::arg("lanes"), nb::arg("window"), nb::arg("shuffle"), nb::arg("seed"), nb::arg("epoch"),
      nb::arg("world_size"),
      "An epoch's order over streamed shards (io/stream_order.h): global position -> sample index; rank r takes "
      "positions r, r + world_size, ...");
  m.def(
      "_expand_shard_urls",
      [](nb::handle urls) {
        std::vector<std::string> given = UrlsFromPy(urls);
        std::vector<std::string> out = Unwrap(ExpandShardUrls(given));
        nb::list shards;
        for (const std::string& u : out) shards.append(PathToPy(u));
        return shards;
      },
      nb::arg("urls"), "The shard urls with brace patterns expanded and local globs matched (sorted).");
  m.def(
      "_shard_stream_bytes",
      [](const std::string& url, int retries, double timeout, double backoff) {
        StreamOptions o;
        o.retries = retries;
        o.timeout_s = timeout;
        o.backoff_s = backoff;
        std::string bytes;
        Status st = [&] {
          nb::gil_scoped_release release;
          SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<ShardStream> stream, ShardStream::Open(url, o, nullptr));
          std::vector<uint8_t> chunk(1 << 16);
          for (;;) {
            SLUICE_ASSIGN_OR_RETURN(size_t got, stream->input()->Read(chunk));
            bytes.append(reinterpret_cast<const char*>(chunk.data()), got);
            if (got < chunk.size()) return Status::OK();
          }
        }();
        Check(st);
        return nb::bytes(bytes.data(), bytes.size());
      },
      nb::arg("url"), nb::arg("retries") = 3, nb::arg("timeout") = 30.0, nb::arg("backoff") = 0.2,
      "All bytes of a shard stream (a path, http(s):// or pipe:), read as a walk reads them: for tests.");
}

}  // namespace sluice::python
