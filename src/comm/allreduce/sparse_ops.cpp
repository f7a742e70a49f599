#include "comm/allreduce/sparse_ops.h"

#include "common/equal_split.h"

#include <algorithm>
#include <cmath>

namespace marian {

std::vector<float> valuesAt(const SparseVector& v, const std::vector<uint32_t>& indices) {
  std::vector<float> out(indices.size(), 0.f);
  size_t j = 0;
  for(size_t i = 0; i < indices.size(); ++i) {
    while(j < v.size() && v.indices[j] < indices[i])
      ++j;
    if(j < v.size() && v.indices[j] == indices[i])
      out[i] = v.values[j];
  }
  return out;
}

SparseVector mergeSparse(const SparseVector& a, const SparseVector& b) {
  if(a.size() == 0)
    return b;
  if(b.size() == 0)
    return a;
  SparseVector out;
  out.indices.reserve(a.size() + b.size());
  out.values.reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while(i < a.size() || j < b.size()) {
    if(j == b.size() || (i < a.size() && a.indices[i] < b.indices[j])) {
      out.indices.push_back(a.indices[i]);
      out.values.push_back(a.values[i++]);
    } else if(i == a.size() || b.indices[j] < a.indices[i]) {
      out.indices.push_back(b.indices[j]);
      out.values.push_back(b.values[j++]);
    } else {
      out.indices.push_back(a.indices[i]);
      out.values.push_back(a.values[i++] + b.values[j++]);
    }
  }
  return out;
}

SparseVector mergeSparse(const std::vector<SparseView>& parts) {
  size_t total = 0;
  for(const SparseView& p : parts)
    total += p.size;
  SparseVector out;
  out.indices.reserve(total);
  out.values.reserve(total);
  std::vector<size_t> at(parts.size(), 0);
  for(;;) {
    // the smallest index at the parts' heads (few parts: a scan beats a heap)
    uint32_t next = UINT32_MAX;
    bool any = false;
    for(size_t p = 0; p < parts.size(); ++p)
      if(at[p] < parts[p].size && (!any || parts[p].indices[at[p]] < next)) {
        next = parts[p].indices[at[p]];
        any = true;
      }
    if(!any)
      return out;
    float sum = 0.f;
    bool first = true;
    for(size_t p = 0; p < parts.size(); ++p)  // in the parts' order
      if(at[p] < parts[p].size && parts[p].indices[at[p]] == next) {
        sum = first ? parts[p].values[at[p]] : sum + parts[p].values[at[p]];
        first = false;
        ++at[p];
      }
    out.indices.push_back(next);
    out.values.push_back(sum);
  }
}

SparseView sliceView(SparseView v, uint32_t begin, uint32_t end) {
  size_t lo = size_t(std::lower_bound(v.indices, v.indices + v.size, begin) - v.indices);
  size_t hi = size_t(std::lower_bound(v.indices, v.indices + v.size, end) - v.indices);
  return {v.indices + lo, v.values + lo, hi - lo};
}

SparseVector slice(const SparseVector& v, uint32_t begin, uint32_t end) {
  SparseView s = sliceView(v.view(), begin, end);
  SparseVector out;
  out.indices.assign(s.indices, s.indices + s.size);
  out.values.assign(s.values, s.values + s.size);
  return out;
}

SparseVector sliceFrom(const SparseVector& v, uint32_t begin, uint32_t end) {
  SparseVector out = slice(v, begin, end);
  for(uint32_t& i : out.indices)
    i -= begin;
  return out;
}

SparseVector largestK(const SparseVector& v, size_t k) {
  if(v.size() <= k)
    return v;
  std::vector<uint32_t> order(v.size());
  for(size_t j = 0; j < order.size(); ++j)
    order[j] = uint32_t(j);
  auto larger = [&](uint32_t a, uint32_t b) {
    float ma = std::fabs(v.values[a]), mb = std::fabs(v.values[b]);
    return ma > mb || (ma == mb && a < b);
  };
  std::nth_element(order.begin(), order.begin() + long(k), order.end(), larger);
  order.resize(k);
  std::sort(order.begin(), order.end());  // positions in v are in index order
  SparseVector out;
  out.indices.reserve(k);
  out.values.reserve(k);
  for(uint32_t j : order) {
    out.indices.push_back(v.indices[j]);
    out.values.push_back(v.values[j]);
  }
  return out;
}

std::vector<uint32_t> equalBlocks(size_t n, int P) {
  std::vector<uint32_t> starts(size_t(P) + 1);
  for(int b = 0; b < P; ++b)
    starts[size_t(b)] = uint32_t(equalPart(n, size_t(b), size_t(P)).offset);
  starts[size_t(P)] = uint32_t(n);
  return starts;
}

}  // namespace marian
