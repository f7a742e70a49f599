#pragma once
// defines: marian::allreduceAlgorithms — the one table of allreduce algorithms, by the names
// users pass (--sparse-allreduce, marian-commbench --algo), with what each does and how to make
// it. Creation, option checks, error messages and the tests all read this table.
#include <memory>
#include <string>
#include <vector>

#include "comm/allreduce/allreduce.h"

namespace marian {

// dense: sums dense vectors (sparse pairs made dense); sparseSum: sums sparse pairs whole;
// selection: returns only a selection of the sum (AllreduceResult::isSelection).
enum class AllreduceKind { dense, sparseSum, selection };

struct AllreduceEntry {
  std::string name;
  std::string description;  // one line
  AllreduceKind kind;
  std::unique_ptr<Allreduce> (*create)(Transport& transport, const AllreduceSettings& settings);
};

const std::vector<AllreduceEntry>& allreduceAlgorithms();
// The entry called `name`, or null.
const AllreduceEntry* findAllreduce(const std::string& name);
// Every name with its description, one per line: what an error about a wrong name lists.
std::string describeAllreduceAlgorithms();
// An unknown name is an error listing the known ones.
std::unique_ptr<Allreduce> createAllreduce(const std::string& name, Transport& transport,
                                           const AllreduceSettings& settings = AllreduceSettings());

}  // namespace marian
