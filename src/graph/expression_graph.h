#pragma once
// defines: marian::ExpressionGraph — records nodes in creation order (a topological order),
// runs forward over them and backward in reverse. Owns the parameters and the workspace.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graph/initializers.h"
#include "graph/node.h"
#include "graph/parameters.h"
#include "tensors/product_precision.h"

namespace marian {

class ExpressionGraph {
public:
  // workspaceLimitMB = 0: the workspace grows as needed; otherwise Marian's --workspace.
  explicit ExpressionGraph(Device device = cpuDevice(), uint64_t seed = 1234,
                           size_t workspaceLimitMB = 0);
  ~ExpressionGraph();

  Device device() const { return device_; }
  Parameters& params() { return params_; }
  // The inputs of this graph's matrix products, forward and backward (--precision): rounded to
  // bfloat16 or float16 with sums in float32; parameters, gradients and everything outside the
  // products stay float32. On the CPU each forward rounds the parameters once into a copy that
  // the products read, unless useRoundedParameters gave one.
  void setProductType(ProductType type) { productType_ = type; }
  ProductType productType() const { return productType_; }
  // bfloat16 products on the CPU read `rounded` (the parameters' bfloat16 copy, as many values)
  // instead of a copy of the graph's own: the caller keeps it current, once per update for every
  // device of a process whose parameters are equal (synchronous training). Empty: the graph's own.
  void useRoundedParameters(Tensor rounded) { sharedRounded_ = rounded; }
  // `t` rounded to bfloat16 in its own memory when this graph's CPU products read bfloat16 (the
  // returned view is its first half; t's float32 values are gone), else `t` itself: an operand of
  // two products that nothing reads afterwards (a product's output gradient), rounded once with no
  // memory of its own. With `addRows`, t's rows are added into it first (kernels::add), in the
  // same pass where t is rounded (an affine layer's bias gradient).
  Tensor roundInPlace(Tensor t, Tensor addRows = {});
  // Frees the workspace's memory (and the parameters' rounded copy) while the graph is idle: its nodes'
  // values and gradients are dead until the next forward, which takes the memory again.
  void releaseWorkspace();
  Workspace& workspace() { return *workspace_; }

  // --- leaves ---------------------------------------------------------------------------------
  // A trainable parameter, created on first use and shared by every later graph build.
  Expr param(const std::string& name, const Shape& shape, const Initializer& init);
  Expr constant(const Shape& shape, std::vector<float> values);
  Expr indices(const Shape& shape, std::vector<int> values);  // int32, e.g. word ids
  Expr indices(std::vector<int> values);                      // shape [n]
  // A leaf over memory the graph does not own (no copy, no gradient): state that outlives the
  // graph, such as a decoder's cached keys and values. The memory must stay valid until the
  // graph's next forward() has run.
  Expr view(Tensor t);

  // Records an operator node; used by the functions in graph/operators.h.
  template <class NodeType, class... Args>
  Expr record(Args&&... args) {
    nodes_.push_back(std::make_unique<NodeType>(std::forward<Args>(args)...));
    nodes_.back()->position_ = nodes_.size() - 1;
    return nodes_.back().get();
  }

  // --- execution ------------------------------------------------------------------------------
  // Allocates parameters declared since the last call, resets the workspace and computes every
  // node's value in creation order. Can be repeated on the same nodes.
  void forward();
  // Only the values of `keep` (and what they are views of) stay after it, and with
  // backwardFollows the values backward() reads (Node::backwardReadsValue/-Child); every other
  // value is released as soon as the last node that reads it has run, and its block serves a
  // later value or gradient of its size. For inference the workspace then holds what is in
  // flight, not the whole graph.
  // On the CPU with bfloat16 products, a value that backward reads only as a product's operand
  // (an affine layer's input, attention's queries, keys and values) is rounded into bfloat16
  // before its first product, which reads that copy as the later ones and backward's do; its
  // float32 value is released after its last reader: the same values the products would round
  // it to, rounded once, in half the memory.
  void forward(const std::vector<Expr>& keep, bool backwardFollows = false);
  // Starts the parameter gradients anew (zeroed, or left for a first writer that writes them
  // whole; a device without a batch and a sparse sum's scatter zero theirs themselves) unless
  // `accumulate` (then this batch's gradients add to what is there), seeds the top node (the
  // last one recorded, or `top`) with ones, or with `seed` of its shape, and back-propagates.
  // `ready`, when given, is called with each parameter's index as soon as no node left to run
  // adds to its gradient (parameters the graph does not use: first), so communication can start
  // while backward goes on. On a GPU the gradient's kernels are issued, not finished, when it is
  // called.
  using GradientReady = std::function<void(size_t param)>;
  // With `lookupsApart` too: a parameter that row lookups (embeddings) read besides other nodes
  // whose backward runs first (a tied output layer) is offered lookupsApart(param) once those
  // others are done; when it returns a tensor of the parameter's shape (zeros), the lookups add
  // their rows there instead, and the parameter's gradient is ready (final) at once, not at the
  // end of backward. An empty tensor keeps the lookups in the gradient.
  using LookupsApart = std::function<Tensor(size_t param)>;
  void backward(Expr top = nullptr, const std::vector<float>* seed = nullptr, bool accumulate = false,
                const GradientReady& ready = nullptr, const LookupsApart& lookupsApart = nullptr);
  // The parameter indices in the order backward() from the last recorded node calls `ready`
  // (with lookupsApart taking every table it is offered), from the shapes of the nodes alone:
  // what gradient buckets are cut by.
  std::vector<size_t> gradientOrder(bool lookupsApart) const;
  // The parameters backward() would offer to lookupsApart (tables that lookups and other nodes read).
  std::vector<size_t> lookupTables() const;
  // The workspace bytes forward(keep, withBackward) and then backward() of the recorded nodes
  // take, from their shapes alone (nothing is allocated or computed): what --mini-batch-fit
  // probes a batch size with.
  size_t workspaceBytes(const std::vector<Expr>& keep, bool withBackward) const;
  // Drops all nodes (parameters stay): call before building the graph of the next batch.
  void clear();

  size_t size() const { return nodes_.size(); }
  // Seeds for stochastic operators (dropout): the n-th call after setRandomSeed(s) returns the
  // same value on every run, so a batch's masks depend only on s and its graph's structure.
  void setRandomSeed(uint64_t s) { randomSeed_ = s; randomCounter_ = 0; }
  uint64_t nextRandomSeed() { return randomSeed_ * 0x9E3779B97F4A7C15ull + (++randomCounter_); }

private:
  // What forward(keep, backwardFollows) does with each value: when to round it, when to release it.
  struct ValuePlan {
    std::vector<size_t> owner;  // by node: the node whose workspace block its value is (kNoOwner: none)
    // by node: the values whose last reader it is, to release after its forward (never those of
    // `keep` and their views, nor with backwardFollows what backward reads in float32) ...
    std::vector<std::vector<size_t>> releaseAfter;
    // by node: the values that backward reads only as products' operands and that it is the
    // first product to read, to round into bfloat16 before its forward: forward's products read
    // that copy too, and their float32 value is released after its last reader as others are
    std::vector<std::vector<size_t>> roundBefore;
  };
  static constexpr size_t kNoOwner = size_t(-1);
  ValuePlan valueLifetimes(const std::vector<Expr>& keep, bool backwardFollows) const;
  void run(const ValuePlan* plan, bool backwardFollows);
  // Rounds value `owner` into a bfloat16 block of the workspace that products read from then on
  // (Node::productVal), for its views recorded before node `next` too (later ones when they run).
  void keepInBfloat16(size_t owner, size_t next, const std::vector<size_t>& owners);
  // Whether this graph's products read bfloat16 on the CPU (rounded parameters, rounded operands).
  bool cpuBfloat16Products() const { return productType_ == ProductType::bfloat16 && device_.type == DeviceType::cpu; }
  // This thread's products in productType_, reading the rounded parameters (the caller's or roundedParams_).
  ProductPrecisionScope productPrecision() const;
  // The parameters' gradients before a backward from node `end` that does not accumulate:
  // zeroed, but for those whose first writer overwrites them (Node::overwritesFreshChildGrad),
  // whose bit it sets.
  void startParamGrads(size_t end);
  // backward's walk from node `end` (the top) down: allocate(n, writer) before a gradient is first
  // written (the top's first), by `writer`'s backward (nullptr for the top and for a gradient
  // nothing flows into), runBackward(i) for every node that needs a gradient, release(n)
  // after it, `ready` as in backward; apart(param) is asked where backward offers lookupsApart
  // and says whether the lookups went apart. Parameters' gradients live in their own buffers
  // and are neither allocated nor released.
  void gradientSchedule(size_t end, const std::function<void(Node*, Node*)>& allocate,
                        const std::function<void(Node*)>& release, const std::function<void(size_t)>& runBackward,
                        const GradientReady& ready, const std::function<bool(size_t)>& apart = nullptr) const;

  Device device_;
  uint64_t seed_;
  uint64_t randomSeed_;
  uint64_t randomCounter_ = 0;
  Parameters params_;
  ProductType productType_ = ProductType::float32;
  std::unique_ptr<FlatBuffer> roundedParams_;  // the parameters in bfloat16, refreshed by each forward (CPU)
  Tensor sharedRounded_;                       // or the caller's (useRoundedParameters)
  std::unique_ptr<Workspace> workspace_;
  std::vector<std::unique_ptr<Node>> nodes_;
};

}  // namespace marian
