// The cases of gradient_allreducer_cases.h on 2, 3 and 4 ranks that are threads of this process
// (InProcessTransport); the cases computed by hand for 2 ranks on 2.
#include "gradient_allreducer_cases.h"
#include "in_process_ranks.h"
#include "onebit_cases.h"
#include "outer_exchange_cases.h"
#include "outer_rounds_cases.h"
#include "powersgd_cases.h"

namespace marian {
namespace {

using namespace gradient_allreducer_cases;

class GradientAllreducerInProcess : public ::testing::TestWithParam<int> {};

TEST_P(GradientAllreducerInProcess, OneShardEqualsTheReference) { runOnRanks(GetParam(), oneShardEqualsTheReference); }
TEST_P(GradientAllreducerInProcess, TwoShardsGiveEveryRankTheRightSum) { runOnRanks(GetParam(), twoShardsGiveEveryRankTheRightSum); }
TEST_P(GradientAllreducerInProcess, BucketsGiveTheUnbucketedDenseSumBitwise) { runOnRanks(GetParam(), bucketsGiveTheUnbucketedDenseSumBitwise); }
TEST_P(GradientAllreducerInProcess, EachBucketSelectsItsOwnTopkAndLosesNothing) { runOnRanks(GetParam(), eachBucketSelectsItsOwnTopkAndLosesNothing); }
TEST_P(GradientAllreducerInProcess, LocalGradientsApplyEveryOwnGradientOnce) { runOnRanks(GetParam(), localGradientsApplyEveryOwnGradientOnce); }
TEST_P(GradientAllreducerInProcess, MomentumCorrectionVelocityIsSavedPerRank) { runOnRanks(GetParam(), momentumCorrectionVelocityIsSavedPerRank); }

TEST_P(GradientAllreducerInProcess, OuterRoundsMatchDouble) { runOnRanks(GetParam(), outer_rounds_cases::roundsMatchDouble); }
TEST_P(GradientAllreducerInProcess, StreamedOuterRoundsMatchDouble) {
  runOnRanks(GetParam(), outer_rounds_cases::streamedRoundsMatchDouble);
}
TEST_P(GradientAllreducerInProcess, OuterQuantizedMeanMatchesDouble) { runOnRanks(GetParam(), outer_exchange_cases::quantizedMeanMatchesDouble); }
TEST(QuantizedAllreduce, TwoBitsByHand) { outer_exchange_cases::twoBitsByHand(); }
TEST(QuantizedAllreduce, TwoBitsErrorIsLloydMaxs) { outer_exchange_cases::twoBitsErrorIsLloydMaxs(); }
TEST_P(GradientAllreducerInProcess, OuterOneBitMeanMatchesDouble) { runOnRanks(GetParam(), outer_exchange_cases::oneBitOuterMeanMatchesDouble); }
TEST_P(GradientAllreducerInProcess, OuterSparseMeanMatchesDouble) { runOnRanks(GetParam(), outer_exchange_cases::sparseMeanMatchesDouble); }
TEST_P(GradientAllreducerInProcess, OuterChunkTopkMeanMatchesDouble) { runOnRanks(GetParam(), outer_exchange_cases::chunkTopkMeanMatchesDouble); }
TEST(ChunkTopkMean, MessagesDecodeAndRefuseCorruption) { outer_exchange_cases::chunkTopkMessagesDecodeAndRefuseCorruption(); }
TEST_P(GradientAllreducerInProcess, OuterExchangeCheckpointsContinueExactly) { runOnRanks(GetParam(), outer_exchange_cases::checkpointsContinueExactly); }
TEST(GradientAllreducerInProcessTwoRanks, OuterRoundsByHand) { runOnRanks(2, outer_rounds_cases::twoRoundsByHand); }
TEST(GradientAllreducerInProcessTwoRanks, LocalGradientsAddTheOwnGradientByHand) { runOnRanks(2, localGradientsAddTheOwnGradientByHand); }
TEST(GradientAllreducerInProcessTwoRanks, LocalClippingScalesTheRanksGradientByHand) { runOnRanks(2, localClippingScalesTheRanksGradientByHand); }
TEST(GradientAllreducerInProcessTwoRanks, MomentumCorrectionByHand) { runOnRanks(2, momentumCorrectionByHand); }
TEST(GradientAllreducerInProcessTwoRanks, OneBitCompressedMeanByHand) { runOnRanks(2, onebit_cases::compressedMeanByHand); }
TEST(GradientAllreducerInProcessTwoRanks, OneBitCompressedMeanBySegmentsByHand) {
  runOnRanks(2, onebit_cases::compressedMeanBySegmentsByHand);
}
TEST(GradientAllreducerInProcessTwoRanks, OneBitCompressedMeanInUnitsByHand) {
  runOnRanks(2, onebit_cases::compressedMeanInUnitsByHand);
}
TEST(GradientAllreducerInProcessTwoRanks, OneBitCompressedMeanWithMeanAbsScaleByHand) {
  runOnRanks(2, onebit_cases::compressedMeanWithMeanAbsScaleByHand);
}
TEST(OneBitAllreduce, MeanAbsScaleKeepsTheErrorBelowTheValues) { onebit_cases::meanAbsScaleKeepsTheErrorBelowTheValues(); }
TEST(Segments, StartsCutParametersIntoBlocks) { onebit_cases::segmentStartsCutParametersIntoBlocks(); }
TEST_P(GradientAllreducerInProcess, OneBitAdamGivesTheAveragedMomentum) {
  runOnRanks(GetParam(), onebit_cases::allreducerGivesTheAveragedMomentum);
}
TEST_P(GradientAllreducerInProcess, OneBitAdamSendsTheUpdateDirection) {
  runOnRanks(GetParam(), onebit_cases::allreducerSendsTheUpdateDirection);
}
TEST_P(GradientAllreducerInProcess, ZeroOneAdamSumsInOneBitBetweenVarianceSteps) {
  runOnRanks(GetParam(), onebit_cases::zeroOneAdamSumsInOneBitBetweenVarianceSteps);
}
TEST_P(GradientAllreducerInProcess, OneBitAdamCheckpointContinuesExactly) {
  runOnRanks(GetParam(), onebit_cases::checkpointContinuesExactly);
}
TEST_P(GradientAllreducerInProcess, ZeroOneErrorsOfGradientsAreOwedAlikeOnAnotherRankCount) {
  runOnRanks(GetParam(), onebit_cases::zeroOneErrorsOfGradientsAreOwedAlikeOnAnotherRankCount);
}
TEST(GradientAllreducerInProcessTwoRanks, ZeroOneCheckpointOfAnotherFreezeStartsItsErrorsAtZero) {
  testing::internal::CaptureStderr();  // the ranks' threads write to this process's stderr
  runOnRanks(2, onebit_cases::zeroOneCheckpointOfAnotherFreezeStartsItsErrorsAtZero);
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("The checkpoint's residuals are errors of the gradients, update 5 sends the momentum in 1 bit "
                     "(another --adam-freeze-variance-after?): they start at zero"),
            std::string::npos)
      << log;
}
TEST_P(GradientAllreducerInProcess, PowerSgdFactorsByHand) { runOnRanks(GetParam(), powersgd_cases::factorsByHand); }
TEST_P(GradientAllreducerInProcess, PowerSgdLosesNothing) { runOnRanks(GetParam(), powersgd_cases::nothingIsLost); }
TEST_P(GradientAllreducerInProcess, PowerSgdCheckpointContinuesExactly) {
  runOnRanks(GetParam(), powersgd_cases::checkpointContinuesExactly);
}
TEST_P(GradientAllreducerInProcess, PowerSgdQsOfOtherBucketsStartAtRandom) {
  runOnRanks(GetParam(), powersgd_cases::qsOfOtherBucketsStartAtRandom);
}

INSTANTIATE_TEST_SUITE_P(Ranks, GradientAllreducerInProcess, ::testing::Values(2, 3, 4),
                         [](const ::testing::TestParamInfo<int>& info) { return "P" + std::to_string(info.param); });

}  // namespace
}  // namespace marian
