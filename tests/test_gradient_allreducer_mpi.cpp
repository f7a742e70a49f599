// The cases of gradient_allreducer_cases.h under real MPI (ctest: mpirun -np 2, 3, 4).
#include "comm/mpi_transport.h"
#include "gradient_allreducer_cases.h"
#include "onebit_cases.h"
#include "outer_exchange_cases.h"
#include "outer_rounds_cases.h"
#include "powersgd_cases.h"

namespace marian {
namespace {

using namespace gradient_allreducer_cases;

Transport& mpi() { return *MpiTransport::instance(); }

TEST(GradientAllreducer, OneShardEqualsTheReference) { oneShardEqualsTheReference(mpi()); }
TEST(GradientAllreducer, TwoShardsGiveEveryRankTheRightSum) { twoShardsGiveEveryRankTheRightSum(mpi()); }
TEST(GradientAllreducer, BucketsGiveTheUnbucketedDenseSumBitwise) { bucketsGiveTheUnbucketedDenseSumBitwise(mpi()); }
TEST(GradientAllreducer, EachBucketSelectsItsOwnTopkAndLosesNothing) { eachBucketSelectsItsOwnTopkAndLosesNothing(mpi()); }
TEST(GradientAllreducer, LocalGradientsAddTheOwnGradientByHand) { localGradientsAddTheOwnGradientByHand(mpi()); }
TEST(GradientAllreducer, LocalClippingScalesTheRanksGradientByHand) { localClippingScalesTheRanksGradientByHand(mpi()); }
TEST(GradientAllreducer, LocalGradientsApplyEveryOwnGradientOnce) { localGradientsApplyEveryOwnGradientOnce(mpi()); }
TEST(GradientAllreducer, MomentumCorrectionByHand) { momentumCorrectionByHand(mpi()); }
TEST(GradientAllreducer, MomentumCorrectionVelocityIsSavedPerRank) { momentumCorrectionVelocityIsSavedPerRank(mpi()); }
TEST(GradientAllreducer, OneBitCompressedMeanByHand) { onebit_cases::compressedMeanByHand(mpi()); }
TEST(GradientAllreducer, OneBitCompressedMeanBySegmentsByHand) { onebit_cases::compressedMeanBySegmentsByHand(mpi()); }
TEST(GradientAllreducer, OneBitCompressedMeanInUnitsByHand) { onebit_cases::compressedMeanInUnitsByHand(mpi()); }
TEST(GradientAllreducer, OneBitCompressedMeanWithMeanAbsScaleByHand) {
  onebit_cases::compressedMeanWithMeanAbsScaleByHand(mpi());
}
TEST(GradientAllreducer, OneBitAdamSendsTheUpdateDirection) { onebit_cases::allreducerSendsTheUpdateDirection(mpi()); }
TEST(GradientAllreducer, OneBitAdamGivesTheAveragedMomentum) { onebit_cases::allreducerGivesTheAveragedMomentum(mpi()); }
TEST(GradientAllreducer, ZeroOneAdamSumsInOneBitBetweenVarianceSteps) {
  onebit_cases::zeroOneAdamSumsInOneBitBetweenVarianceSteps(mpi());
}
TEST(GradientAllreducer, OneBitAdamCheckpointContinuesExactly) { onebit_cases::checkpointContinuesExactly(mpi()); }
TEST(GradientAllreducer, ZeroOneErrorsOfGradientsAreOwedAlikeOnAnotherRankCount) {
  onebit_cases::zeroOneErrorsOfGradientsAreOwedAlikeOnAnotherRankCount(mpi());
}
TEST(GradientAllreducer, OuterRoundsMatchDouble) { outer_rounds_cases::roundsMatchDouble(mpi()); }
TEST(GradientAllreducer, StreamedOuterRoundsMatchDouble) { outer_rounds_cases::streamedRoundsMatchDouble(mpi()); }
TEST(GradientAllreducer, OuterQuantizedMeanMatchesDouble) { outer_exchange_cases::quantizedMeanMatchesDouble(mpi()); }
TEST(GradientAllreducer, OuterOneBitMeanMatchesDouble) { outer_exchange_cases::oneBitOuterMeanMatchesDouble(mpi()); }
TEST(GradientAllreducer, OuterSparseMeanMatchesDouble) { outer_exchange_cases::sparseMeanMatchesDouble(mpi()); }
TEST(GradientAllreducer, OuterChunkTopkMeanMatchesDouble) { outer_exchange_cases::chunkTopkMeanMatchesDouble(mpi()); }
TEST(GradientAllreducer, OuterExchangeCheckpointsContinueExactly) { outer_exchange_cases::checkpointsContinueExactly(mpi()); }
TEST(GradientAllreducer, OuterRoundsByHand) {
  if(mpi().size() != 2)
    GTEST_SKIP() << "the rounds by hand are of 2 ranks";
  outer_rounds_cases::twoRoundsByHand(mpi());
}
TEST(GradientAllreducer, PowerSgdFactorsByHand) { powersgd_cases::factorsByHand(mpi()); }
TEST(GradientAllreducer, PowerSgdLosesNothing) { powersgd_cases::nothingIsLost(mpi()); }
TEST(GradientAllreducer, PowerSgdCheckpointContinuesExactly) { powersgd_cases::checkpointContinuesExactly(mpi()); }
TEST(GradientAllreducer, PowerSgdQsOfOtherBucketsStartAtRandom) { powersgd_cases::qsOfOtherBucketsStartAtRandom(mpi()); }

}  // namespace
}  // namespace marian
