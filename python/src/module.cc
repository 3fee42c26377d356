#include "bindings.h"

NB_MODULE(_core, m) {
  using namespace sluice::python;
  m.doc() = "sluice's C++ core (internal: use the sluice package)";
  RegisterErrors(m);
  RegisterTensor(m);
  RegisterTransforms(m);
  RegisterLoaderOptions(m);
  RegisterLoader(m);
  RegisterCodec(m);
  RegisterSample(m);
  RegisterShards(m);
  RegisterShardStreams(m);
  RegisterVideo(m);
}
