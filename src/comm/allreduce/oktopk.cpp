// "oktopk" (seed 002, Ok-Topk's O(k) sparse allreduce):
//  1. split and reduce: region boundaries that balance the ranks' pairs (each rank cuts its own
//     pairs into P equal counts, the cuts are averaged over ranks) are recomputed every tau
//     calls; every rank sends each region's pairs to its owner, destinations rotated.
//  2. the global threshold, the k-th largest magnitude of the sum, is recomputed exactly every
//     tau' calls and reused in between (the gradient changes slowly); each owner keeps its
//     region's entries at or above it.
//  3. balance and allgatherv: when one owner holds more than 4x the average, the kept entries are
//     first spread evenly (in index order) over the ranks; then every rank gathers all of them.
// The result is the selection; at most about 6k (P-1)/P values (3 k (P-1)/P pairs) per rank.
#include <algorithm>
#include <cmath>
#include <functional>

#include "comm/allreduce/allreduce.h"
#include "comm/allreduce/packing.h"
#include "comm/allreduce/sparse_ops.h"
#include "comm/message_tags.h"
#include "common/byte_record.h"
#include "common/equal_split.h"

namespace marian {

namespace {

class OkTopkAllreduce : public Allreduce {
public:
  OkTopkAllreduce(Transport& t, const AllreduceSettings& s) : Allreduce(t), settings_(s) {
    ABORT_IF(s.repartitionEvery < 1 || s.thresholdEvery < 1, "oktopk: tau and tau' must be >= 1");
  }
  std::string name() const override { return "oktopk"; }

  AllreduceResult reduce(const SparseVector& local, size_t n, size_t k) override {
    checkIndices(local, n);
    int P = transport_.size();
    if(n != n_) {  // a new vector: forget what was learnt about the last one
      n_ = n;
      calls_ = 0;
    }
    if(calls_ % settings_.repartitionEvery == 0)
      starts_ = balancedRegions(local, n);
    SparseVector region = splitAndReduce(local, starts_, kOkTopkSplitTag);
    if(calls_ % settings_.thresholdEvery == 0)
      threshold_ = globalThreshold(region, k);
    ++calls_;

    auto keeps = [&](size_t j) { return region.values[j] != 0.f && std::fabs(region.values[j]) >= threshold_; };
    uint64_t kept = 0;
    for(size_t j = 0; j < region.size(); ++j)
      kept += keeps(j);
    std::vector<uint64_t> sizes = gatherSizes(kept);
    uint64_t total = 0, largest = 0;
    for(uint64_t s : sizes) {
      total += s;
      largest = std::max(largest, s);
    }
    std::vector<char> mine;
    if(P > 1 && largest * uint64_t(P) > 4 * total) {
      mine = packSparse(rebalance(keptOf(region, keeps), sizes, total));
    } else {  // packed straight from the region
      ByteWriter w;
      w.reserve(kept * kSparsePairBytes);
      putSparse(w, region.view(), keeps);
      mine = w.take();
    }

    AllreduceResult result;
    result.isSelection = true;
    result.threshold = threshold_;
    for(const std::vector<char>& piece : ringAllgather(std::move(mine), kOkTopkGatherTag)) {
      SparseView in = readSparse(piece);  // appended from where it was received
      checkIndices(in, n);
      ABORT_IF(in.size && result.sparse.size() && in.indices[0] <= result.sparse.indices.back(),
               "oktopk: gathered pieces out of index order");
      result.sparse.indices.insert(result.sparse.indices.end(), in.indices, in.indices + in.size);
      result.sparse.values.insert(result.sparse.values.end(), in.values, in.values + in.size);
    }
    return result;
  }

private:
  template <class Keeps>
  static SparseVector keptOf(const SparseVector& region, Keeps keeps) {
    SparseVector kept;
    for(size_t j = 0; j < region.size(); ++j)
      if(keeps(j)) {
        kept.indices.push_back(region.indices[j]);
        kept.values.push_back(region.values[j]);
      }
    return kept;
  }

  // P+1 region starts: each rank's own cuts (equal counts of its pairs), averaged over ranks.
  std::vector<uint32_t> balancedRegions(const SparseVector& local, size_t n) {
    int P = transport_.size();
    std::vector<uint32_t> cuts(size_t(P) - 1);
    for(int b = 1; b < P; ++b)
      cuts[size_t(b) - 1] = local.size() ? local.indices[local.size() * size_t(b) / size_t(P)]
                                         : uint32_t(equalPart(n, size_t(b), size_t(P)).offset);
    std::vector<double> mean(cuts.size(), 0.0);
    for(const std::vector<char>& piece : ringAllgather(packArray(cuts), kOkTopkRepartitionTag)) {
      std::vector<uint32_t> theirs = unpackArray<uint32_t>(piece, "oktopk message");
      ABORT_IF(theirs.size() != cuts.size(), "oktopk: a rank sent {} region cuts, not {}", theirs.size(), cuts.size());
      for(size_t b = 0; b < cuts.size(); ++b)
        mean[b] += double(theirs[b]) / P;
    }
    std::vector<uint32_t> starts(size_t(P) + 1, 0);
    starts[size_t(P)] = uint32_t(n);
    for(int b = 1; b < P; ++b)
      starts[size_t(b)] = std::clamp(uint32_t(std::llround(mean[size_t(b) - 1])), starts[size_t(b) - 1], uint32_t(n));
    return starts;
  }

  // The k-th largest magnitude of the summed vector: it is among every region's k largest.
  float globalThreshold(const SparseVector& region, size_t k) {
    if(k == 0)
      return 0.f;
    std::vector<float> magnitudes;
    for(float v : largestK(region, k).values)
      magnitudes.push_back(std::fabs(v));
    std::vector<float> all;
    for(const std::vector<char>& piece : ringAllgather(packArray(magnitudes), kOkTopkThresholdTag)) {
      std::vector<float> theirs = unpackArray<float>(piece, "oktopk message");
      all.insert(all.end(), theirs.begin(), theirs.end());
    }
    if(all.size() <= k)
      return 0.f;
    std::nth_element(all.begin(), all.begin() + long(k - 1), all.end(), std::greater<float>());
    return all[k - 1];
  }

  std::vector<uint64_t> gatherSizes(uint64_t mine) {
    std::vector<uint64_t> sizes;
    for(const std::vector<char>& piece : ringAllgather(packArray(std::vector<uint64_t>{mine}), kOkTopkSizesTag)) {
      std::vector<uint64_t> one = unpackArray<uint64_t>(piece, "oktopk message");
      ABORT_IF(one.size() != 1, "oktopk: a size message holds {} values", one.size());
      sizes.push_back(one[0]);
    }
    return sizes;
  }

  // Moves the kept entries so that rank j holds entries [total j/P, total (j+1)/P) of all of
  // them in index order (regions are in rank order, so that is the ranks' pieces one after another).
  SparseVector rebalance(const SparseVector& kept, const std::vector<uint64_t>& sizes, uint64_t total) {
    int P = transport_.size(), r = transport_.rank();
    std::vector<uint64_t> offset(size_t(P) + 1, 0);
    for(int i = 0; i < P; ++i)
      offset[size_t(i) + 1] = offset[size_t(i)] + sizes[size_t(i)];
    auto target = [&](int j) { return std::make_pair(total * uint64_t(j) / uint64_t(P), total * uint64_t(j + 1) / uint64_t(P)); };
    // the part of rank i's piece that belongs to rank j, as positions in rank i's piece
    auto part = [&](int i, int j) {
      auto [lo, hi] = target(j);
      uint64_t begin = std::max(lo, offset[size_t(i)]), end = std::min(hi, offset[size_t(i) + 1]);
      if(end < begin)
        end = begin;
      return std::make_pair(begin - offset[size_t(i)], end - offset[size_t(i)]);
    };
    auto cut = [&](std::pair<uint64_t, uint64_t> range) {
      SparseVector out;
      out.indices.assign(kept.indices.begin() + long(range.first), kept.indices.begin() + long(range.second));
      out.values.assign(kept.values.begin() + long(range.first), kept.values.begin() + long(range.second));
      return out;
    };
    std::vector<SparseVector> parts(static_cast<size_t>(P));
    parts[size_t(r)] = cut(part(r, r));
    for(int s = 1; s < P; ++s) {
      int dest = (r + s) % P, source = (r - s + P) % P;
      parts[size_t(source)] = unpackSparse(exchange(dest, source, kOkTopkBalanceTag + s, packSparse(cut(part(r, dest)))));
      auto [b, e] = part(source, r);
      ABORT_IF(parts[size_t(source)].size() != e - b, "oktopk: rank {} sent {} entries to balance, not {}", source,
               parts[size_t(source)].size(), e - b);
    }
    SparseVector mine;
    for(const SparseVector& p : parts) {
      mine.indices.insert(mine.indices.end(), p.indices.begin(), p.indices.end());
      mine.values.insert(mine.values.end(), p.values.begin(), p.values.end());
    }
    return mine;
  }

  AllreduceSettings settings_;
  size_t n_ = 0;
  long calls_ = 0;
  std::vector<uint32_t> starts_;
  float threshold_ = 0.f;
};

}  // namespace

std::unique_ptr<Allreduce> createOkTopk(Transport& t, const AllreduceSettings& s) {
  return std::make_unique<OkTopkAllreduce>(t, s);
}

}  // namespace marian
