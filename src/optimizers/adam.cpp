#include "optimizers/optimizer.h"
#include "tensors/kernels.h"

namespace marian {

void Adam::update(Tensor params, Tensor grads, float lr) {
  if(!m_) {
    m_ = std::make_unique<FlatBuffer>(params.device, Type::float32, params.size());
    v_ = std::make_unique<FlatBuffer>(params.device, Type::float32, params.size());
  }
  ABORT_IF(m_->size() != params.size(), "Adam state holds {} values but the range has {}",
           m_->size(), params.size());
  kernels::adamStep(params, grads, m_->all(), v_->all(), lr, beta1_, beta2_, eps_, ++t_);
}

}  // namespace marian
