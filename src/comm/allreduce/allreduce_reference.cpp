#include "comm/allreduce/allreduce_reference.h"

#include <cmath>

#include "comm/allreduce/sparse_ops.h"

namespace marian {

std::vector<float> denseReference(const std::vector<SparseVector>& inputs, size_t n) {
  std::vector<float> sum(n, 0.f);
  for(const SparseVector& v : inputs)
    v.addTo(sum.data());
  return sum;
}

SparseVector globalTopkReference(std::vector<SparseVector> held, size_t k) {
  size_t P = held.size();
  if(k == 0)
    k = SIZE_MAX;
  std::vector<SparseVector> inputs = held;
  for(size_t d = 1; d < P; d *= 2)
    for(size_t r = 0; r + d < P; r += 2 * d)
      held[r] = largestK(mergeSparse(held[r], held[r + d]), k);
  SparseVector selected = largestK(held[0], k);
  if(P > 2) {  // the values: every rank's at the selected indices, summed in rank order
    std::fill(selected.values.begin(), selected.values.end(), 0.f);
    for(const SparseVector& in : inputs) {
      std::vector<float> v = valuesAt(in, selected.indices);
      for(size_t j = 0; j < v.size(); ++j)
        selected.values[j] += v[j];
    }
  }
  return selected;
}

bool matchesReference(const std::string& name, const AllreduceResult& got, const std::vector<SparseVector>& inputs,
                      size_t n, size_t k) {
  if(name == "gtopk" && k > 0) {
    SparseVector expected = globalTopkReference(inputs, k);
    return got.isSelection && got.sparse.indices == expected.indices && got.sparse.values == expected.values;
  }
  std::vector<float> expected = denseReference(inputs, n);
  if(name == "oktopk" && k > 0) {  // the sum's entries at or above the threshold it applied
    if(!got.isSelection)
      return false;
    for(float& v : expected)
      if(std::fabs(v) < got.threshold)
        v = 0.f;
  }
  return got.toDense(n) == expected;
}

}  // namespace marian
