// The parameter server's pieces under real MPI (ctest runs this with mpirun -np 2, 3 and 4):
// shard coverage, exact dense updates, and conservation with gradient and delta dropping.
#include <gtest/gtest.h>
#include <mpi.h>

#include <random>

#include "comm/mpi_transport.h"
#include "parameter_server_cases.h"

namespace marian {
namespace {

MpiTransport& mpi() { return *MpiTransport::instance(); }

TEST(ShardLayout, ShardsCoverTheVectorExactlyOnce) {
  for(size_t total : {size_t(0), size_t(1), size_t(7), size_t(1000), size_t(1001)})
    for(int nodes : {1, 2, 3, 4, 7}) {
      ShardLayout layout{total, nodes};
      std::vector<int> covered(total, 0);
      size_t expectedOffset = 0;
      for(int n = 0; n < nodes; ++n) {
        auto [offset, size] = layout.node(n);
        EXPECT_EQ(offset, expectedOffset);
        EXPECT_LE(size, total / size_t(nodes) + 1);  // uniform to within one value
        for(size_t i = offset; i < offset + size; ++i)
          covered[i]++;
        expectedOffset = offset + size;
      }
      EXPECT_EQ(expectedOffset, total);
      for(int c : covered)
        EXPECT_EQ(c, 1);
    }
}

TEST(ParameterServer, DenseSgdUpdatesAreExactWhateverTheOrder) {
  parameter_server_cases::denseSgdUpdatesAreExactWhateverTheOrder(mpi());
}
TEST(ParameterServer, DroppingConservesGradientsAndClientsMatchTheServersRecord) {
  parameter_server_cases::droppingConservesGradients(mpi());
}
TEST(ParameterServer, DroppingOnAnotherDeviceConservesToo) {
  parameter_server_cases::droppingOnAnotherDeviceConservesToo(mpi());
}
TEST(ParameterServer, ShardAndClientStateRoundTrips) { parameter_server_cases::shardAndClientStateRoundTrips(mpi()); }

}  // namespace
}  // namespace marian
