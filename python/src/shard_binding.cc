// Tar shards: the members sluice's tar reader finds (io/tar_reader.h), for tests against Python's
// tarfile and the webdataset library.
#include <optional>

#include "bindings.h"
#include "io/tar_reader.h"

namespace sluice::python {

void RegisterShards(nb::module_& m) {
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
