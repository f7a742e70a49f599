#include "comm/allreduce/allreduce_reference.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "comm/allreduce/onebit.h"
#include "comm/allreduce/quantized.h"
#include "comm/allreduce/segments.h"
#include "common/equal_split.h"

namespace marian {

std::vector<float> denseReference(const std::vector<SparseVector>& inputs, size_t n) {
  std::vector<float> sum(n, 0.f);
  for(const SparseVector& v : inputs)
    v.addTo(sum.data());
  return sum;
}

SparseVector globalTopkReference(const std::vector<SparseVector>& inputs, size_t k) {
  // Apart from sparse_ops (largestK, mergeSparse), which the algorithm itself uses, so that a
  // wrong tie rule there cannot agree with itself: each node's pairs in a map by index, merged by
  // adding, cut to the first k by (|value| descending, index ascending) with a full sort.
  using Held = std::map<uint32_t, float>;
  auto keep = [k](Held& held) {
    std::vector<std::pair<uint32_t, float>> order(held.begin(), held.end());
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
      float ma = std::fabs(a.second), mb = std::fabs(b.second);
      return ma != mb ? ma > mb : a.first < b.first;
    });
    if(k > 0 && order.size() > k)
      order.resize(k);
    held = Held(order.begin(), order.end());
  };
  size_t P = inputs.size();
  std::vector<Held> node(P);
  for(size_t r = 0; r < P; ++r)
    for(size_t j = 0; j < inputs[r].size(); ++j)
      node[r][inputs[r].indices[j]] += inputs[r].values[j];
  for(size_t d = 1; d < P; d *= 2)
    for(size_t r = 0; r + d < P; r += 2 * d) {
      for(const auto& [i, v] : node[r + d])
        node[r][i] += v;
      keep(node[r]);
    }
  keep(node[0]);  // one rank: its own top k
  // the values: every rank's at the selected indices, summed in rank order
  Held sum;
  for(const auto& [i, v] : node[0])
    sum[i] = 0.f;
  for(const SparseVector& in : inputs)
    for(size_t j = 0; j < in.size(); ++j) {
      auto it = sum.find(in.indices[j]);
      if(it != sum.end())
        it->second += in.values[j];
    }
  SparseVector selected;
  for(const auto& [i, v] : sum) {
    selected.indices.push_back(i);
    selected.values.push_back(v);
  }
  return selected;
}

bool matchesReference(const std::string& name, const AllreduceResult& got, const std::vector<SparseVector>& inputs,
                      size_t n, size_t k) {
  if(name == "gtopk" && k > 0) {
    SparseVector expected = globalTopkReference(inputs, k);
    return got.isSelection && got.sparse.indices == expected.indices && got.sparse.values == expected.values;
  }
  std::vector<float> expected = denseReference(inputs, n);
  if(name == "oktopk" && k > 0) {  // the sum's entries at or above the threshold it applied
    if(!got.isSelection)
      return false;
    for(float& v : expected)
      if(std::fabs(v) < got.threshold)
        v = 0.f;
  }
  return got.toDense(n) == expected;
}

}  // namespace marian

namespace marian {

namespace {
// x[range] sent as a sign and the RMS or mean magnitude per segment (starts relative to the
// range); error = x - sent
void signScaled(const std::vector<double>& x, Range range, const std::vector<size_t>& starts, OneBitScale by,
                std::vector<double>& out, std::vector<double>& error) {
  for(size_t s = 0; s < starts.size(); ++s) {
    size_t begin = range.offset + starts[s], end = s + 1 < starts.size() ? range.offset + starts[s + 1] : range.end();
    double squares = 0, magnitudes = 0;
    for(size_t i = begin; i < end; ++i) {
      squares += x[i] * x[i];
      magnitudes += std::fabs(x[i]);
    }
    double size = double(end - begin);
    double scale = end == begin ? 0.0 : by == OneBitScale::rms ? std::sqrt(squares / size) : magnitudes / size;
    for(size_t i = begin; i < end; ++i) {
      out[i] = x[i] < 0 ? -scale : scale;
      error[i] = x[i] - out[i];
    }
  }
}
}  // namespace

OneBitReference::OneBitReference(size_t n, size_t ranks, std::vector<size_t> segmentStarts, OneBitScale scale)
    : n_(n), ranks_(ranks), segmentStarts_(std::move(segmentStarts)), scale_(scale),
      worker_(ranks, std::vector<double>(n, 0.0)), server_(n, 0.0) {}

namespace {
// x[range] quantized per block of the range (8 and 4 bits: scale its largest magnitude over L;
// codes rounded to nearest, halves away from zero in either direction; 2 bits: the levels split
// at the block's root mean square times the split, the least-squares scale); error = x - out
void quantized(const std::vector<double>& x, Range range, int bits, size_t block, std::vector<double>& out,
               std::vector<double>& error) {
  double L = double((1 << (bits - 1)) - 1);
  for(size_t begin = range.offset; begin < range.end(); begin += block) {
    size_t end = std::min(range.end(), begin + block);
    if(bits == 2) {
      double squares = 0, along = 0, levelSquares = 0;
      for(size_t i = begin; i < end; ++i)
        squares += x[i] * x[i];
      double split = double(QuantizedAllreduce::kTwoBitSplit) * std::sqrt(squares / double(end - begin));
      auto levelOf = [&](double v) { return double(QuantizedAllreduce::kTwoBitLevels[std::fabs(v) < split ? 0 : 1]); };
      for(size_t i = begin; i < end; ++i) {
        along += std::fabs(x[i]) * levelOf(x[i]);
        levelSquares += levelOf(x[i]) * levelOf(x[i]);
      }
      double scale = squares > 0 ? along / levelSquares : 0.0;
      for(size_t i = begin; i < end; ++i) {
        out[i] = (x[i] < 0 ? -1.0 : 1.0) * levelOf(x[i]) * scale;
        error[i] = x[i] - out[i];
      }
      continue;
    }
    double largest = 0;
    for(size_t i = begin; i < end; ++i)
      largest = std::max(largest, std::fabs(x[i]));
    double scale = largest / L;
    for(size_t i = begin; i < end; ++i) {
      out[i] = scale > 0 ? std::clamp(std::round(x[i] / scale), -L, L) * scale : 0.0;
      error[i] = x[i] - out[i];
    }
  }
}
}  // namespace

QuantizedReference::QuantizedReference(size_t n, size_t ranks, int bits, size_t block)
    : n_(n), ranks_(ranks), block_(block), bits_(bits), worker_(ranks, std::vector<double>(n, 0.0)), server_(n, 0.0) {}

std::vector<double> QuantizedReference::average(const std::vector<std::vector<float>>& inputs) {
  std::vector<double> mean(n_, 0.0), result(n_, 0.0);
  for(size_t r = 0; r < ranks_; ++r) {
    std::vector<double> x(n_), sent(n_);
    for(size_t i = 0; i < n_; ++i)
      x[i] = double(inputs[r][i]) + worker_[r][i];
    for(size_t j = 0; j < ranks_; ++j)
      quantized(x, equalPart(n_, j, ranks_), bits_, block_, sent, worker_[r]);
    for(size_t i = 0; i < n_; ++i)
      mean[i] += sent[i] / double(ranks_);
  }
  for(size_t i = 0; i < n_; ++i)
    mean[i] += server_[i];
  for(size_t j = 0; j < ranks_; ++j)
    quantized(mean, equalPart(n_, j, ranks_), bits_, block_, result, server_);
  return result;
}

std::vector<double> OneBitReference::average(const std::vector<std::vector<float>>& inputs) {
  std::vector<double> mean(n_, 0.0), result(n_, 0.0);
  for(size_t r = 0; r < ranks_; ++r) {
    std::vector<double> x(n_), sent(n_);
    for(size_t i = 0; i < n_; ++i)
      x[i] = double(inputs[r][i]) + worker_[r][i];
    for(size_t j = 0; j < ranks_; ++j) {
      Range c = equalPart(n_, j, ranks_);
      signScaled(x, c, segmentsIn(c, segmentStarts_), scale_, sent, worker_[r]);
    }
    for(size_t i = 0; i < n_; ++i)
      mean[i] += sent[i] / double(ranks_);
  }
  for(size_t i = 0; i < n_; ++i)
    mean[i] += server_[i];
  for(size_t j = 0; j < ranks_; ++j) {
    Range c = equalPart(n_, j, ranks_);
    signScaled(mean, c, segmentsIn(c, segmentStarts_), scale_, result, server_);
  }
  return result;
}

}  // namespace marian
