#pragma once
// defines: marian::AdamMoments — 1-bit and 0/1 Adam's rule on the optimizer's side (Tang et al.
// 2021; Lu et al. 2022): once the variance is frozen the ranks average the momentum each would
// have after its own gradient, beta1 m + (1 - beta1) g_rank, and the optimizer's step gives that
// average. This is where the momentum and variance are read (by name, from the shards' Adam),
// where the rank's gradient is clipped under --clip-norm before it joins its momentum (through
// clipFactor, the one clip of every graph group), and where the averaged momentum becomes the
// gradient the optimizer steps with. The exchange itself is the 1-bit codec's
// (training/exchange/onebit_codec.cpp).
#include <functional>
#include <memory>
#include <vector>

#include "common/equal_split.h"

namespace marian {

class ParameterShard;

class AdamMoments {
public:
  using Reader = std::function<void(Range, float*)>;  // a global range into host memory
  AdamMoments() = default;
  AdamMoments(Reader first, Reader second, float beta1)
      : first_(std::move(first)), second_(std::move(second)), beta1_(beta1) {}
  // Adam's m and v where the shards of a rank keep them (they outlive the view).
  static AdamMoments of(const std::vector<std::unique_ptr<ParameterShard>>& shards, float beta1);

  bool readable() const { return bool(first_); }
  bool varianceReadable() const { return bool(second_); }
  float beta1() const { return beta1_; }
  // m or v over a global range (zeros before the first step).
  void readFirst(Range range, float* out) const { first_(range, out); }
  void readSecond(Range range, float* out) const { second_(range, out); }

  // `values`: a bucket's part of the summed gradient (its `ranges` of the global layout, n values
  // in the whole gradient), on `ranks` ranks. It becomes this rank's momentum candidate
  // beta1 m + (1 - beta1) ranks x values, the rank's gradient clipped to its share of clipNorm
  // (> 0) first; `m` becomes the m it read, for toGradient (the caller's buffer, kept between
  // updates: a model's size allocated anew each update faults its pages in again).
  void toCandidate(const std::vector<Range>& ranges, std::vector<float>& values, int ranks, size_t n, float clipNorm,
                   uint64_t update, std::vector<float>& m) const;
  // The averaged momentum becomes the gradient whose momentum step gives it.
  void toGradient(std::vector<float>& momentum, const std::vector<float>& m) const;
  // sqrt(v) over `ranges`, at least a 100th of its parameter's mean (parameterStarts: where each
  // parameter begins in the ranges' coordinates): the units of the update direction m / sqrt(v)
  // (--onebit-update-direction). Adam's bias correction and epsilon are left out: a factor common
  // to a parameter does not change what its segment sends.
  std::vector<float> updateDirectionUnits(const std::vector<Range>& ranges,
                                          const std::vector<size_t>& parameterStarts) const;

private:
  void read(const Reader& reader, const std::vector<Range>& ranges, float* out) const;
  Reader first_, second_;
  float beta1_ = 0;  // what the constructor is given (an empty AdamMoments reads nothing)
};

}  // namespace marian
