// The cases of allreduce_cases.h on 2, 3 and 4 ranks that are threads of this process
// (InProcessTransport): every algorithm of the table, no mpirun needed.
#include "allreduce_cases.h"
#include "in_process_ranks.h"

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

INSTANTIATE_TEST_SUITE_P(Ranks, AllreduceInProcess, ::testing::Values(2, 3, 4),
                         [](const ::testing::TestParamInfo<int>& info) { return "P" + std::to_string(info.param); });

}  // namespace
}  // namespace marian
