// "dense": the MPI library's own MPI_Allreduce (its tuned choice of algorithm), the baseline
// users know. MPI does not tell which bytes it moved, so they are counted by the cost model of a
// bandwidth-optimal allreduce, 2 (P-1)/P n values each way.
#include "comm/allreduce/dense_allreduce.h"

namespace marian {

namespace {

class MpiAllreduce : public DenseAllreduce {
public:
  using DenseAllreduce::DenseAllreduce;
  std::string name() const override { return "dense"; }

  void sumDense(std::vector<float>& values) override {
    int P = transport_.size();
    if(P == 1)
      return;
    transport_.allreduceSum(values.data(), values.size(), 600, "dense allreduce");
    uint64_t modelled = uint64_t(2.0 * double(P - 1) / double(P) * double(values.size()) * sizeof(float));
    bytes_.sent += modelled;
    bytes_.received += modelled;
  }
};

}  // namespace

std::unique_ptr<Allreduce> createDense(Transport& t, const AllreduceSettings&) {
  return std::make_unique<MpiAllreduce>(t);
}

}  // namespace marian
