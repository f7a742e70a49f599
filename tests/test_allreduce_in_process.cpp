// The cases of allreduce_cases.h on 2, 3 and 4 ranks that are threads of this process
// (InProcessTransport): every algorithm of the table, no mpirun needed.
#include "allreduce_cases.h"
#include "in_process_ranks.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "comm/allreduce/sparse_ops.h"

namespace marian {
namespace {

using namespace allreduce_cases;

class AllreduceInProcess : public ::testing::TestWithParam<int> {};

TEST_P(AllreduceInProcess, EveryAlgorithmEqualsTheDenseReferenceBitwise) {
  runOnRanks(GetParam(), everyAlgorithmEqualsTheDenseReferenceBitwise);
}
TEST_P(AllreduceInProcess, EveryAlgorithmMatchesItsReferenceWithTargetK) {
  runOnRanks(GetParam(), everyAlgorithmMatchesItsReferenceWithTargetK);
}
TEST_P(AllreduceInProcess, FloatInputsWithinTolerance) { runOnRanks(GetParam(), floatInputsWithinTolerance); }
TEST_P(AllreduceInProcess, DenseInputEveryAlgorithm) { runOnRanks(GetParam(), denseInputEveryAlgorithm); }
TEST_P(AllreduceInProcess, GlobalTopkFollowsItsDefinition) { runOnRanks(GetParam(), globalTopkFollowsItsDefinition); }
TEST_P(AllreduceInProcess, OkTopkSelectsBySumAndReusesItsThreshold) {
  runOnRanks(GetParam(), okTopkSelectsBySumAndReusesItsThreshold);
}
TEST_P(AllreduceInProcess, OkTopkKeepsAboutKWithAFreshThreshold) {
  runOnRanks(GetParam(), okTopkKeepsAboutKWithAFreshThreshold);
}
TEST_P(AllreduceInProcess, BytesReceivedWithinTheCostModels) {
  runOnRanks(GetParam(), bytesReceivedWithinTheCostModels);
}
TEST_P(AllreduceInProcess, PipelinedAlgorithmsWithTinySegments) {
  runOnRanks(GetParam(), pipelinedAlgorithmsWithTinySegments);
}
TEST_P(AllreduceInProcess, RowAllgatherEqualsTheDenseReferenceAndTopka) {
  runOnRanks(GetParam(), rowAllgatherEqualsTheDenseReferenceAndTopka);
}
TEST_P(AllreduceInProcess, UnknownNameListsTheAlgorithms) { runOnRanks(GetParam(), unknownNameListsTheAlgorithms); }

// tests/CMakeLists.txt names one Commbench ctest per algorithm when it is configured: exactly
// the table's algorithms, in its order.
TEST(AllreduceTable, EveryAlgorithmHasACommbenchCtest) {
  std::string names;
  for(const AllreduceEntry& entry : allreduceAlgorithms())
    names += (names.empty() ? "" : " ") + entry.name;
  EXPECT_EQ(names, COMMBENCH_CTEST_ALGORITHMS);
}

// The one-pass merge of the split step adds each index's values in the parts' order, as merging
// them one after another does: the same floats, bit for bit, where the order changes the sum.
TEST(SparseOps, OnePassMergeAddsInThePartsOrder) {
  std::mt19937 rng(3);
  std::vector<SparseVector> parts(4);
  for(SparseVector& p : parts)
    for(uint32_t i = 0; i < 60; ++i)
      if(rng() % 3 == 0) {
        p.indices.push_back(i);
        float magnitude = rng() % 2 ? 1e8f : 1.f;  // 1e8 + 1 - 1e8 depends on the order
        p.values.push_back(rng() % 2 ? magnitude : -magnitude);
      }
  SparseVector sequential;
  std::vector<SparseView> views;
  for(const SparseVector& p : parts) {
    sequential = mergeSparse(sequential, p);
    views.push_back(p.view());
  }
  SparseVector once = mergeSparse(views);
  EXPECT_EQ(once.indices, sequential.indices);
  EXPECT_EQ(once.values, sequential.values);
  EXPECT_GT(once.size(), 30u);
}

// largestK against a full sort by (|value| descending, index ascending): values from a handful
// of magnitudes of either sign, zeros among them, so that most of the k-th entries tie.
TEST(SparseOps, LargestKIsAFullSortsFirstKWithTiesToTheLowerIndex) {
  std::mt19937 rng(5);
  for(size_t size : {size_t(0), size_t(1), size_t(9), size_t(200)})
    for(int trial = 0; trial < 20; ++trial) {
      SparseVector v;
      for(uint32_t i = 0; v.size() < size; ++i)
        if(rng() % 2) {
          v.indices.push_back(i);
          v.values.push_back(float(int(rng() % 7) - 3));  // -3 .. 3
        }
      std::vector<size_t> order(v.size());
      for(size_t j = 0; j < order.size(); ++j)
        order[j] = j;
      std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        float ma = std::fabs(v.values[a]), mb = std::fabs(v.values[b]);
        return ma != mb ? ma > mb : v.indices[a] < v.indices[b];
      });
      for(size_t k : {size_t(0), size_t(1), size / 3, size, size + 1}) {
        SCOPED_TRACE("size " + std::to_string(size) + " k " + std::to_string(k) + " trial " + std::to_string(trial));
        std::vector<size_t> first(order.begin(), order.begin() + long(std::min(k, order.size())));
        std::sort(first.begin(), first.end());
        SparseVector expected;
        for(size_t j : first) {
          expected.indices.push_back(v.indices[j]);
          expected.values.push_back(v.values[j]);
        }
        SparseVector got = largestK(v, k);
        ASSERT_EQ(got.indices, expected.indices);
        ASSERT_EQ(got.values, expected.values);
      }
    }
}

// mergeSparse against dense addition: the union of the indices (an index in either stays, even
// where the sum is 0), each the sum of both values.
TEST(SparseOps, MergeIsTheDenseSumOverTheUnionOfIndices) {
  std::mt19937 rng(8);
  for(int trial = 0; trial < 50; ++trial) {
    SparseVector a, b;
    std::vector<float> dense(64, 0.f);
    std::vector<bool> held(64, false);
    for(SparseVector* v : {&a, &b})
      for(uint32_t i = 0; i < 64; ++i)
        if(rng() % 3 == 0) {
          float x = float(int(rng() % 5) - 2);
          v->indices.push_back(i);
          v->values.push_back(x);
          dense[i] += x;
          held[i] = true;
        }
    SparseVector got = mergeSparse(a, b);
    SparseVector expected;
    for(uint32_t i = 0; i < 64; ++i)
      if(held[i]) {
        expected.indices.push_back(i);
        expected.values.push_back(dense[i]);
      }
    ASSERT_EQ(got.indices, expected.indices) << "trial " << trial;
    ASSERT_EQ(got.values, expected.values) << "trial " << trial;
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, AllreduceInProcess, ::testing::Values(2, 3, 4),
                         [](const ::testing::TestParamInfo<int>& info) { return "P" + std::to_string(info.param); });

}  // namespace
}  // namespace marian
