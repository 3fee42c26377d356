// Tar shards: the indexed WebDataset source (io/tar_source.h) and the members sluice's tar reader
// finds (io/tar_reader.h), the latter for tests against Python's tarfile and the webdataset library.
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/vector.h>

#include <optional>

#include "bindings.h"
#include "io/shard_urls.h"
#include "io/tar_reader.h"
#include "io/tar_source.h"

namespace sluice::python {

WebDatasetSpec SpecOf(const std::string& image_key, const std::string& label_key, const std::string& label_field) {
  WebDatasetSpec spec;
  spec.image_exts = Unwrap(ParseExtList(image_key, "image_key"));
  spec.label_exts = label_key.empty() ? std::vector<std::string>{} : Unwrap(ParseExtList(label_key, "label_key"));
  spec.label_field = label_field;
  return spec;
}

namespace {

// urls: brace patterns and globs expanded in C++; keys: "jpg;jpeg" lists; label_key "" for none.
std::shared_ptr<const TarSource> MakeWebDataset(const std::vector<std::string>& urls, const std::string& image_key,
                        const std::string& label_key, const std::string& label_field,
                        const std::string& index_cache) {
  WebDatasetSpec spec = SpecOf(image_key, label_key, label_field);
  Result<std::shared_ptr<const TarSource>> r = [&]() -> Result<std::shared_ptr<const TarSource>> {
    nb::gil_scoped_release release;  // walks every shard
    SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> shards, ExpandShardUrls(urls));
    return TarSource::Create(shards, std::move(spec), index_cache);
  }();
  return Unwrap(std::move(r));
}

}  // namespace

void RegisterShards(nb::module_& m) {
  nb::class_<PySource>(m, "Source", "A sample source made in C++, for Loader.create.")
      .def("__len__", [](const PySource& s) { return s.source->size(); })
      .def("name", [](const PySource& s, int64_t i) { return PathToPy(s.source->name(i)); }, nb::arg("index"))
      .def("label", [](const PySource& s, int64_t i) { return s.source->label(i); }, nb::arg("index"));
  m.def(
      "_webdataset",
      [](nb::handle urls, const std::string& image_key, const std::string& label_key, const std::string& label_field,
         nb::handle index_cache) {
        std::vector<std::string> paths;
        for (nb::handle u : nb::iter(urls)) paths.push_back(PathFromPy(u, "urls[" + std::to_string(paths.size()) + "]"));
        const std::string cache = index_cache.is_none() ? std::string() : PathFromPy(index_cache, "index_cache");
        std::shared_ptr<const TarSource> tar = MakeWebDataset(paths, image_key, label_key, label_field, cache);
        nb::list shards;
        for (const std::string& p : tar->shards()) shards.append(PathToPy(p));
        const int64_t bad = tar->bad_count(), cached = tar->cached_shards();
        return nb::make_tuple(PySource{std::move(tar)}, shards, bad, cached);
      },
      nb::arg("urls"), nb::arg("image_key"), nb::arg("label_key"), nb::arg("label_field"), nb::arg("index_cache").none(),
      "(Source, shard paths, entries that fail when read, shards indexed from the cache) of "
      "WebDataset shards (local; urls expanded: braces, globs; index_cache a folder or None).");
  m.def(
      "_tar_members",
      [](nb::handle path_obj) {
        const std::string path = PathFromPy(path_obj, "path");
        std::vector<TarMember> members;
        Status st = [&] {
          nb::gil_scoped_release release;
          FileInput in;
          SLUICE_RETURN_IF_ERROR(in.Open(path));
          TarReader tar(&in, path);
          for (;;) {
            SLUICE_ASSIGN_OR_RETURN(std::optional<TarMember> m, tar.Next());
            if (!m) return Status::OK();
            members.push_back(std::move(*m));
          }
        }();
        Check(st);
        nb::list out;
        for (const TarMember& t : members) out.append(nb::make_tuple(PathToPy(t.name), t.data_offset, t.size));
        return out;
      },
      nb::arg("path"), "[(name, data offset, size)] of the regular files of a tar archive, in order.");
}

}  // namespace sluice::python
