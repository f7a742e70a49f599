// The cases of allreduce_cases.h under real MPI (ctest runs this with mpirun -np 2, 3 and 4).
#include "allreduce_cases.h"
#include "comm/mpi_transport.h"

namespace marian {
namespace {

using namespace allreduce_cases;

Transport& mpi() { return *MpiTransport::instance(); }

TEST(Allreduce, EveryAlgorithmEqualsTheDenseReferenceBitwise) { everyAlgorithmEqualsTheDenseReferenceBitwise(mpi()); }
TEST(Allreduce, EveryAlgorithmMatchesItsReferenceWithTargetK) {
  everyAlgorithmMatchesItsReferenceWithTargetK(mpi());
}
TEST(Allreduce, FloatInputsWithinTolerance) { floatInputsWithinTolerance(mpi()); }
TEST(Allreduce, DenseInputEveryAlgorithm) { denseInputEveryAlgorithm(mpi()); }
TEST(Allreduce, GlobalTopkFollowsItsDefinition) { globalTopkFollowsItsDefinition(mpi()); }
TEST(Allreduce, OkTopkSelectsBySumAndReusesItsThreshold) { okTopkSelectsBySumAndReusesItsThreshold(mpi()); }
TEST(Allreduce, OkTopkKeepsAboutKWithAFreshThreshold) { okTopkKeepsAboutKWithAFreshThreshold(mpi()); }
TEST(Allreduce, BytesReceivedWithinTheCostModels) { bytesReceivedWithinTheCostModels(mpi()); }
TEST(Allreduce, PipelinedAlgorithmsWithTinySegments) { pipelinedAlgorithmsWithTinySegments(mpi()); }
TEST(Allreduce, RowAllgatherEqualsTheDenseReferenceAndTopka) { rowAllgatherEqualsTheDenseReferenceAndTopka(mpi()); }
TEST(Allreduce, UnknownNameListsTheAlgorithms) { unknownNameListsTheAlgorithms(mpi()); }

}  // namespace
}  // namespace marian
