#include "optimizers/optimizer.h"
#include "tensors/kernels.h"

namespace marian {

void Sgd::update(Tensor params, Tensor grads, float lr) {
  ++t_;
  kernels::sgdStep(params, grads, lr);
}

}  // namespace marian
