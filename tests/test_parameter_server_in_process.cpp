// The parameter server's cases (parameter_server_cases.h) on 1, 2, 3 and 4 ranks that are threads
// of this process (InProcessTransport): the protocol tested without mpirun.
#include "in_process_ranks.h"
#include "parameter_server_cases.h"

namespace marian {
namespace {

using namespace parameter_server_cases;

class ParameterServerInProcess : public ::testing::TestWithParam<int> {};

TEST_P(ParameterServerInProcess, DenseSgdUpdatesAreExactWhateverTheOrder) {
  runOnRanks(GetParam(), denseSgdUpdatesAreExactWhateverTheOrder);
}
TEST_P(ParameterServerInProcess, DroppingConservesGradientsAndClientsMatchTheServersRecord) {
  runOnRanks(GetParam(), droppingConservesGradients);
}
TEST_P(ParameterServerInProcess, DroppingOnAnotherDeviceConservesToo) {
  runOnRanks(GetParam(), droppingOnAnotherDeviceConservesToo);
}
TEST_P(ParameterServerInProcess, LocalGradientsGiveTheUnsentPartAndResyncEveryThirdExchange) {
  runOnRanks(GetParam(), localGradientsGiveTheUnsentPartAndResyncEveryThirdExchange);
}
TEST_P(ParameterServerInProcess, ShardAndClientStateRoundTrips) { runOnRanks(GetParam(), shardAndClientStateRoundTrips); }

INSTANTIATE_TEST_SUITE_P(Ranks, ParameterServerInProcess, ::testing::Values(1, 2, 3, 4));

}  // namespace
}  // namespace marian
