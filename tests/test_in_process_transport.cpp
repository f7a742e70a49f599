// InProcessTransport keeps MpiTransport's rules: messages matched by (source, tag) with -1 for
// any, in arrival order, never across channels; exchange; pending sends; sends that complete only
// when taken; the collectives; bounded waits that stop every rank with an error naming the peer
// and what was awaited; and the payload bytes counted per channel.
#include <gtest/gtest.h>

#include <string>

#include "comm/in_process_transport.h"
#include "common/error.h"
#include "in_process_ranks.h"

namespace marian {
namespace {

std::vector<char> bytesOf(const std::string& s) { return std::vector<char>(s.begin(), s.end()); }
std::string textOf(const std::vector<char>& b) { return std::string(b.begin(), b.end()); }

TEST(InProcessTransport, MatchesBySourceAndTagWithWildcardsInArrivalOrder) {
  runOnRanks(3, [](Transport& t) {
    const double kWait = 10;
    if(t.rank() == 1) {  // pending: a send completes only when rank 0 takes it
      std::vector<char> a1 = bytesOf("a1"), a2 = bytesOf("a2"), b = bytesOf("b"), other = bytesOf("other channel");
      auto s1 = t.startSend(Channel::toServer, 0, 5, a1);
      auto s2 = t.startSend(Channel::toServer, 0, 5, a2);
      auto s3 = t.startSend(Channel::toServer, 0, 7, b);
      auto s4 = t.startSend(Channel::toClient, 0, 5, other);
      for(auto* s : {&s1, &s2, &s3, &s4})
        t.finishSend(*s, kWait, "a test message");
    } else if(t.rank() == 2) {
      t.send(Channel::toServer, 0, 5, bytesOf("c"), kWait);
    } else {
      Transport::Message m = t.recv(Channel::toServer, 2, -1, kWait, "rank 2's message");
      EXPECT_EQ(m.source, 2);
      EXPECT_EQ(m.tag, 5);
      EXPECT_EQ(textOf(m.bytes), "c");
      m = t.recv(Channel::toServer, -1, 7, kWait, "tag 7");  // passes the earlier tag-5 messages
      EXPECT_EQ(m.source, 1);
      EXPECT_EQ(textOf(m.bytes), "b");
      EXPECT_EQ(textOf(t.recv(Channel::toServer, -1, -1, kWait, "anything").bytes), "a1");  // in order
      EXPECT_EQ(textOf(t.recv(Channel::toServer, 1, 5, kWait, "a2").bytes), "a2");
      m = t.recv(Channel::toClient, -1, -1, kWait, "the other channel's message");
      EXPECT_EQ(textOf(m.bytes), "other channel");
    }
  });
}

TEST(InProcessTransport, ExchangeAroundTheRing) {
  for(int P : {2, 3, 4})
    runOnRanks(P, [](Transport& t) {
      int size = t.size(), r = t.rank();
      for(int step = 0; step < 3; ++step) {  // every rank sends first: exchange must not deadlock
        int next = (r + 1) % size, previous = (r + size - 1) % size;
        auto m = t.exchange(Channel::collective, next, previous, step,
                            bytesOf(std::to_string(r) + "/" + std::to_string(step)), 10, "a ring step");
        EXPECT_EQ(m.source, previous);
        EXPECT_EQ(textOf(m.bytes), std::to_string(previous) + "/" + std::to_string(step));
      }
    });
}

TEST(InProcessTransport, CollectivesSumBroadcastAndWait) {
  runOnRanks(4, [](Transport& t) {
    std::vector<float> v = {float(t.rank()), float(10 * t.rank()), 1.f};
    t.allreduceSum(v.data(), v.size(), 10, "a test sum");
    EXPECT_EQ(v, (std::vector<float>{6.f, 60.f, 4.f}));
    EXPECT_EQ(t.broadcastFromRoot(100 + uint64_t(t.rank()), 10, "a seed"), 100u);
    t.barrier(10, "the end");
  });
}

TEST(InProcessTransport, PeerViewHasEveryRanksActivity) {
  runOnRanks(3, [](Transport& t) {
    for(int s = 0; s <= t.rank(); ++s)
      t.noteStep(0.5 * (t.rank() + 1), 0.25);
    t.barrier(10, "the steps");
    PeerView v = t.peerView();
    ASSERT_EQ(v.activity.size(), 3u);
    for(size_t r = 0; r < 3; ++r) {
      EXPECT_EQ(v.activity[r].steps, r + 1);
      EXPECT_DOUBLE_EQ(v.activity[r].computeSeconds, 0.5 * double(r + 1) * double(r + 1));
      EXPECT_DOUBLE_EQ(v.activity[r].waitSeconds, 0.25 * double(r + 1));
    }
    EXPECT_TRUE(v.roundTripMs.empty());  // no link to measure
    t.barrier(10, "the end");
  });
}

TEST(InProcessTransport, BytesCountedPerChannel) {
  runOnRanks(2, [](Transport& t) {
    if(t.rank() == 0) {
      t.send(Channel::toServer, 1, 0, std::vector<char>(10), 10);
      std::vector<char> pending(30);
      auto s = t.startSend(Channel::toClient, 1, 0, pending);
      t.finishSend(s, 10, "the pending message");
    } else {
      t.recv(Channel::toServer, 0, 0, 10, "10 bytes");
      t.recv(Channel::toClient, 0, 0, 10, "30 bytes");
    }
    t.exchange(Channel::collective, 1 - t.rank(), 1 - t.rank(), 0, std::vector<char>(t.rank() == 0 ? 20 : 5), 10,
               "the exchange");
    float v = 1.f;
    t.allreduceSum(&v, 1, 10, "a sum");  // MPI's own messages: not counted by any transport
    bool zero = t.rank() == 0;
    EXPECT_EQ(t.bytes(Channel::toServer).sent, zero ? 10u : 0u);
    EXPECT_EQ(t.bytes(Channel::toServer).received, zero ? 0u : 10u);
    EXPECT_EQ(t.bytes(Channel::toClient).sent, zero ? 30u : 0u);
    EXPECT_EQ(t.bytes(Channel::toClient).received, zero ? 0u : 30u);
    EXPECT_EQ(t.bytes(Channel::collective).sent, zero ? 20u : 5u);
    EXPECT_EQ(t.bytes(Channel::collective).received, zero ? 5u : 20u);
  });
}

// How long the ranks that are not meant to time out wait: far longer than the 0.05 s of the one
// that is, but bounded, so that a broken transport fails these tests instead of hanging them.
constexpr double kLonger = 10;

// Runs body on P ranks and returns the error that stopped them ("" if none).
std::string stoppedBecause(int P, const std::function<void(Transport&)>& body) {
  InProcessNetwork network(P);
  try {
    network.run(body);
  } catch(const Error& e) {
    return e.what();
  }
  return "";
}

TEST(InProcessTransport, ARecvThatTimesOutNamesThePeerAndWhatAndStopsEveryRank) {
  std::string why = stoppedBecause(2, [](Transport& t) {
    if(t.rank() == 0)
      t.recv(Channel::toClient, 1, 3, 0.05, "the reply to push 3");
    else
      t.recv(Channel::toServer, -1, -1, kLonger, "a push");  // until the stop
  });
  EXPECT_EQ(why, "rank 0: no answer for the reply to push 3 from rank 1 within 0.05 s; stopping the job");
  why = stoppedBecause(2, [](Transport& t) {
    if(t.rank() == 1)
      t.recv(Channel::toServer, -1, -1, 0.05, "a push");
    else
      t.barrier(kLonger, "the end");
  });
  EXPECT_EQ(why, "rank 1: no answer for a push from rank any within 0.05 s; stopping the job");
}

TEST(InProcessTransport, ASendNobodyTakesTimesOut) {
  std::string why = stoppedBecause(2, [](Transport& t) {
    if(t.rank() == 0)
      t.send(Channel::toServer, 1, 0, bytesOf("unwanted"), 0.05);
    else
      t.recv(Channel::toServer, 0, 1, kLonger, "another tag");  // the message waits, untaken
  });
  EXPECT_EQ(why, "rank 0: rank 1 took no delivery of a message within 0.05 s; stopping the job");
  why = stoppedBecause(2, [](Transport& t) {
    if(t.rank() == 0) {
      auto bytes = bytesOf("unwanted");
      auto s = t.startSend(Channel::collective, 1, 4, bytes);
      t.finishSend(s, 0.05, "tree step 4");
    } else {
      t.barrier(kLonger, "the end");
    }
  });
  EXPECT_EQ(why, "rank 0: rank 1 took no delivery of tree step 4 within 0.05 s; stopping the job");
}

TEST(InProcessTransport, ACollectiveNotEveryRankJoinsTimesOut) {
  std::string why = stoppedBecause(3, [](Transport& t) {
    float v = 1.f;
    if(t.rank() == 2)
      t.allreduceSum(&v, 1, 0.05, "the gradient sum");
    else if(t.rank() == 1)
      t.allreduceSum(&v, 1, kLonger, "the gradient sum");
    else
      t.barrier(kLonger, "something else");  // control, not the collective channel's sum
  });
  EXPECT_EQ(why, "rank 2: not every rank took part in the gradient sum within 0.05 s; stopping the job");
}

// The sum is made once, in rank order: every rank gets the same floats, those of adding rank 0's,
// 1's, 2's and 3's values in turn (1e8 + 1 - 1e8 + 1 is 1 in that order, not 2), on a vector long
// enough to be summed in vector registers; sums of different lengths are an error on every rank.
TEST(InProcessTransport, SumsInRankOrderOnceForEveryRank) {
  const size_t n = 1001;
  auto part = [](int rank, size_t i) {
    const float a[4] = {1e8f, 1.f, -1e8f, 1.f};
    return a[rank] * float(1 + i % 3);
  };
  std::vector<std::vector<float>> got(4);
  runOnRanks(4, [&](Transport& t) {
    std::vector<float> v(n);
    for(size_t i = 0; i < n; ++i)
      v[i] = part(t.rank(), i);
    t.allreduceSum(v.data(), n, 10, "a test sum");
    got[size_t(t.rank())] = v;
  });
  for(size_t i = 0; i < n; ++i) {
    float expect = part(0, i);
    for(int r = 1; r < 4; ++r)
      expect += part(r, i);
    ASSERT_EQ(got[0][i], expect) << i;
  }
  EXPECT_EQ(got[0][0], 1.f);
  for(int r = 1; r < 4; ++r)
    EXPECT_EQ(got[size_t(r)], got[0]);
  std::string why = stoppedBecause(3, [](Transport& t) {
    std::vector<float> v(t.rank() == 1 ? 5 : 4, 1.f);
    try {
      t.allreduceSum(v.data(), v.size(), kLonger, "the gradient sum");
    } catch(const Error& e) {  // every rank: the sum's error, or the stop it made ("rank N: the job was stopped")
      std::string m = e.what();
      EXPECT_NE(m.find("the gradient sum: rank 1 summed 5 values, rank 0 4"), std::string::npos) << m;
      throw;
    }
  });
  EXPECT_EQ(why, "the gradient sum: rank 1 summed 5 values, rank 0 4");
}

TEST(InProcessTransport, ARankThatFailsStopsTheOthers) {
  std::string why = stoppedBecause(3, [](Transport& t) {
    if(t.rank() == 1)
      ABORT("rank 1 found a bad index");
    t.recv(Channel::collective, 1, 0, kLonger, "rank 1's step");
  });
  EXPECT_EQ(why, "rank 1 found a bad index");
}

TEST(InProcessTransport, AbortStopsEveryRankWithItsReason) {
  std::string why = stoppedBecause(2, [](Transport& t) {
    if(t.rank() == 0)
      t.abort("rank 0 gave up");
    try {
      t.barrier(kLonger, "the end");
    } catch(const Error& e) {  // the others' waits end with the reason
      EXPECT_EQ(std::string(e.what()), "rank 1: the job was stopped: rank 0 gave up");
      throw;
    }
  });
  EXPECT_EQ(why, "rank 0 gave up");
}

TEST(InProcessTransport, PeersOutsideTheNetworkAreErrors) {
  std::string why = stoppedBecause(2, [](Transport& t) { t.send(Channel::toServer, 2, 0, bytesOf("x")); });
  EXPECT_NE(why.find("send to rank 2 of 2"), std::string::npos) << why;
}

}  // namespace
}  // namespace marian
