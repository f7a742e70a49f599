// "dense": the MPI library's own MPI_Allreduce (its tuned choice of algorithm), the baseline
// users know. Its messages are MPI's own, inside the library, so the transport cannot count
// them, and a cost model is not a count: MPI picks recursive doubling, a ring or a tree by size
// and P, which move different bytes. Its bytes are reported as not counted; "ring" is the dense
// allreduce whose bytes are counted.
#include "comm/allreduce/dense_allreduce.h"

namespace marian {

namespace {

class MpiAllreduce : public DenseAllreduce {
public:
  using DenseAllreduce::DenseAllreduce;
  std::string name() const override { return "dense"; }

  void sumDense(std::vector<float>& values) override {
    if(transport_.size() > 1) {
      transport_.allreduceSum(values.data(), values.size(), transport_.peerTimeout(), "dense allreduce");
      ++callsNotCounted_;
    }
  }

protected:
  bool bytesCounted() const override { return false; }
};

}  // namespace

std::unique_ptr<Allreduce> createDense(Transport& t, const AllreduceSettings&) {
  return std::make_unique<MpiAllreduce>(t);
}

}  // namespace marian
