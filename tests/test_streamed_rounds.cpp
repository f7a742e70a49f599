// The parts of streamed local steps that need no ranks: FragmentSchedule (every value sent once
// a round, the fragments staggered over it, merged `delay` updates later, the options it
// refuses) and SerialWorker (jobs in their order beside the caller, errors back to the waiter).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "common/error.h"
#include "common/serial_worker.h"
#include "data_files.h"
#include "training/exchange/fragment_schedule.h"

namespace marian {
namespace {

TEST(FragmentSchedule, EveryValueSentOnceARoundWithStaggeredOffsets) {
  for(uint64_t H = 1; H <= 12; ++H)
    for(uint64_t F = 1; F <= H; ++F)
      for(uint64_t tau = 0; tau < H; ++tau) {
        SCOPED_TRACE("H " + std::to_string(H) + " F " + std::to_string(F) + " delay " + std::to_string(tau));
        FragmentSchedule s(H, F, tau);
        const size_t n = 1000;
        size_t covered = 0;
        for(size_t p = 0; p < F; ++p) {
          ASSERT_EQ(s.fragment(p, n).offset, covered) << "fragments consecutive";
          covered = s.fragment(p, n).end();
          // offsets spread over the round, the last one at its end
          ASSERT_GE(s.offset(p), 1u);
          ASSERT_LE(s.offset(p), H);
          if(p > 0) {
            ASSERT_GT(s.offset(p), s.offset(p - 1)) << "two fragments sent after the same update";
          }
          // in every H consecutive updates after the first send: exactly one send, one merge
          for(uint64_t from = s.offset(p); from < s.offset(p) + 3 * H; ++from) {
            int sends = 0, merges = 0;
            for(uint64_t c = from; c < from + H; ++c) {
              sends += s.sends(p, c);
              merges += s.merges(p, c);
            }
            ASSERT_EQ(sends, 1) << "fragment " << p << " from update " << from;
            if(from >= s.offset(p) + tau) {
              ASSERT_EQ(merges, 1) << "fragment " << p << " from update " << from;
            }
          }
          for(uint64_t c = 0; c < 4 * H; ++c) {
            ASSERT_EQ(s.merges(p, c), c >= tau && s.sends(p, c - tau)) << "merged delay after sent, at " << c;
          }
          ASSERT_FALSE(s.sends(p, 0)) << "nothing before the first update";
        }
        ASSERT_EQ(covered, n);
        ASSERT_EQ(s.offset(F - 1), H) << "the last fragment at the round's end, as one would be";
      }
}

// H 6, F 3, delay 2: fragment 0 sent after updates 2, 8, 14 and merged after 4, 10, 16; fragment
// 1 after 4, 10 and 6, 12; fragment 2 after 6, 12 and 8, 14 (torchft's offsets).
TEST(FragmentSchedule, ByHand) {
  FragmentSchedule s(6, 3, 2);
  std::vector<std::vector<uint64_t>> sent(3), merged(3);
  for(uint64_t c = 1; c <= 16; ++c)
    for(size_t p = 0; p < 3; ++p) {
      if(s.sends(p, c))
        sent[p].push_back(c);
      if(s.merges(p, c))
        merged[p].push_back(c);
    }
  EXPECT_EQ(sent[0], (std::vector<uint64_t>{2, 8, 14}));
  EXPECT_EQ(merged[0], (std::vector<uint64_t>{4, 10, 16}));
  EXPECT_EQ(sent[1], (std::vector<uint64_t>{4, 10, 16}));
  EXPECT_EQ(merged[1], (std::vector<uint64_t>{6, 12}));
  EXPECT_EQ(sent[2], (std::vector<uint64_t>{6, 12}));
  EXPECT_EQ(merged[2], (std::vector<uint64_t>{8, 14}));
  EXPECT_EQ(s.fragment(2, 10).offset, 6u);
}

TEST(FragmentSchedule, RefusesWhatCannotBeScheduled) {
  using testdata::errorOf;
  EXPECT_NE(errorOf([] { FragmentSchedule(4, 5, 0); }).find("--outer-fragments 5 with --local-steps 4"), std::string::npos);
  EXPECT_NE(errorOf([] { FragmentSchedule(4, 0, 0); }).find("--outer-fragments 0"), std::string::npos);
  EXPECT_NE(errorOf([] { FragmentSchedule(4, 2, 4); }).find("--outer-delay 4 with --local-steps 4"), std::string::npos);
  EXPECT_EQ(errorOf([] { FragmentSchedule(4, 4, 3); }), "");
}

TEST(SerialWorker, RunsJobsInOrderBesideTheCaller) {
  SerialWorker worker("test");
  std::vector<int> order;
  std::atomic<bool> release{false};
  uint64_t first = worker.post([&] {
    while(!release)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    order.push_back(0);
  });
  uint64_t second = worker.post([&] { order.push_back(1); });
  release = true;  // the caller went on while the first job waited
  worker.wait(second);
  worker.wait(first);  // done already
  EXPECT_EQ(order, (std::vector<int>{0, 1}));
}

TEST(SerialWorker, ErrorsReachTheWaiterAndLaterJobsStillRun) {
  SerialWorker worker("test");
  bool ran = false;
  uint64_t failing = worker.post([] { throw Error("the exchange failed"); });
  uint64_t next = worker.post([&] { ran = true; });
  worker.waitAll();
  EXPECT_EQ(testdata::errorOf([&] { worker.wait(failing); }), "the exchange failed");
  worker.wait(next);
  EXPECT_TRUE(ran);
}

TEST(SerialWorker, DestructorRunsWhatIsPosted) {
  int ran = 0;
  {
    SerialWorker worker("test");
    for(int i = 0; i < 5; ++i)
      worker.post([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        ++ran;
      });
  }
  EXPECT_EQ(ran, 5);
}

}  // namespace
}  // namespace marian
