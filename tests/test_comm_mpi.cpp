// The parameter server's pieces under real MPI (ctest runs this with mpirun -np 2, 3 and 4):
// shard coverage, exact dense updates, and conservation with gradient and delta dropping; the
// transport's messages past MPI's counts and its heartbeats.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <random>
#include <thread>

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

// A message past MPI's int counts travels as one element of a datatype of blocks and the rest:
// with the limit lowered to 1,000 bytes, messages of 0 to 3,000 bytes around the ring of ranks
// arrive whole, received with the size probed and into a receive posted with it.
TEST(MpiTransport, MessagesPastTheCountLimitArriveWhole) {
  MpiTransport& t = mpi();
  size_t limit = MpiTransport::countLimit();
  MpiTransport::setCountLimit(1000);
  int next = (t.rank() + 1) % t.size(), previous = (t.rank() + t.size() - 1) % t.size();
  auto bytesOf = [](int rank, size_t size) {
    std::vector<char> b(size);
    for(size_t i = 0; i < size; ++i)
      b[i] = char((i * 31 + size_t(rank) * 7 + size) & 0xff);
    return b;
  };
  for(size_t size : {0, 1, 999, 1000, 1001, 2000, 2999, 3000}) {
    SCOPED_TRACE(std::to_string(size) + " bytes");
    std::vector<char> mine = bytesOf(t.rank(), size), into(size);
    Transport::PendingSend sent = t.startSend(Channel::collective, next, 71, mine);
    Transport::Message probed = t.recv(Channel::collective, previous, 71, 60, "a message of the test");
    t.finishSend(sent, 60, "a message of the test");
    EXPECT_EQ(probed.bytes, bytesOf(previous, size));
    Transport::PendingRecv posted = t.startRecv(Channel::collective, previous, 72, into.data(), size);
    sent = t.startSend(Channel::collective, next, 72, mine);
    t.finishRecv(posted, 60, "a message of the test");
    t.finishSend(sent, 60, "a message of the test");
    EXPECT_EQ(into, bytesOf(previous, size));
  }
  MpiTransport::setCountLimit(limit);
}

// The heartbeats carry every rank's activity and its round trips to rank 0 (the slow-rank report).
TEST(Heartbeats, CarryEveryRanksActivityAndRoundTrips) {
  MpiTransport& t = mpi();
  int p = t.size();
  for(int s = 0; s <= t.rank(); ++s)
    t.noteStep(0.5, 0.25 * (t.rank() + 1));
  auto pingsStarted = std::chrono::steady_clock::now();
  t.setPeerTimeout(2);  // starts the heartbeats: a ping to every peer every 0.5 s
  auto complete = [&](const PeerView& v) {
    if(int(v.activity.size()) != p)
      return false;
    for(int r = 0; r < p; ++r) {
      if(v.activity[size_t(r)].steps != uint64_t(r + 1))
        return false;
      for(int q = 0; q < p; ++q)  // rank 0, which judges, hears every rank's round trips
        if(q != r && (r == t.rank() || t.rank() == 0) && v.roundTripMs[size_t(r)][size_t(q)] < 0)
          return false;
    }
    return true;
  };
  PeerView v;
  for(int tries = 0; tries < 100 && !complete(v = t.peerView()); ++tries)  // rank 1's row comes with its next ping
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(complete(v)) << "rank " << t.rank() << " did not hear every rank's activity (and round trips) in 10 s";
  // no round trip measured here can be longer than the pings have been going: in milliseconds,
  // at most this (a bound of cause, not of speed: a busy machine only makes both longer)
  double sincePingsMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - pingsStarted).count();
  for(int r = 0; r < p; ++r) {
    EXPECT_DOUBLE_EQ(v.activity[size_t(r)].computeSeconds, 0.5 * (r + 1));
    EXPECT_DOUBLE_EQ(v.activity[size_t(r)].waitSeconds, 0.25 * (r + 1) * (r + 1));
    if(r != t.rank()) {
      EXPECT_GT(v.roundTripMs[size_t(t.rank())][size_t(r)], 0.f);
      EXPECT_LE(v.roundTripMs[size_t(t.rank())][size_t(r)], sincePingsMs);
      EXPECT_GT(v.fastestRoundTripMs[size_t(r)], 0.f);
    }
  }
  t.barrier(30, "the end of the heartbeat test");
}

}  // namespace
}  // namespace marian
