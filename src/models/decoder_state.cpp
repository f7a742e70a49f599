#include "models/decoder_state.h"

#include <algorithm>
#include <set>

#include "common/error.h"
#include "tensors/kernels.h"

namespace marian {

DecoderState::DecoderState(Device device) : device_(device) {}
DecoderState::~DecoderState() = default;

Expr DecoderState::get(ExpressionGraph& g, const std::string& name) const {
  auto it = kept_.find(name);
  ABORT_IF(it == kept_.end(), "The decoder state has no '{}'", name);
  return g.view(it->second.buffer->view(0, it->second.shape));
}

void DecoderState::set(const std::string& name, Expr x) {
  ABORT_IF(x->valueType() != Type::float32, "The decoder state keeps float tensors, '{}' is not one", name);
  ABORT_IF(x->shape().rank() < 1, "The decoder state's '{}' has no rows axis", name);
  pending_.push_back({name, x, false});
}

void DecoderState::setPerSentence(const std::string& name, Expr x) {
  ABORT_IF(x->valueType() != Type::float32, "The decoder state keeps float tensors, '{}' is not one", name);
  ABORT_IF(x->shape().rank() < 1, "The decoder state's '{}' has no sentences axis", name);
  pending_.push_back({name, x, true});
}

std::vector<Expr> DecoderState::pendingValues() const {
  std::vector<Expr> values;
  for(const auto& p : pending_)
    values.push_back(p.value);
  return values;
}

void DecoderState::reserve(std::unique_ptr<FlatBuffer>& buffer, size_t elements) {
  if(buffer && buffer->size() >= elements)
    return;
  buffer.reset();
  auto best = pool_.end();  // the smallest pooled buffer that is large enough
  for(auto it = pool_.begin(); it != pool_.end(); ++it)
    if((*it)->size() >= elements && (best == pool_.end() || (*it)->size() < (*best)->size()))
      best = it;
  if(best != pool_.end()) {
    buffer = std::move(*best);
    pool_.erase(best);
  } else {  // half again: a prefix one position longer each step rarely reallocates
    buffer = std::make_unique<FlatBuffer>(device_, Type::float32, elements + elements / 2);
  }
}

void DecoderState::keepRows(const std::vector<int>& rows) {
  ABORT_IF(rows.empty(), "DecoderState::keepRows of no rows: clear() the state instead");
  int n = int(rows.size());
  reserve(indices_, rows.size());  // float-sized slots hold the int32 indices
  Tensor idx(indices_->all().data, Shape({n}), Type::int32, device_);
  kernels::fromHostInts(idx, rows);
  // the rows `rows` of `from` into `target` (not from's own buffer)
  auto gather = [&](Kept& k, std::unique_ptr<FlatBuffer>& target, Tensor from) {
    int width = int(from.shape.elements() / size_t(from.shape[0]));
    reserve(target, size_t(n) * size_t(width));
    kernels::gatherRows(target->view(0, Shape({n, width})),
                        Tensor(from.data, Shape({from.shape[0], width}), Type::float32, from.device), idx);
    k.shape = from.shape.with(0, n);
  };
  // A value of this step may be a view of the state's own memory (a kept tensor): that tensor's
  // buffer then stays as it is until every value is kept, its own new value going to the spare.
  std::set<const FlatBuffer*> sources;
  for(const auto& p : pending_) {
    const char* at = static_cast<const char*>(p.value->val().data);
    for(const auto& [name, k] : kept_)
      if(k.buffer && at >= static_cast<const char*>(k.buffer->all().data) &&
         at < static_cast<const char*>(k.buffer->all().data) + k.buffer->size() * sizeof(float))
        sources.insert(k.buffer.get());
  }
  std::set<std::string> setNow;
  for(auto& p : pending_) {  // values of this step: out of the workspace (or a view of the state)
    Kept& k = kept_[p.name];
    k.perSentence = p.perSentence;
    Tensor from = p.value->val();
    bool toSpare = k.buffer && sources.count(k.buffer.get());
    std::unique_ptr<FlatBuffer>& target = toSpare ? k.spare : k.buffer;
    if(p.perSentence) {
      if(k.buffer && from.data == k.buffer->all().data) {  // itself, as it is
        toSpare = false;
      } else {
        reserve(target, from.shape.elements());
        kernels::copy(target->view(0, from.shape), from);
      }
      k.shape = from.shape;
    } else {
      gather(k, target, from);
    }
    if(toSpare)
      std::swap(k.buffer, k.spare);
    setNow.insert(p.name);
  }
  bool same = n == rows_;  // the rows as they are (greedy decoding until a sentence ends)
  for(int r = 0; same && r < n; ++r)
    same = rows[size_t(r)] == r;
  for(auto& [name, k] : kept_)
    if(!setNow.count(name) && !k.perSentence && !same) {  // kept from before: into the spare, swapped
      gather(k, k.spare, k.buffer->view(0, k.shape));
      std::swap(k.buffer, k.spare);
    }
  pending_.clear();
  rows_ = n;
}

void DecoderState::clear() {
  for(auto& [name, k] : kept_)
    for(auto* b : {&k.buffer, &k.spare})
      if(*b)
        pool_.push_back(std::move(*b));
  kept_.clear();
  pending_.clear();
  rows_ = 0;
}

size_t DecoderState::bytes() const {
  size_t floats = indices_ ? indices_->size() : 0;
  for(const auto& [name, k] : kept_)
    for(const auto* b : {&k.buffer, &k.spare})
      floats += *b ? (*b)->size() : 0;
  for(const auto& b : pool_)
    floats += b->size();
  return floats * sizeof(float);
}

}  // namespace marian
