#pragma once
// defines: marian::Optimizer (sgd, adagrad, adam) and createOptimizer. An optimizer updates a
// flat range of parameters from the same range of gradients. A range may be the whole model or
// one shard (sync-SGD and the parameter server run one optimizer per shard); state is sized by
// the range on first use and can be saved and restored as named host arrays.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "optimizers/variance_schedule.h"
#include "tensors/arena.h"

namespace marian {

class Options;

// Named arrays of one optimizer's state (for a range), plus its step count and the step its
// statistics were last reset at.
struct OptimizerState {
  std::map<std::string, std::vector<float>> arrays;
  uint64_t steps = 0, statisticsFrom = 0;
};

class Optimizer {
public:
  virtual ~Optimizer() = default;
  virtual void update(Tensor params, Tensor grads, float lr) = 0;
  virtual std::string name() const = 0;
  // The state arrays copied to the host (stateNames' arrays) and the step count.
  OptimizerState state() const;
  virtual void setState(const OptimizerState& state, Device device) {
    t_ = state.steps;
    statisticsFrom_ = state.statisticsFrom;
  }
  // The names of the state arrays that stateTensor gives (none before the first update).
  virtual std::vector<std::string> stateNames() const { return {}; }
  // The updates taken (every optimizer's: Adam's bias correction, the moving average's warm-up).
  uint64_t steps() const { return t_; }
  // Marian's resetStats (--lr-decay-reset-optimizer, --no-optimizer-reload): the state arrays
  // back to zeros and their bias correction counted afresh from the next step, as a new
  // optimizer's; the step count goes on (the moving average's warm-up counts updates, as Marian's).
  virtual void resetStatistics() { statisticsFrom_ = t_; }
  uint64_t statisticsFrom() const { return statisticsFrom_; }
  // The state arrays where they live (empty before the first update): what averaging replicas
  // averages.
  virtual std::vector<Tensor> stateTensors() { return {}; }
  // The state array of that name where it lives (empty: none, or before the first update).
  virtual Tensor stateTensor(const std::string& name) const { return {}; }

protected:
  uint64_t t_ = 0, statisticsFrom_ = 0;
};

class Sgd : public Optimizer {
public:
  void update(Tensor params, Tensor grads, float lr) override;
  std::string name() const override { return "sgd"; }
};

// Optimizers with per-parameter state: buffers of the range's size, created on first use.
class StatefulOptimizer : public Optimizer {
public:
  void setState(const OptimizerState& state, Device device) override;
  void resetStatistics() override;
  std::vector<std::string> stateNames() const override;
  std::vector<Tensor> stateTensors() override;
  Tensor stateTensor(const std::string& name) const override;

protected:
  explicit StatefulOptimizer(std::vector<std::string> bufferNames) : names_(std::move(bufferNames)) {}
  void ensureBuffers(Tensor params);
  Tensor buffer(size_t i) const { return buffers_[i]->all(); }

private:
  std::vector<std::string> names_;
  std::vector<std::unique_ptr<FlatBuffer>> buffers_;
};

class Adagrad : public StatefulOptimizer {
public:
  explicit Adagrad(float eps = 1e-8f) : StatefulOptimizer({"adagrad_gt"}), eps_(eps) {}
  void update(Tensor params, Tensor grads, float lr) override;
  std::string name() const override { return "adagrad"; }

private:
  float eps_;
};

class Adam : public StatefulOptimizer {
public:
  static constexpr const char* kFirstMoment = "adam_mt";   // m
  static constexpr const char* kSecondMoment = "adam_vt";  // v
  // Marian's defaults for --optimizer-params
  static constexpr float kDefaultBeta1 = 0.9f, kDefaultBeta2 = 0.999f, kDefaultEpsilon = 1e-8f;
  // variance: on which steps the second moment changes (a function of the step count, so a
  // resumed run freezes where the uninterrupted one did)
  // weightDecay: Marian's 4th --optimizer-params, p -= lr w p beside the moments' step (AdamW)
  explicit Adam(float beta1 = kDefaultBeta1, float beta2 = kDefaultBeta2, float eps = kDefaultEpsilon,
                AdamVarianceSchedule variance = AdamVarianceSchedule(), float weightDecay = 0.f)
      : StatefulOptimizer({kFirstMoment, kSecondMoment}), beta1_(beta1), beta2_(beta2), eps_(eps), variance_(variance),
        weightDecay_(weightDecay) {}
  void update(Tensor params, Tensor grads, float lr) override;
  std::string name() const override { return "adam"; }
  // Divide by the second moment of the mean of `ranks` ranks' gradients (kernels' adamStep;
  // --local-adam-variance mean), not by this rank's own; 1: Adam's.
  void estimateVarianceOfMeanOver(size_t ranks) { meanOver_ = float(ranks); }

private:
  float beta1_, beta2_, eps_;
  AdamVarianceSchedule variance_;
  float meanOver_ = 1.f;
  float weightDecay_;
};

// --optimizer NAME --optimizer-params ...; an unknown name is an error.
std::unique_ptr<Optimizer> createOptimizer(const std::string& name, const std::vector<float>& params,
                                           AdamVarianceSchedule variance = AdamVarianceSchedule());
// The same from a run's options: the one place the graph groups make their optimizers. ranks: how
// many ranks' updates local steps average (--local-adam-variance mean sets Adam's to them).
std::unique_ptr<Optimizer> createOptimizer(const Options& options, size_t ranks = 1);
// Adam's beta1 for a run's --optimizer-params (its default when not given).
float adamBeta1(const Options& options);

}  // namespace marian
