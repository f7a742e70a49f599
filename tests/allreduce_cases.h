#pragma once
// The cases every allreduce algorithm must pass, written once against Transport and run on each
// rank: under mpirun by test_allreduce_mpi.cpp, on threads by test_allreduce_in_process.cpp.
// Every algorithm of the table against a dense reference: bitwise on integer-valued inputs,
// within float tolerance otherwise, for overlapping and disjoint indices, fill-in past the dense
// switch, uneven k per rank, empty inputs and dimensions not divisible by P; the global top-k
// schemes against their definitions; and the bytes each rank receives, as the transport counted
// them, against each algorithm's cost model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <set>

#include "comm/allreduce/algorithms.h"
#include "comm/allreduce/allreduce_reference.h"
#include "comm/allreduce/row_allgather.h"
#include "comm/transport.h"
#include "common/error.h"

namespace marian {
namespace allreduce_cases {

enum class Pattern { random, overlapping, disjoint, empty, oneRankEmpty, fillIn, firstTenth };

// Rank `rank` of P's input: sorted unique indices below n, integer values (or any floats). Every
// rank can compute every other rank's input, so the reference needs no communication.
inline SparseVector input(int rank, int P, size_t n, size_t k, Pattern pattern, unsigned seed,
                          bool integers = true) {
  SparseVector v;
  if(pattern == Pattern::empty || (pattern == Pattern::oneRankEmpty && rank == 1))
    return v;
  std::mt19937 rng(seed * 977 + unsigned(rank));
  std::set<uint32_t> indices;
  size_t want = std::min(n, k + size_t(rank) * 3);  // uneven k per rank
  if(pattern == Pattern::fillIn)
    want = std::max<size_t>(1, n * 6 / 10);
  if(pattern == Pattern::overlapping) {
    for(size_t i = 0; i < want; ++i)
      indices.insert(uint32_t(i * 2 % n));
  } else if(pattern == Pattern::disjoint) {
    for(size_t i = size_t(rank); i < n && indices.size() < want; i += size_t(P))
      indices.insert(uint32_t(i));
  } else {
    size_t range = pattern == Pattern::firstTenth ? std::max<size_t>(want, n / 10) : n;
    std::uniform_int_distribution<uint32_t> d(0, uint32_t(range - 1));
    while(indices.size() < want)
      indices.insert(d(rng));
  }
  std::uniform_int_distribution<int> value(-50, 50);
  std::normal_distribution<float> gaussian(0.f, 1.f);
  for(uint32_t i : indices) {
    v.indices.push_back(i);
    v.values.push_back(integers ? float(value(rng)) : gaussian(rng));
  }
  return v;
}

inline std::vector<SparseVector> allInputs(int P, size_t n, size_t k, Pattern p, unsigned seed,
                                           bool integers = true) {
  std::vector<SparseVector> all;
  for(int r = 0; r < P; ++r)
    all.push_back(input(r, P, n, k, p, seed, integers));
  return all;
}

inline std::vector<float> denseSum(const std::vector<SparseVector>& inputs, size_t n) {
  return denseReference(inputs, n);
}

inline const std::vector<Pattern> kPatterns = {Pattern::random, Pattern::overlapping, Pattern::disjoint,
                                               Pattern::empty, Pattern::oneRankEmpty, Pattern::fillIn};

inline void everyAlgorithmEqualsTheDenseReferenceBitwise(Transport& t) {
  for(const AllreduceEntry& entry : allreduceAlgorithms()) {
    const std::string& name = entry.name;
    auto algo = createAllreduce(name, t);
    for(size_t n : {size_t(1), size_t(7), size_t(1000), size_t(1001)})
      for(Pattern p : kPatterns) {
        size_t k = std::max<size_t>(1, n / 10);
        unsigned seed = unsigned(n * 10 + size_t(p));
        SCOPED_TRACE(name + " n=" + std::to_string(n) + " pattern " + std::to_string(int(p)));
        // k = 0: the global top-k schemes keep the whole sum
        AllreduceResult got = algo->reduce(input(t.rank(), t.size(), n, k, p, seed), n, 0);
        ASSERT_EQ(got.toDense(n), denseSum(allInputs(t.size(), n, k, p, seed), n));
        if(!got.isDense) {
          for(size_t j = 1; j < got.sparse.size(); ++j)
            ASSERT_LT(got.sparse.indices[j - 1], got.sparse.indices[j]);
        }
      }
  }
}

// With a target k, each algorithm's result as marian-commbench checks it: the dense sum, or the
// global top-k schemes' definitions of their selections.
inline void everyAlgorithmMatchesItsReferenceWithTargetK(Transport& t) {
  size_t n = 2003, k = 50;
  for(const AllreduceEntry& entry : allreduceAlgorithms()) {
    auto algo = createAllreduce(entry.name, t);
    for(Pattern p : kPatterns) {
      SCOPED_TRACE(entry.name + " pattern " + std::to_string(int(p)));
      std::vector<SparseVector> inputs = allInputs(t.size(), n, k, p, 7 + unsigned(p));
      AllreduceResult got = algo->reduce(inputs[size_t(t.rank())], n, k);
      ASSERT_TRUE(matchesReference(entry.name, got, inputs, n, k));
    }
  }
}

inline void floatInputsWithinTolerance(Transport& t) {
  size_t n = 5003, k = 400;
  for(const AllreduceEntry& entry : allreduceAlgorithms()) {
    const std::string& name = entry.name;
    SCOPED_TRACE(name);
    auto algo = createAllreduce(name, t);
    for(Pattern p : {Pattern::random, Pattern::fillIn}) {
      std::vector<float> got = algo->reduce(input(t.rank(), t.size(), n, k, p, 3, false), n, 0).toDense(n);
      std::vector<double> expected(n, 0.0);
      for(const SparseVector& v : allInputs(t.size(), n, k, p, 3, false))
        for(size_t j = 0; j < v.size(); ++j)
          expected[v.indices[j]] += double(v.values[j]);
      for(size_t i = 0; i < n; ++i)
        ASSERT_NEAR(got[i], expected[i], 1e-5 * (1 + std::fabs(expected[i]))) << "at " << i;
    }
  }
}

inline void denseInputEveryAlgorithm(Transport& t) {
  size_t n = 3001;
  std::vector<float> expected(n, 0.f);
  for(int r = 0; r < t.size(); ++r)
    for(size_t i = 0; i < n; ++i)
      expected[i] += float(int((i * 7 + size_t(r) * 13) % 41) - 20);
  for(const AllreduceEntry& entry : allreduceAlgorithms()) {
    const std::string& name = entry.name;
    SCOPED_TRACE(name);
    std::vector<float> mine(n);
    for(size_t i = 0; i < n; ++i)
      mine[i] = float(int((i * 7 + size_t(t.rank()) * 13) % 41) - 20);
    createAllreduce(name, t)->sumDense(mine);
    ASSERT_EQ(mine, expected);
  }
}

inline void globalTopkFollowsItsDefinition(Transport& t) {
  auto algo = createAllreduce("gtopk", t);
  for(size_t n : {size_t(50), size_t(1001), size_t(20000)})
    for(Pattern p : kPatterns)
      for(size_t k : {size_t(1), size_t(5), size_t(37)}) {
        unsigned seed = unsigned(n + k * 31 + size_t(p));
        SCOPED_TRACE("n=" + std::to_string(n) + " k=" + std::to_string(k) + " pattern " + std::to_string(int(p)));
        std::vector<SparseVector> inputs = allInputs(t.size(), n, k, p, seed);  // integers: ties are frequent
        AllreduceResult got = algo->reduce(inputs[size_t(t.rank())], n, k);
        SparseVector expected = globalTopkReference(inputs, k);  // apart from the algorithm's code
        ASSERT_TRUE(got.isSelection);
        ASSERT_LE(got.sparse.size(), k);
        ASSERT_EQ(got.sparse.indices, expected.indices);
        ASSERT_EQ(got.sparse.values, expected.values);
      }
}

// The k-th largest magnitude among the non-zero entries (0 when there are at most k).
inline float kthMagnitude(const std::vector<float>& dense, size_t k) {
  std::vector<float> m;
  for(float v : dense)
    if(v != 0.f)
      m.push_back(std::fabs(v));
  if(m.size() <= k)
    return 0.f;
  std::nth_element(m.begin(), m.begin() + long(k - 1), m.end(), std::greater<float>());
  return m[k - 1];
}

inline std::vector<float> keepAtLeast(std::vector<float> dense, float threshold) {
  for(float& v : dense)
    if(std::fabs(v) < threshold)
      v = 0.f;
  return dense;
}

inline void okTopkSelectsBySumAndReusesItsThreshold(Transport& t) {
  size_t n = 20011, k = 200;
  AllreduceSettings settings;
  settings.repartitionEvery = 3;
  settings.thresholdEvery = 2;
  auto algo = createAllreduce("oktopk", t, settings);
  float lastThreshold = -1;
  // call 0: new boundaries and threshold; 1: both reused; 2: new threshold; 3: new boundaries,
  // and its input, crowded into the first tenth, overloads one owner: the balancing path
  for(int call = 0; call < 4; ++call) {
    SCOPED_TRACE("call " + std::to_string(call));
    Pattern p = call == 3 ? Pattern::firstTenth : Pattern::random;
    std::vector<SparseVector> inputs = allInputs(t.size(), n, k, p, unsigned(40 + call), false);
    std::vector<float> sum = denseSum(inputs, n);
    AllreduceResult got = algo->reduce(inputs[size_t(t.rank())], n, k);
    ASSERT_TRUE(got.isSelection);
    if(call % 2 == 0)
      EXPECT_EQ(got.threshold, kthMagnitude(sum, k));
    else
      EXPECT_EQ(got.threshold, lastThreshold);
    lastThreshold = got.threshold;
    std::vector<float> expected = keepAtLeast(sum, got.threshold);
    // owners add the ranks' pairs in rank order, as denseSum does: bitwise even for floats
    ASSERT_EQ(got.toDense(n), expected);
  }
}

inline void okTopkKeepsAboutKWithAFreshThreshold(Transport& t) {
  size_t n = 50000, k = 500;
  auto algo = createAllreduce("oktopk", t);
  std::vector<SparseVector> inputs = allInputs(t.size(), n, k, Pattern::random, 9, false);
  AllreduceResult got = algo->reduce(inputs[size_t(t.rank())], n, k);
  EXPECT_GE(got.sparse.size(), k);
  EXPECT_LE(got.sparse.size(), k + 5);  // ties at the threshold only
}

inline void bytesReceivedWithinTheCostModels(Transport& t) {
  int P = t.size();
  size_t n = 100000, k = 1000;
  double kmax = double(k + size_t(P - 1) * 3);  // the largest k of any rank
  double pair = 8, value = 4;
  int log2P = 0;
  while((1 << log2P) < P)
    ++log2P;
  for(const AllreduceEntry& entry : allreduceAlgorithms()) {
    const std::string& name = entry.name;
    SCOPED_TRACE(name);
    AllreduceSettings settings;
    settings.repartitionEvery = settings.thresholdEvery = 1000;
    auto algo = createAllreduce(name, t, settings);
    // oktopk's cost model is that of the calls between its re-evaluations
    algo->reduce(input(t.rank(), t.size(), n, k, Pattern::random, 4, false), n, k);
    algo->takeBytes();
    algo->reduce(input(t.rank(), t.size(), n, k, Pattern::random, 5, false), n, k);
    AllreduceBytes b = algo->takeBytes();
    double received = double(b.received);
    if(name == "dense") {  // MPI_Allreduce's own messages: nothing passed the transport
      EXPECT_FALSE(b.counted);
      EXPECT_EQ(b.received + b.sent, 0u);
      continue;
    }
    EXPECT_TRUE(b.counted);
    if(name == "ring") {  // 2 (P-1)/P n values, to within one chunk's rounding
      EXPECT_NEAR(received, 2.0 * (P - 1) / P * double(n) * value, 2.0 * value * P);
    } else if(name == "tree") {  // two mirrored trees of n/2: with P <= 4 no rank is inner in both
      EXPECT_LE(received, (P <= 4 ? 1.5 : 3.0) * double(n) * value + 8.0);
      EXPECT_GE(received, 0.5 * double(n) * value);
    } else if(name == "topka") {  // the other ranks' pairs: (P-1) k
      EXPECT_LE(received, double(P - 1) * kmax * pair);
      EXPECT_GE(received, double(P - 1) * double(k) * pair);
    } else if(name == "ssar-recdbl") {
      // every message holds the union of >= 1 rank's pairs; in all at most the others' pairs
      // plus the fold of an extra rank
      int p2 = 1, r = t.rank();
      while(p2 * 2 <= P)
        p2 *= 2;
      int messages = r >= p2 ? 1 : int(std::log2(double(p2))) + (r < P - p2 ? 1 : 0);
      EXPECT_GE(received, double(messages) * double(k) * pair);
      EXPECT_LE(received, double(P) * kmax * pair);
    } else if(name == "ssar-split") {  // the others' parts of my block, then the other blocks
      EXPECT_LE(received, 2.0 * double(P - 1) * kmax * pair);
      EXPECT_GT(b.received, 0u);
    } else if(name == "dsar-split") {  // as ssar-split; a block never costs more than dense
      EXPECT_LE(received, double(P - 1) * kmax * pair + (P - 1.0) / P * double(n) * value + 4.0 * P);
      EXPECT_GT(b.received, 0u);
    } else if(name == "gtopk") {  // log2 P messages of <= k pairs up the tree, one down;
      // beyond 2 ranks every rank's k values around a ring
      double gather = P > 2 ? double(P - 1) * kmax * value : 0.0;
      EXPECT_LE(received, double(log2P + 1) * kmax * pair + gather);
      EXPECT_LE(double(b.sent), double(log2P + 1) * kmax * pair + gather);
    } else if(name == "oktopk") {  // seed 002: at most 6k (P-1)/P values, plus the P sizes
      EXPECT_LE(received, 6.0 * kmax * (P - 1) / P * value + 8.0 * P);
      EXPECT_GT(b.received, 0u);
    } else {
      ADD_FAILURE() << "no cost model for " << name;
    }
    if(t.rank() == 0)
      std::printf("[ cost     ] %-12s P=%d n=%zu k=%zu: received %llu B, sent %llu B\n", name.c_str(), P, n, k,
                  (unsigned long long)b.received, (unsigned long long)b.sent);
  }
}

// The pipelined dense algorithms cut their messages into segments: with segments of 1, 3 and
// 10 floats (many per chunk, and chunks that do not divide) the sum is still the reference's,
// bitwise, twice in a row (the reused receive buffers), and the ring still receives its
// 2 (P-1)/P n values.
inline void pipelinedAlgorithmsWithTinySegments(Transport& t) {
  for(std::string name : {"ring", "tree"})
    for(size_t segmentBytes : {size_t(4), size_t(12), size_t(40)}) {
      AllreduceSettings settings;
      settings.segmentBytes = segmentBytes;
      auto algo = createAllreduce(name, t, settings);
      for(size_t n : {size_t(1), size_t(7), size_t(1000), size_t(1001)})
        for(unsigned call = 0; call < 2; ++call) {
          SCOPED_TRACE(name + " segments of " + std::to_string(segmentBytes) + " B, n=" + std::to_string(n) +
                       ", call " + std::to_string(call));
          unsigned seed = unsigned(n) * 7 + call;
          std::vector<float> mine(n, 0.f);
          input(t.rank(), t.size(), n, n, Pattern::fillIn, seed).addTo(mine.data());
          std::vector<SparseVector> all = allInputs(t.size(), n, n, Pattern::fillIn, seed);
          algo->takeBytes();
          algo->sumDense(mine);
          ASSERT_EQ(mine, denseSum(all, n));
          if(name == "ring") {
            double received = double(algo->takeBytes().received), P = t.size();
            EXPECT_NEAR(received, 2.0 * (P - 1) / P * double(n) * 4.0, 8.0 * P);
          }
        }
    }
}

// The rows of an embedding table's lookups (createRowAllgather): for rows of several widths, on
// every pattern and on whole rows, the dense reference and topka's sum bit for bit, and the bytes
// of whole rows (one index a row) about half of topka's pairs.
inline void rowAllgatherEqualsTheDenseReferenceAndTopka(Transport& t) {
  auto topka = createAllreduce("topka", t);
  for(size_t width : {size_t(1), size_t(3), size_t(64)})
    for(size_t n : {size_t(7), size_t(1000), size_t(1001)}) {
      auto rows = createRowAllgather(t, width);
      for(Pattern p : kPatterns)
        for(bool integers : {true, false}) {
          size_t k = std::max<size_t>(1, n / 10);
          unsigned seed = unsigned(n * 10 + size_t(p) + width);
          SCOPED_TRACE("width " + std::to_string(width) + " n=" + std::to_string(n) + " pattern " +
                       std::to_string(int(p)) + (integers ? " integers" : " floats"));
          SparseVector mine = input(t.rank(), t.size(), n, k, p, seed, integers);
          AllreduceResult got = rows->reduce(mine, n);
          for(size_t j = 1; j < got.sparse.size(); ++j)
            ASSERT_LT(got.sparse.indices[j - 1], got.sparse.indices[j]);
          if(integers) {
            ASSERT_EQ(got.toDense(n), denseSum(allInputs(t.size(), n, k, p, seed, integers), n));
          }
          ASSERT_EQ(got.toDense(n), topka->reduce(mine, n).toDense(n));
        }
    }
  // whole rows, as lookups leave them: rank r looks up rows r, r + 2, r + 4, ... of 100 rows of 64
  size_t width = 64, n = 100 * width;
  auto rows = createRowAllgather(t, width);
  SparseVector mine;
  for(size_t row = size_t(t.rank()); row < 100; row += 2)
    for(size_t i = row * width; i < (row + 1) * width; ++i) {
      mine.indices.push_back(uint32_t(i));
      mine.values.push_back(float(i % 13) - 6.f + 0.5f);
    }
  rows->takeBytes();
  std::vector<float> got = rows->reduce(mine, n).toDense(n);
  double rowBytes = double(rows->takeBytes().received);
  topka->takeBytes();
  ASSERT_EQ(got, topka->reduce(mine, n).toDense(n));
  double pairBytes = double(topka->takeBytes().received);
  if(t.size() > 1) {
    EXPECT_NEAR(rowBytes / pairBytes, (4.0 * 65) / (8.0 * 64), 0.01);  // an index a row, not a value
  }
}

inline void unknownNameListsTheAlgorithms(Transport& t) {
  try {
    createAllreduce("allgatherish", t);
    FAIL();
  } catch(const Error& e) {
    for(const AllreduceEntry& entry : allreduceAlgorithms())
      EXPECT_NE(std::string(e.what()).find(entry.name), std::string::npos) << e.what();
  }
}

}  // namespace allreduce_cases
}  // namespace marian
