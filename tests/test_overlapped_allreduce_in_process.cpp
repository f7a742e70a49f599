// OverlappedAllreduce on 1-3 in-process ranks of two CPU devices, whose "backward passes" are
// threads reporting parameters in orders of the test's choosing: every bucket is reduced once
// per update and only when every active device has finished it; the order of the first update is
// rank 0's device 0's finishing order, kept by every rank afterwards; afterBackward runs last; an
// idle device counts as finished; a failed backward leaves the unstarted buckets alone and the
// next update works; an error of the communication thread reaches finish().
#include <atomic>
#include <thread>

#include "in_process_ranks.h"
#include "training/graph_groups/overlapped_allreduce.h"

namespace marian {
namespace {

struct Fixture {
  Parameters layout{cpuDevice()};
  std::vector<GradientBucket> buckets;  // one parameter each: bucket b is parameter b
  Fixture() {
    for(auto [name, size] : {std::pair<const char*, int>{"a", 10}, {"b", 20}, {"c", 5}, {"d", 15}})
      layout.declare(name, Shape({size}), inits::zeros());
    layout.allocate();
    for(const Parameters::Entry& e : layout.entries())
      buckets.push_back({Range{e.offset, size_t(e.shape.elements())}});
  }
};

// One update: device d (if active) reports the parameters in orders[d], then that its backward returned.
void backward(OverlappedAllreduce& overlap, const std::vector<char>& active,
              const std::vector<std::vector<size_t>>& orders) {
  overlap.start(active);
  std::vector<std::thread> devices;
  for(size_t d = 0; d < active.size(); ++d)
    devices.emplace_back([&, d] {
      if(!active[d])
        return;  // an idle device reports nothing (its gradients are zeros, final from the start)
      for(size_t p : orders[d])
        overlap.gradientReady(d, p);
      overlap.backwardDone(d);
    });
  for(auto& t : devices)
    t.join();
}

void everyBucketOnceInRankZerosOrder(Transport& t) {
  Fixture f;
  std::vector<int> reduced;                  // the communication thread's log: buckets, -1 after backward
  std::vector<std::atomic<int>> reports(4);  // gradientReady calls per parameter in this update
  std::atomic<int> activeDevices{2};
  OverlappedAllreduce overlap(
      f.layout, f.buckets, {cpuDevice(0), cpuDevice(1)}, t,
      [&](size_t b) {
        EXPECT_EQ(reports[b].load(), activeDevices.load()) << "bucket " << b << " reduced before every device finished it";
        reduced.push_back(int(b));
      },
      [&] { reduced.push_back(-1); });
  // rank 0's device 0 finishes 2, 0, 3, 1; the other ranks' devices in other orders
  std::vector<size_t> rankZero = {2, 0, 3, 1}, other = {1, 3, 0, 2}, reverse = {3, 2, 1, 0};
  auto counted = [&](OverlappedAllreduce& o, std::vector<char> active, std::vector<std::vector<size_t>> orders) {
    for(auto& r : reports)
      r = 0;
    activeDevices = int(std::count(active.begin(), active.end(), 1));
    reduced.clear();
    o.start(active);
    std::vector<std::thread> devices;
    for(size_t d = 0; d < active.size(); ++d)
      devices.emplace_back([&, d] {
        if(!active[d])
          return;
        for(size_t p : orders[d]) {
          ++reports[p];
          o.gradientReady(d, p);
        }
        o.backwardDone(d);
      });
    for(auto& th : devices)
      th.join();
    o.finish();
  };
  std::vector<size_t> mine = t.rank() == 0 ? rankZero : other;
  counted(overlap, {1, 1}, {mine, reverse});
  EXPECT_EQ(reduced, (std::vector<int>{2, 0, 3, 1, -1})) << "the first update follows rank 0's device 0";
  counted(overlap, {1, 1}, {reverse, mine});
  EXPECT_EQ(reduced, (std::vector<int>{2, 0, 3, 1, -1})) << "and every update after it";
  counted(overlap, {0, 1}, {{}, other});  // device 0 idle: its gradients count as final
  EXPECT_EQ(reduced, (std::vector<int>{2, 0, 3, 1, -1}));
  // a backward that fails after bucket 2: nothing more is reduced, and the next update is whole
  for(auto& r : reports)
    r = 0;
  activeDevices = 2;
  reduced.clear();
  overlap.start({1, 1});
  ++reports[2];
  overlap.gradientReady(0, 2);
  ++reports[2];
  overlap.gradientReady(1, 2);
  overlap.finish(/*failed=*/true);
  for(int b : reduced)
    EXPECT_EQ(b, 2) << "only the finished bucket may have gone";
  counted(overlap, {1, 1}, {mine, mine});
  EXPECT_EQ(reduced, (std::vector<int>{2, 0, 3, 1, -1}));
}

void anErrorOfTheCommunicationThreadReachesFinish(Transport& t) {
  Fixture f;
  OverlappedAllreduce overlap(f.layout, f.buckets, {cpuDevice(0), cpuDevice(1)}, t, [&](size_t b) {
    if(b == 3)
      throw Error("bucket 3 broke");
  });
  std::vector<size_t> order = {0, 1, 2, 3};
  backward(overlap, {1, 1}, {order, order});
  try {
    overlap.finish();
    ADD_FAILURE() << "finish() returned after the thread failed";
  } catch(const Error& e) {
    EXPECT_STREQ(e.what(), "bucket 3 broke");
  }
}

class OverlappedAllreduceInProcess : public ::testing::TestWithParam<int> {};

TEST_P(OverlappedAllreduceInProcess, EveryBucketOnceInRankZerosOrder) {
  runOnRanks(GetParam(), everyBucketOnceInRankZerosOrder);
}
TEST_P(OverlappedAllreduceInProcess, AnErrorOfTheCommunicationThreadReachesFinish) {
  runOnRanks(GetParam(), anErrorOfTheCommunicationThreadReachesFinish);
}

INSTANTIATE_TEST_SUITE_P(Ranks, OverlappedAllreduceInProcess, ::testing::Values(1, 2, 3),
                         [](const ::testing::TestParamInfo<int>& info) { return "P" + std::to_string(info.param); });

}  // namespace
}  // namespace marian
