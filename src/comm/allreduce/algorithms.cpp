#include "comm/allreduce/algorithms.h"

#include "common/error.h"

namespace marian {

// each defined in the file of its name
std::unique_ptr<Allreduce> createDense(Transport& t, const AllreduceSettings& s);
std::unique_ptr<Allreduce> createRing(Transport& t, const AllreduceSettings& s);
std::unique_ptr<Allreduce> createTree(Transport& t, const AllreduceSettings& s);
std::unique_ptr<Allreduce> createTopkA(Transport& t, const AllreduceSettings& s);
std::unique_ptr<Allreduce> createSsarRecursiveDoubling(Transport& t, const AllreduceSettings& s);
std::unique_ptr<Allreduce> createSsarSplit(Transport& t, const AllreduceSettings& s);
std::unique_ptr<Allreduce> createDsarSplit(Transport& t, const AllreduceSettings& s);
std::unique_ptr<Allreduce> createGlobalTopk(Transport& t, const AllreduceSettings& s);
std::unique_ptr<Allreduce> createOkTopk(Transport& t, const AllreduceSettings& s);

const std::vector<AllreduceEntry>& allreduceAlgorithms() {
  static const std::vector<AllreduceEntry> table = {
      {"dense", "MPI's own MPI_Allreduce, dense (its bytes are MPI's: not counted)", AllreduceKind::dense, createDense},
      {"ring", "dense reduce-scatter and allgather around the ring of ranks", AllreduceKind::dense, createRing},
      {"tree", "dense reduce and broadcast over a pipelined binary tree (seed 003)", AllreduceKind::dense, createTree},
      {"topka", "every rank's pairs gathered around the ring and added (TopkA)", AllreduceKind::sparseSum, createTopkA},
      {"ssar-recdbl", "sparse recursive doubling of the pairs summed so far (seed 000)", AllreduceKind::sparseSum,
       createSsarRecursiveDoubling},
      {"ssar-split", "pairs summed by the owners of P equal blocks, then gathered (seed 000)", AllreduceKind::sparseSum,
       createSsarSplit},
      {"dsar-split", "ssar-split, each summed block sent dense when that is smaller (seed 000)",
       AllreduceKind::sparseSum, createDsarSplit},
      {"gtopk", "global top-k: a tree of the top operator, then a broadcast; a selection (seed 001)",
       AllreduceKind::selection, createGlobalTopk},
      {"oktopk", "Ok-Topk: balanced split and reduce, a threshold, an allgather; a selection (seed 002)",
       AllreduceKind::selection, createOkTopk},
  };
  return table;
}

const AllreduceEntry* findAllreduce(const std::string& name) {
  for(const AllreduceEntry& e : allreduceAlgorithms())
    if(e.name == name)
      return &e;
  return nullptr;
}

std::string describeAllreduceAlgorithms() {
  std::string out;
  for(const AllreduceEntry& e : allreduceAlgorithms())
    out += format("\n  {}{}{}", e.name, std::string(e.name.size() < 12 ? 12 - e.name.size() : 1, ' '), e.description);
  return out;
}

std::unique_ptr<Allreduce> createAllreduce(const std::string& name, Transport& t, const AllreduceSettings& s) {
  const AllreduceEntry* entry = findAllreduce(name);
  ABORT_IF(!entry, "Unknown allreduce '{}'; available:{}", name, describeAllreduceAlgorithms());
  return entry->create(t, s);
}

}  // namespace marian
