// ExpressionGraph's backward schedule: which node first writes each gradient (the parameters'
// included), the walk that allocates, runs and releases them, and what is derived from that walk
// alone (the parameters' order for gradient buckets, the tables lookups read).
#include <algorithm>
#include <limits>
#include <utility>

#include "graph/expression_graph.h"
#include "graph/param_node.h"
#include "tensors/arena.h"
#include "tensors/backend.h"
#include "tensors/kernels.h"

namespace marian {

void ExpressionGraph::startParamGrads(size_t end) {
  // A parameter's first writer is the first node of backward's walk (from `end` down) that
  // reads it; where that node reads it once and overwrites, the gradient is left unzeroed.
  std::vector<char> seen(params_.entries().size(), 0), fresh(params_.entries().size(), 0);
  for(size_t i = end + 1; i-- > 0;) {
    Node* n = nodes_[i].get();
    if(!n->needsGrad() || dynamic_cast<const ParamNode*>(n))
      continue;
    for(size_t c = 0; c < n->children().size(); ++c) {
      auto* p = dynamic_cast<const ParamNode*>(n->child(c).get());
      if(!p || !p->needsGrad() || seen[p->index()])
        continue;
      seen[p->index()] = 1;
      // (once: no other child of n is this parameter, through this node or another of its index)
      size_t reads = 0;
      for(const Expr& other : n->children())
        if(auto* q = dynamic_cast<const ParamNode*>(other.get()); q && q->index() == p->index())
          ++reads;
      if(c < 32 && reads == 1 && n->overwritesFreshChildGrad(c)) {
        fresh[p->index()] = 1;
        n->freshChildGrads_ |= 1u << c;
      }
    }
  }
  // Zero all but the fresh parameters' ranges, in as few pieces as they leave.
  Tensor grads = params_.grads();
  std::vector<std::pair<size_t, size_t>> skip;  // [offset, end) of the fresh ones
  for(size_t i = 0; i < fresh.size(); ++i)
    if(fresh[i]) {
      const Parameters::Entry& e = params_.entries()[i];
      skip.emplace_back(e.offset, e.offset + e.shape.elements());
    }
  std::sort(skip.begin(), skip.end());
  Backend& backend = backendFor(device_);
  size_t from = 0;
  auto zero = [&](size_t a, size_t b) {
    if(b > a)
      backend.zero(grads.f32() + a, (b - a) * sizeof(float));
  };
  for(auto [a, b] : skip) {
    zero(from, a);
    if(poisonsUnwrittenMemory())  // (the gradient checks) what the writer leaves shows as NaN
      kernels::fill(grads.slice(a, b - a), std::numeric_limits<float>::quiet_NaN());
    from = b;
  }
  zero(from, grads.size());
}

void ExpressionGraph::gradientSchedule(size_t end, const std::function<void(Node*, Node*)>& allocate,
                                       const std::function<void(Node*)>& release,
                                       const std::function<void(size_t)>& runBackward,
                                       const GradientReady& ready, const std::function<bool(size_t)>& apart) const {
  auto isParam = [](const Node* n) { return dynamic_cast<const ParamNode*>(n) != nullptr; };
  std::vector<char> has(end + 1, 0);  // by node: its gradient is allocated
  auto need = [&](Node* n, Node* writer) {
    if(has[n->position_] || isParam(n))
      return;
    has[n->position_] = 1;
    allocate(n, writer);
  };
  need(nodes_[end].get(), nullptr);
  // A parameter's gradient is final when the walk reaches its first node: every node using it
  // comes later (nodes are recorded in a topological order).
  constexpr size_t kNone = size_t(-1);
  std::vector<size_t> finalAt;  // by node: the parameter whose first node it is, or kNone
  if(ready) {
    std::vector<char> used(params_.entries().size(), 0);
    finalAt.assign(end + 1, kNone);
    for(size_t i = 0; i <= end; ++i)
      if(auto* p = dynamic_cast<const ParamNode*>(nodes_[i].get()); p && !used[p->index()]) {
        used[p->index()] = 1;
        finalAt[i] = p->index();
      }
    for(size_t param = 0; param < used.size(); ++param)
      if(!used[param])
        ready(param);
  }
  // Lookups apart: a parameter read by row lookups and by other nodes is offered after the
  // backward of the other readers' first node, when a lookup comes earlier still (its backward
  // later): from there on only lookups add to it.
  std::vector<std::vector<size_t>> offerAfter;  // by node: the parameters offered after its backward
  std::vector<char> wentApart;                  // by parameter
  if(ready && apart) {
    size_t count = params_.entries().size();
    std::vector<size_t> firstOther(count, kNone), firstLookup(count, kNone);
    for(size_t i = 0; i <= end; ++i)
      for(size_t c = 0; c < nodes_[i]->children().size(); ++c)
        if(auto* p = dynamic_cast<const ParamNode*>(nodes_[i]->child(c).get())) {
          size_t& first = (nodes_[i]->addsRowsToChild(c) ? firstLookup : firstOther)[p->index()];
          first = std::min(first, i);
        }
    offerAfter.resize(end + 1);
    for(size_t param = 0; param < count; ++param)
      if(firstOther[param] != kNone && firstLookup[param] < firstOther[param])
        offerAfter[firstOther[param]].push_back(param);
    wentApart.assign(count, 0);
  }
  for(size_t i = end + 1; i-- > 0;) {
    Node* n = nodes_[i].get();
    if(n->needsGrad() && !isParam(n)) {
      need(n, nullptr);  // nothing flowed into it: zeros
      for(const Expr& c : n->children())
        if(c->needsGrad())
          need(c.get(), n);
      runBackward(i);
      release(n);
    }
    if(!offerAfter.empty())
      for(size_t param : offerAfter[i])
        if(apart(param)) {
          wentApart[param] = 1;
          ready(param);
        }
    if(ready && finalAt[i] != kNone && (wentApart.empty() || !wentApart[finalAt[i]]))
      ready(finalAt[i]);
  }
}

std::vector<size_t> ExpressionGraph::gradientOrder(bool lookupsApart) const {
  ABORT_IF(nodes_.empty() || !nodes_.back()->needsGrad(), "gradientOrder() of a graph without a cost to derive");
  std::vector<size_t> order;
  std::function<bool(size_t)> apart;
  if(lookupsApart)
    apart = [](size_t) { return true; };
  gradientSchedule(nodes_.size() - 1, [](Node*, Node*) {}, [](Node*) {}, [](size_t) {}, [&](size_t p) { order.push_back(p); },
                   apart);
  return order;
}

std::vector<size_t> ExpressionGraph::lookupTables() const {
  ABORT_IF(nodes_.empty() || !nodes_.back()->needsGrad(), "lookupTables() of a graph without a cost to derive");
  std::vector<size_t> tables;
  gradientSchedule(nodes_.size() - 1, [](Node*, Node*) {}, [](Node*) {}, [](size_t) {}, [](size_t) {}, [&](size_t p) {
    tables.push_back(p);
    return false;
  });
  return tables;
}

}  // namespace marian
