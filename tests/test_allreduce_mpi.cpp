// Every allreduce algorithm against the dense reference under real MPI (ctest runs it with
// mpirun -np 2, 3 and 4): bitwise on integer-valued inputs, for overlapping and disjoint
// indices, uneven k per rank, empty inputs and dimensions not divisible by P; and the bytes
// each rank receives against the algorithm's cost model.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <random>
#include <set>

#include "comm/allreduce.h"
#include "common/error.h"

namespace marian {
namespace {

MpiTransport& mpi() { return *MpiTransport::instance(); }

enum class Pattern { random, overlapping, disjoint, empty, oneRankEmpty };

// Rank `rank`'s input: integer values, sorted unique indices below n. Every rank can compute
// every other rank's input, so the reference needs no communication.
SparseVector input(int rank, size_t n, size_t k, Pattern pattern, unsigned seed) {
  SparseVector v;
  if(pattern == Pattern::empty || (pattern == Pattern::oneRankEmpty && rank == 1))
    return v;
  std::mt19937 rng(seed * 977 + unsigned(rank));
  std::set<uint32_t> indices;
  size_t want = std::min(n, k + size_t(rank) * 3);  // uneven k per rank
  if(pattern == Pattern::overlapping) {
    for(size_t i = 0; i < want; ++i)
      indices.insert(uint32_t(i * 2 % n));
  } else if(pattern == Pattern::disjoint) {
    for(size_t i = size_t(rank); i < n && indices.size() < want; i += size_t(mpi().size()))
      indices.insert(uint32_t(i));
  } else {
    std::uniform_int_distribution<uint32_t> d(0, uint32_t(n - 1));
    while(indices.size() < want)
      indices.insert(d(rng));
  }
  std::uniform_int_distribution<int> value(-50, 50);
  for(uint32_t i : indices) {
    v.indices.push_back(i);
    v.values.push_back(float(value(rng)));
  }
  return v;
}

std::vector<float> reference(size_t n, size_t k, Pattern pattern, unsigned seed) {
  std::vector<float> sum(n, 0.f);
  for(int r = 0; r < mpi().size(); ++r)
    input(r, n, k, pattern, seed).addTo(sum.data());
  return sum;
}

TEST(Allreduce, EveryAlgorithmEqualsTheDenseReferenceBitwise) {
  for(const std::string& name : allreduceNames()) {
    auto algo = createAllreduce(name, mpi());
    for(size_t n : {size_t(1), size_t(7), size_t(1000), size_t(1001)})
      for(Pattern p : {Pattern::random, Pattern::overlapping, Pattern::disjoint, Pattern::empty,
                       Pattern::oneRankEmpty}) {
        size_t k = std::max<size_t>(1, n / 10);
        unsigned seed = unsigned(n * 10 + size_t(p));
        SCOPED_TRACE(name + " n=" + std::to_string(n) + " pattern " + std::to_string(int(p)));
        std::vector<float> got = algo->sum(input(mpi().rank(), n, k, p, seed), n);
        ASSERT_EQ(got, reference(n, k, p, seed));
      }
  }
}

TEST(Allreduce, BytesReceivedWithinTheCostModels) {
  int P = mpi().size();
  size_t n = 100000, k = 1000;
  for(const std::string& name : allreduceNames()) {
    SCOPED_TRACE(name);
    auto algo = createAllreduce(name, mpi());
    SparseVector local = input(mpi().rank(), n, k, Pattern::random, 5);
    algo->takeBytes();
    algo->sum(local, n);
    AllreduceBytes b = algo->takeBytes();
    double kmax = double(k + size_t(P - 1) * 3);  // the largest k of any rank
    if(name == "ring") {  // 2 (P-1)/P n floats, to within one chunk's rounding
      EXPECT_NEAR(double(b.received), 2.0 * (P - 1) / P * double(n) * 4, 2.0 * 4 * P);
    } else if(name == "topka") {  // the other ranks' pairs: at most (P-1) kmax pairs of 8 bytes
      EXPECT_LE(double(b.received), double(P - 1) * kmax * 8);
      EXPECT_GE(double(b.received), double(P - 1) * double(k) * 8);
    } else if(name == "ssar-recdbl") {
      // every message holds the union of >= 1 rank's indices: >= k pairs; all messages together
      // at most the other ranks' pairs plus the fold (k (P-1) in the cost model's worst case)
      int p2 = 1, r = mpi().rank();
      while(p2 * 2 <= P)
        p2 *= 2;
      int messages = r >= p2 ? 1 : int(std::log2(double(p2))) + (r < P - p2 ? 1 : 0);
      EXPECT_GE(double(b.received), double(messages) * double(k) * 8);
      EXPECT_LE(double(b.received), double(P) * kmax * 8);
    } else if(name == "ssar-split") {
      // the others' parts of my block plus the other blocks' sums: at most (P-1) kmax pairs
      // received in each of the two phases
      EXPECT_LE(double(b.received), 2.0 * double(P - 1) * kmax * 8);
      EXPECT_GT(b.received, 0u);
    }
  }
}

TEST(Allreduce, UnknownNameListsTheAlgorithms) {
  try {
    createAllreduce("allgatherish", mpi());
    FAIL();
  } catch(const Error& e) {
    EXPECT_NE(std::string(e.what()).find("topka"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace marian

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  marian::MpiTransport::start(&argc, &argv);
  int result = RUN_ALL_TESTS();
  int worst = 0;  // the job fails when any rank failed
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}
