#pragma once
// defines: marian::Optimizer, Sgd, Adam — updates of a flat range of parameters from the same
// range of gradients. A range may be the whole model or one shard of it (the parameter server
// and sync-SGD run one optimizer per shard), so state is sized by the range on first use.
#include <memory>
#include <string>

#include "tensors/arena.h"

namespace marian {

class Optimizer {
public:
  virtual ~Optimizer() = default;
  virtual void update(Tensor params, Tensor grads, float lr) = 0;
};

class Sgd : public Optimizer {
public:
  void update(Tensor params, Tensor grads, float lr) override;
};

class Adam : public Optimizer {
public:
  // Marian's defaults for --optimizer-params
  explicit Adam(float beta1 = 0.9f, float beta2 = 0.999f, float eps = 1e-8f)
      : beta1_(beta1), beta2_(beta2), eps_(eps) {}
  void update(Tensor params, Tensor grads, float lr) override;
  uint64_t steps() const { return t_; }

private:
  float beta1_, beta2_, eps_;
  uint64_t t_ = 0;
  std::unique_ptr<FlatBuffer> m_, v_;  // first and second moments, same layout as the range
};

}  // namespace marian
