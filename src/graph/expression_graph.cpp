#include "graph/expression_graph.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include "tensors/backend.h"
#include "tensors/kernels.h"

namespace marian {

namespace {

// MARIAN_PROFILE=1: seconds spent in each operator's forward and backward, printed at exit.
class OpProfile {
public:
  static OpProfile& get() {
    static OpProfile p;
    return p;
  }
  bool on() const { return on_; }
  void add(const std::string& key, double s) {
    std::lock_guard<std::mutex> lock(mutex_);
    seconds_[key] += s;
  }
  ~OpProfile() {
    if(!on_)
      return;
    std::vector<std::pair<double, std::string>> rows;
    double total = 0;
    for(auto& [k, v] : seconds_) {
      rows.push_back({v, k});
      total += v;
    }
    std::sort(rows.rbegin(), rows.rend());
    std::fprintf(stderr, "[profile] %-28s %10s %6s\n", "operator", "seconds", "share");
    for(auto& [v, k] : rows)
      std::fprintf(stderr, "[profile] %-28s %10.3f %5.1f%%\n", k.c_str(), v, 100 * v / total);
  }

private:
  OpProfile() : on_(std::getenv("MARIAN_PROFILE") != nullptr) {}
  bool on_;
  std::mutex mutex_;
  std::map<std::string, double> seconds_;
};

template <class F>
void timed(Node& node, const char* phase, F&& f) {
  if(!OpProfile::get().on())
    return f();
  // GPU kernels run asynchronously: wait for them, so that each operator is charged its own time
  Backend& backend = backendFor(node.graph().device());
  backend.synchronize();
  auto start = std::chrono::steady_clock::now();
  f();
  backend.synchronize();
  OpProfile::get().add(std::string(node.opName()) + phase,
                       std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace

namespace {

class ParamNode : public Node {
public:
  ParamNode(ExpressionGraph& g, const Shape& shape, size_t index)
      : Node(g, shape, {}), index_(index) {
    needsGrad_ = true;
  }
  const char* opName() const override { return "param"; }
  bool allocatesValue() const override { return false; }
  void forward() override { val_ = graph_.params().value(index_); }
  void backward() override {}
  size_t index() const { return index_; }

private:
  size_t index_;
};

// Host data copied into the workspace at every forward.
template <class T>
class ConstantNode : public Node {
public:
  ConstantNode(ExpressionGraph& g, const Shape& shape, std::vector<T> values, Type type)
      : Node(g, shape, {}, type), values_(std::move(values)) {
    ABORT_IF(values_.size() != shape.elements(), "Constant of shape {} given {} values",
             shape.toString(), values_.size());
  }
  const char* opName() const override { return "constant"; }
  void forward() override {
    backendFor(val_.device).copyFromHost(val_.data, values_.data(), values_.size() * sizeof(T));
  }
  void backward() override {}

private:
  std::vector<T> values_;
};

class ViewNode : public Node {
public:
  ViewNode(ExpressionGraph& g, Tensor t) : Node(g, t.shape, {}, t.type), tensor_(t) {
    ABORT_IF(t.device != g.device(), "A view of a tensor on {} in a graph on {}", t.device.toString(),
             g.device().toString());
  }
  const char* opName() const override { return "view"; }
  bool allocatesValue() const override { return false; }
  void forward() override { val_ = tensor_; }
  void backward() override {}

private:
  Tensor tensor_;
};

}  // namespace

ExpressionGraph::ExpressionGraph(Device device, uint64_t seed, size_t workspaceLimitMB)
    : device_(device),
      seed_(seed),
      randomSeed_(seed),
      params_(device, seed),
      workspace_(std::make_unique<Workspace>(device, size_t(1) << 20, workspaceLimitMB << 20)) {}

ExpressionGraph::~ExpressionGraph() = default;

Expr ExpressionGraph::param(const std::string& name, const Shape& shape, const Initializer& init) {
  size_t index = params_.declare(name, shape, init);
  return record<ParamNode>(*this, shape, index);
}

Expr ExpressionGraph::constant(const Shape& shape, std::vector<float> values) {
  return record<ConstantNode<float>>(*this, shape, std::move(values), Type::float32);
}

Expr ExpressionGraph::indices(const Shape& shape, std::vector<int> values) {
  return record<ConstantNode<int>>(*this, shape, std::move(values), Type::int32);
}

Expr ExpressionGraph::indices(std::vector<int> values) {
  Shape shape({int(values.size())});
  return indices(shape, std::move(values));
}

Expr ExpressionGraph::view(Tensor t) { return record<ViewNode>(*this, t); }

void ExpressionGraph::forward() {
  params_.allocate();
  workspace_->reset();
  for(auto& node : nodes_) {
    node->grad_ = Tensor();
    if(node->allocatesValue())
      node->val_ = workspace_->allocate(node->shape(), node->valueType());
    timed(*node, " fwd", [&] { node->forward(); });
  }
}

void ExpressionGraph::backward(Expr top, const std::vector<float>* seed, bool accumulate, const GradientReady& ready) {
  ABORT_IF(nodes_.empty(), "backward() on an empty graph");
  if(!top)
    top = nodes_.back().get();
  ABORT_IF(!top->needsGrad(), "backward() from '{}', which depends on no parameter", top->opName());

  if(!accumulate)
    params_.zeroGrads();
  Backend& backend = backendFor(device_);
  for(auto& node : nodes_) {
    if(!node->needsGrad())
      continue;
    if(auto* p = dynamic_cast<ParamNode*>(node.get())) {
      node->grad_ = params_.grad(p->index());
    } else {
      node->grad_ = workspace_->allocate(node->shape());
      timed(*node, " zero-grad", [&] { backend.zero(node->grad_.data, node->grad_.bytes()); });
    }
  }
  if(seed)
    kernels::fromHost(top->grad_, *seed);
  else
    kernels::fill(top->grad_, 1.f);

  // Nodes after `top` do not contribute to its gradient.
  size_t end = 0;
  while(nodes_[end].get() != top.get())
    ++end;
  // A parameter's gradient is final when the walk reaches its first node: every node using it
  // comes later (nodes are recorded in a topological order).
  constexpr size_t kNone = size_t(-1);
  std::vector<size_t> finalAt;  // by node: the parameter whose first node it is, or kNone
  if(ready) {
    std::vector<char> used(params_.entries().size(), 0);
    finalAt.assign(end + 1, kNone);
    for(size_t i = 0; i <= end; ++i)
      if(auto* p = dynamic_cast<ParamNode*>(nodes_[i].get()); p && !used[p->index()]) {
        used[p->index()] = 1;
        finalAt[i] = p->index();
      }
    for(size_t param = 0; param < used.size(); ++param)
      if(!used[param])
        ready(param);
  }
  for(size_t i = end + 1; i-- > 0;) {
    if(nodes_[i]->needsGrad())
      timed(*nodes_[i], " bwd", [&] { nodes_[i]->backward(); });
    if(ready && finalAt[i] != kNone)
      ready(finalAt[i]);
  }
}

size_t ExpressionGraph::workspaceBytes(bool withBackward) const {
  // as forward() and backward() allocate: a value for every node that allocates one, a gradient
  // for every node but a parameter that needs one
  size_t bytes = 0;
  for(const auto& node : nodes_) {
    if(node->allocatesValue())
      bytes += Workspace::bytesFor(node->shape(), node->valueType());
    if(withBackward && node->needsGrad() && !dynamic_cast<const ParamNode*>(node.get()))
      bytes += Workspace::bytesFor(node->shape(), Type::float32);
  }
  return bytes;
}

void ExpressionGraph::clear() { nodes_.clear(); }

}  // namespace marian
