#include "graph/expression_graph.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "graph/param_node.h"
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

constexpr size_t kNoChild = size_t(-1);
// The index of `child` among the node's children, or kNoChild where it is not one or is more
// than one (then backward writes its gradient more than once). (Node::freshChildGrads_ has a bit
// for each of the first 32.)
size_t onlyChildIndex(const Node& node, const Node* child) {
  size_t found = kNoChild;
  for(size_t i = 0; i < node.children().size(); ++i)
    if(node.child(i).get() == child) {
      if(found != kNoChild)
        return kNoChild;
      found = i;
    }
  return found;
}

// The bfloat16 copy of a view's value: the owner's copy at the view's offset into the owner
Tensor roundedView(const Node& owner, const Node& view) {
  size_t offset = size_t(static_cast<const float*>(view.val().data) - owner.val().f32());
  return Tensor(owner.productVal().bf16() + offset, view.shape(), Type::bfloat16, owner.productVal().device);
}

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

void ExpressionGraph::forward() { run(nullptr, true); }

void ExpressionGraph::forward(const std::vector<Expr>& keep, bool backwardFollows) {
  ValuePlan plan = valueLifetimes(keep, backwardFollows);
  run(&plan, backwardFollows);
}

ProductPrecisionScope ExpressionGraph::productPrecision() const {
  if(cpuBfloat16Products()) {
    if(sharedRounded_.data)
      return ProductPrecisionScope(productType_, params_.values(), sharedRounded_);
    if(roundedParams_)
      return ProductPrecisionScope(productType_, params_.values(), roundedParams_->all());
  }
  return ProductPrecisionScope(productType_);
}

void ExpressionGraph::releaseWorkspace() {
  workspace_->releaseMemory();
  roundedParams_.reset();  // rounded anew by every forward
}

Tensor ExpressionGraph::roundInPlace(Tensor t, Tensor addRows) {
  if(!cpuBfloat16Products() || t.device.type != DeviceType::cpu || t.type != Type::float32) {
    if(!addRows.empty())
      kernels::add(addRows, t);
    return t;
  }
  Tensor rounded(t.data, t.shape, Type::bfloat16, t.device);
  kernels::convert(rounded, t, addRows);
  return rounded;
}

void ExpressionGraph::run(const ValuePlan* plan, bool backwardFollows) {
  params_.allocate();
  workspace_->reset();
  if(cpuBfloat16Products() && sharedRounded_.data) {
    ABORT_IF(sharedRounded_.size() != params_.totalSize() || sharedRounded_.type != Type::bfloat16,
             "The shared rounded parameters hold {} values, the graph has {} parameters", sharedRounded_.size(),
             params_.totalSize());
    roundedParams_.reset();
  } else if(cpuBfloat16Products()) {
    if(!roundedParams_ || roundedParams_->size() != params_.totalSize())
      roundedParams_ = std::make_unique<FlatBuffer>(device_, Type::bfloat16, params_.totalSize());
    kernels::convert(roundedParams_->all(), params_.values());
  } else {
    roundedParams_.reset();
  }
  ProductPrecisionScope precision = productPrecision();
  for(size_t i = 0; i < nodes_.size(); ++i) {
    Node& node = *nodes_[i];
    node.grad_ = node.productVal_ = Tensor();
    if(plan)
      for(size_t owner : plan->roundBefore[i])
        keepInBfloat16(owner, i, plan->owner);
    if(node.allocatesValue())
      node.val_ = workspace_->allocate(node.shape(), node.valueType());
    timed(node, " fwd", [&] { node.forward(); });
    if(!plan)
      continue;
    if(size_t o = plan->owner[i]; o != kNoOwner && o != i && !nodes_[o]->productVal_.empty())
      node.productVal_ = roundedView(*nodes_[o], node);  // a view of a value rounded already
    for(size_t owner : plan->releaseAfter[i]) {
      workspace_->release(nodes_[owner]->val_);
      // backward's kernels may still be given a value they do not read (a functor's unused
      // argument): it keeps pointing into the workspace
      if(!backwardFollows)
        nodes_[owner]->val_ = Tensor();
    }
  }
}

void ExpressionGraph::keepInBfloat16(size_t owner, size_t next, const std::vector<size_t>& owners) {
  Node& o = *nodes_[owner];
  o.productVal_ = workspace_->allocate(o.val_.shape, Type::bfloat16);
  kernels::convert(o.productVal_, o.val_);
  for(size_t j = owner + 1; j < next; ++j)
    if(owners[j] == owner)
      nodes_[j]->productVal_ = roundedView(o, *nodes_[j]);
}

ExpressionGraph::ValuePlan ExpressionGraph::valueLifetimes(const std::vector<Expr>& keep, bool backwardFollows) const {
  constexpr size_t kNone = kNoOwner;
  // the node whose workspace block a value is: its own, its child's for a view (reshape), none
  // for memory the graph does not own (parameters, views of outside tensors)
  ValuePlan plan;
  std::vector<size_t>& owner = plan.owner;
  owner.assign(nodes_.size(), kNone);
  std::vector<size_t> lastRead(nodes_.size(), 0), firstProductRead(nodes_.size(), kNone);
  for(size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = *nodes_[i];
    if(n.allocatesValue())
      owner[i] = i;
    else if(!n.children().empty())
      owner[i] = owner[n.child(0)->position_];
    if(owner[i] != kNone)
      lastRead[owner[i]] = std::max(lastRead[owner[i]], i);
    for(size_t c = 0; c < n.children().size(); ++c)
      if(size_t o = owner[n.child(c)->position_]; o != kNone) {
        lastRead[o] = std::max(lastRead[o], i);
        if(n.readsChildAsProductOperand(c))
          firstProductRead[o] = std::min(firstProductRead[o], i);
      }
  }
  // kept: for the caller (1), or for backward only as products' operands (2), or otherwise (3)
  enum : char { kFree = 0, kForCaller = 1, kAsProductOperand = 2, kOtherwise = 3 };
  std::vector<char> kept(nodes_.size(), kFree);
  for(const Expr& k : keep)
    if(size_t o = owner[k->position_]; o != kNone)
      kept[o] = kForCaller;
  auto keepFor = [&](size_t o, char why) {
    if(kept[o] != kForCaller)
      kept[o] = std::max(kept[o], why);
  };
  if(backwardFollows)  // what the backward of a node that needs a gradient reads
    for(size_t i = 0; i < nodes_.size(); ++i) {
      const Node& n = *nodes_[i];
      if(!n.needsGrad())
        continue;
      if(n.backwardReadsValue() && owner[i] != kNone)
        keepFor(owner[i], kOtherwise);
      for(size_t c = 0; c < n.children().size(); ++c)
        if(size_t o = owner[n.child(c)->position_]; o != kNone && n.backwardReadsChild(c))
          keepFor(o, n.readsChildAsProductOperand(c) ? kAsProductOperand : kOtherwise);
    }
  plan.releaseAfter.resize(nodes_.size());
  plan.roundBefore.resize(nodes_.size());
  for(size_t i = 0; i < nodes_.size(); ++i) {
    if(owner[i] != i)
      continue;
    if(kept[i] == kFree) {
      plan.releaseAfter[lastRead[i]].push_back(i);
    } else if(kept[i] == kAsProductOperand && cpuBfloat16Products() && nodes_[i]->valueType() == Type::float32) {
      // (backward's product reads it as one, so forward's same node did, if no earlier one)
      ABORT_IF(firstProductRead[i] == kNone, "A value that only products read was read by none");
      plan.roundBefore[firstProductRead[i]].push_back(i);
      plan.releaseAfter[lastRead[i]].push_back(i);
    }
  }
  return plan;
}

void ExpressionGraph::backward(Expr top, const std::vector<float>* seed, bool accumulate, const GradientReady& ready,
                               const LookupsApart& lookupsApart) {
  ABORT_IF(nodes_.empty(), "backward() on an empty graph");
  if(!top)
    top = nodes_.back().get();
  ABORT_IF(!top->needsGrad(), "backward() from '{}', which depends on no parameter", top->opName());

  ProductPrecisionScope precision = productPrecision();
  Backend& backend = backendFor(device_);
  auto pointParamsAt = [&](std::optional<size_t> only, Tensor grad) {
    for(auto& node : nodes_)
      if(auto* p = dynamic_cast<ParamNode*>(node.get()); p && (!only || p->index() == *only))
        node->grad_ = only ? grad : params_.grad(p->index());
  };
  pointParamsAt(std::nullopt, Tensor());
  for(auto& node : nodes_)  // set below for this backward only (an earlier one's may remain)
    node->freshChildGrads_ = 0;
  std::function<bool(size_t)> apart;
  if(lookupsApart)
    apart = [&](size_t param) {
      Tensor rows = lookupsApart(param);
      if(rows.empty())
        return false;
      ABORT_IF(rows.shape != params_.grad(param).shape || rows.device != device_,
               "The lookups' gradient of parameter {} must have its shape and device", param);
      pointParamsAt(param, rows);
      return true;
    };
  // Nodes after `top` do not contribute to its gradient.
  size_t end = 0;
  while(nodes_[end].get() != top.get())
    ++end;
  if(!accumulate)
    startParamGrads(end);

  // A node's gradient is allocated (zeroed) just before it is first written, and released right
  // after the node's own backward, when nothing reads it any more: the workspace holds only the
  // gradients in flight, and their blocks serve later ones of the same size. workspaceBytes
  // follows the same schedule (gradientSchedule). A first writer that overwrites gets it unzeroed.
  gradientSchedule(end, [&](Node* n, Node* writer) {
    n->grad_ = workspace_->allocate(n->shape());
    if(size_t i = writer ? onlyChildIndex(*writer, n) : kNoChild; i < 32 && writer->overwritesFreshChildGrad(i)) {
      writer->freshChildGrads_ |= 1u << i;
      if(poisonsUnwrittenMemory())  // (the gradient checks) what the writer leaves shows as NaN
        kernels::fill(n->grad_, std::numeric_limits<float>::quiet_NaN());
    } else if(n != top.get())
      timed(*n, " zero-grad", [&] { backend.zero(n->grad_.data, n->grad_.bytes()); });
    else if(seed)
      kernels::fromHost(top->grad_, *seed);
    else
      kernels::fill(top->grad_, 1.f);
  }, [&](Node* n) {
    workspace_->release(n->grad_);
    n->grad_ = Tensor();
  }, [&](size_t i) {
    timed(*nodes_[i], " bwd", [&] { nodes_[i]->backward(); });
  }, ready, apart);
  if(apart)
    pointParamsAt(std::nullopt, Tensor());  // a lookups' buffer is the caller's, not the parameter's gradient
}

size_t ExpressionGraph::workspaceBytes(const std::vector<Expr>& keep, bool withBackward) const {
  // forward(keep, withBackward) and backward() step by step, a released block serving the next
  // allocation of its size as in Workspace::allocate
  size_t bytes = 0;
  std::unordered_map<size_t, size_t> released;  // blocks by size
  auto take = [&](size_t size) {
    size_t& free = released[size];
    if(free > 0)
      --free;
    else
      bytes += size;
  };
  ValuePlan plan = valueLifetimes(keep, withBackward);
  for(size_t i = 0; i < nodes_.size(); ++i) {
    for(size_t owner : plan.roundBefore[i])
      take(Workspace::bytesFor(nodes_[owner]->shape(), Type::bfloat16));
    if(nodes_[i]->allocatesValue())
      take(Workspace::bytesFor(nodes_[i]->shape(), nodes_[i]->valueType()));
    for(size_t owner : plan.releaseAfter[i])
      ++released[Workspace::bytesFor(nodes_[owner]->shape(), nodes_[owner]->valueType())];
  }
  if(!withBackward || nodes_.empty() || !nodes_.back()->needsGrad())
    return bytes;
  auto size = [](const Node* n) { return Workspace::bytesFor(n->shape(), Type::float32); };
  gradientSchedule(nodes_.size() - 1, [&](Node* n, Node*) { take(size(n)); }, [&](Node* n) { ++released[size(n)]; },
                   [](size_t) {}, nullptr);
  return bytes;
}

void ExpressionGraph::clear() { nodes_.clear(); }

}  // namespace marian
