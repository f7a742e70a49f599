#pragma once
// defines: marian::DenseAllreduce — the base of the algorithms that reduce all n values (dense,
// ring, tree): sparse input is scattered into n values first, the result is always dense.
#include "comm/allreduce/allreduce.h"

namespace marian {

class DenseAllreduce : public Allreduce {
public:
  using Allreduce::Allreduce;
  AllreduceResult reduce(const SparseVector& local, size_t n, size_t /*k*/) override {
    checkIndices(local, n);
    AllreduceResult result;
    result.isDense = true;
    result.dense.assign(n, 0.f);
    local.addTo(result.dense.data());
    sumDense(result.dense);
    return result;
  }
  void sumDense(std::vector<float>& values) override = 0;
};

}  // namespace marian
