// --output-sampling's distributions by hand: the Gumbel-max trick on a row of log-probabilities
// picks each word as often as the pruned, renormalized, tempered distribution says (full, topk,
// nucleus, epsilon; 20,000 draws, within 5 standard deviations); the noise is Gumbel's (mean
// Euler's gamma, variance pi^2 / 6); Marian's values and their errors.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "common/error.h"
#include "tensors/counter_hash.h"
#include "translator/output_sampling.h"

namespace marian {
namespace {

// How often each word is the best after sampling, over `draws` rows of the same log-probabilities
// (each a row of another batch's step); every sampled row is a distribution again.
std::vector<double> frequencies(const OutputSampling& s, const std::vector<double>& probs, int forbidden = -1,
                                int draws = 20000) {
  std::vector<double> count(probs.size(), 0);
  for(int d = 0; d < draws; ++d) {
    std::vector<float> row;
    for(double p : probs)
      row.push_back(float(std::log(p)));
    s.apply(row.data(), row.size(), OutputSampling::stepKey(OutputSampling::batchKey(7, uint64_t(d)), d % 5),
            size_t(d % 3), forbidden);
    double mass = 0;
    for(float x : row)
      mass += std::exp(double(x));
    EXPECT_NEAR(mass, 1.0, 1e-5) << "draw " << d;
    size_t best = 0;
    for(size_t i = 1; i < row.size(); ++i)
      if(row[i] > row[best])
        best = i;
    count[best] += 1;
  }
  for(double& c : count)
    c /= draws;
  return count;
}

void expectDistribution(const std::vector<double>& got, const std::vector<double>& expected, const char* what) {
  for(size_t i = 0; i < got.size(); ++i) {
    double sd = std::sqrt(expected[i] * (1 - expected[i]) / 20000);
    EXPECT_NEAR(got[i], expected[i], 5 * sd + 1e-9) << what << ", word " << i;
  }
}

const std::vector<double> kProbs = {0.5, 0.3, 0.15, 0.05};

}  // namespace

TEST(OutputSampling, EachMethodDrawsFromItsDistribution) {
  expectDistribution(frequencies(OutputSampling({"full"}), kProbs), kProbs, "full");
  // temperature 0.5: p^2 renormalized
  double z = 0.25 + 0.09 + 0.0225 + 0.0025;
  expectDistribution(frequencies(OutputSampling({"full", "0.5"}), kProbs), {0.25 / z, 0.09 / z, 0.0225 / z, 0.0025 / z},
                     "full 0.5");
  expectDistribution(frequencies(OutputSampling({"topk", "2"}), kProbs), {0.625, 0.375, 0, 0}, "topk 2");
  // nucleus 0.6: the mass before the third word is 0.8 > 0.6, so the first two
  expectDistribution(frequencies(OutputSampling({"nucleus", "0.6"}), kProbs), {0.625, 0.375, 0, 0}, "nucleus 0.6");
  // epsilon 0.1: the words of probability at least 0.1
  expectDistribution(frequencies(OutputSampling({"epsilon", "0.1"}), kProbs), {0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0},
                     "epsilon 0.1");
  // epsilon above every probability keeps the best word
  expectDistribution(frequencies(OutputSampling({"epsilon", "0.9"}), kProbs), {1, 0, 0, 0}, "epsilon 0.9");
  // topk 1 is greedy
  expectDistribution(frequencies(OutputSampling({"topk", "1", "3"}), kProbs), {1, 0, 0, 0}, "topk 1");
  // the temperature after pruning, as Marian's: nucleus 0.45 keeps the first word alone (tempered
  // first, the mass before the second would be 0.38 and keep it)
  expectDistribution(frequencies(OutputSampling({"nucleus", "0.45", "2"}), kProbs), {1, 0, 0, 0}, "nucleus 0.45 2");
  // <unk> (here word 0) never kept: topk 1 takes the next best
  expectDistribution(frequencies(OutputSampling({"topk", "1"}), kProbs, /*forbidden=*/0), {0, 1, 0, 0}, "topk 1 no unk");
}

// No two batches, steps or seeds share draws, however small the seed (a linear mix of small seeds
// made batch b's step t + 1 batch b + 1's step t).
TEST(OutputSampling, BatchesStepsAndSeedsDrawApart) {
  std::set<uint64_t> keys;
  for(uint64_t seed : {1, 2, 7, 42})
    for(uint64_t batch = 0; batch < 200; ++batch)
      for(int step = 0; step < 200; ++step)
        keys.insert(OutputSampling::stepKey(OutputSampling::batchKey(seed, batch), step));
  EXPECT_EQ(keys.size(), 4u * 200 * 200);
}

TEST(OutputSampling, TheNoiseIsGumbels) {
  double sum = 0, squares = 0;
  const int n = 200000;
  uint32_t base = hashBase(42);
  for(int i = 0; i < n; ++i) {
    double g = gumbelOf(counterHash(base, uint64_t(i)));
    sum += g;
    squares += g * g;
  }
  double mean = sum / n, variance = squares / n - mean * mean;
  EXPECT_NEAR(mean, 0.5772157, 0.01);
  EXPECT_NEAR(variance, M_PI * M_PI / 6, 0.03);
}

TEST(OutputSampling, MariansValuesAndTheirErrors) {
  EXPECT_FALSE(OutputSampling(std::vector<std::string>{}).on());
  EXPECT_FALSE(OutputSampling({"0"}).on());  // Marian's old boolean values
  EXPECT_TRUE(OutputSampling({"1"}).on());
  EXPECT_EQ(OutputSampling({"topk"}).describe(), "from the top 10 with temperature 1");
  EXPECT_EQ(OutputSampling({"nucleus"}).describe(), "from the nucleus of mass 0.9 with temperature 1");
  auto error = [](std::vector<std::string> values) {
    try {
      OutputSampling s(values);
    } catch(const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error({"beam"}).find("Unknown --output-sampling method 'beam'"), std::string::npos);
  EXPECT_NE(error({"topk", "0"}).find("K is a whole number >= 1"), std::string::npos);
  EXPECT_NE(error({"nucleus", "1.5"}).find("P is a probability mass"), std::string::npos);
  EXPECT_NE(error({"full", "0"}).find("the temperature must be > 0"), std::string::npos);
  EXPECT_NE(error({"full", "x"}).find("the temperature 'x' is not a number"), std::string::npos);
  EXPECT_NE(error({"full", "1", "2"}).find("too many values"), std::string::npos);
}

}  // namespace marian
