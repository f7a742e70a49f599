#pragma once
// The cases of 1-bit Adam's compressed allreduce (comm/allreduce/onebit.h) and its use by
// GradientAllreducer (--onebit-adam), written once against Transport: under mpirun by
// test_gradient_allreducer_mpi.cpp, on threads by test_gradient_allreducer_in_process.cpp. On 2
// ranks the result and both sides' errors over three calls against a computation here in double
// (sign bits, a scale per chunk or per segment, worker and server error feedback); on any rank count the
// allreducer hands the optimizer the gradient whose momentum step gives the averaged momentum,
// and a checkpoint continues bitwise.
#include <gtest/gtest.h>

#include <cmath>

#include "comm/allreduce/onebit.h"
#include "comm/allreduce/segments.h"
#include "training/exchange/codec_checkpoint.h"
#include "gradient_allreducer_cases.h"
#include "random_values.h"

namespace marian {
namespace onebit_cases {

// per segment (starts: where each begins, 0 first): scale |x_s / units_s|_2 / sqrt(n_s) (rms) or
// |x_s / units_s|_1 / n_s (meanAbs) times the signs (+ for >= 0) times the units (empty: 1), and
// x - that as the error
inline std::vector<double> signScaled(const std::vector<double>& x, const std::vector<size_t>& starts,
                                      std::vector<double>& error, const std::vector<double>& units = {},
                                      OneBitScale kind = OneBitScale::rms) {
  std::vector<double> out(x.size());
  error.resize(x.size());
  auto unit = [&](size_t i) { return units.empty() ? 1.0 : units[i]; };
  for(size_t s = 0; s < starts.size(); ++s) {
    size_t begin = starts[s], end = s + 1 < starts.size() ? starts[s + 1] : x.size();
    double squares = 0, magnitudes = 0;
    for(size_t i = begin; i < end; ++i) {
      squares += (x[i] / unit(i)) * (x[i] / unit(i));
      magnitudes += std::fabs(x[i] / unit(i));
    }
    double scale = kind == OneBitScale::rms ? std::sqrt(squares / double(end - begin)) : magnitudes / double(end - begin);
    for(size_t i = begin; i < end; ++i) {
      out[i] = (x[i] < 0 ? -scale : scale) * unit(i);
      error[i] = x[i] - out[i];
    }
  }
  return out;
}

using gradient_allreducer_cases::expectNear;

// 5 values on 2 ranks (chunks [0, 2) and [2, 5)), cut into segments at segmentStarts;
// chunkStarts: each chunk's segment starts relative to it, as the test expects them.
// units: every value's (empty: none set).
inline void compressedMeanByHandIn(Transport& t, const std::vector<size_t>& segmentStarts,
                                   const std::vector<size_t> (&chunkStarts)[2], size_t bytesPerCall,
                                   const std::vector<double>& units = {}, OneBitScale kind = OneBitScale::rms) {
  if(t.size() != 2)
    GTEST_SKIP() << "computed by hand for 2 ranks";
  OneBitAllreduce onebit(t, 5, segmentStarts);
  onebit.setScale(kind);
  if(!units.empty())
    onebit.setUnits(std::vector<float>(units.begin(), units.end()));
  auto unitsOf = [&](Range c) {
    return units.empty() ? std::vector<double>{}
                         : std::vector<double>(units.begin() + long(c.offset), units.begin() + long(c.end()));
  };
  const std::vector<double> inputs[3][2] = {{{1, -3, 2, 0.5, 0}, {3, 1, -1, -2, 4}},
                                            {{0.5, 0.5, -1, 2, 1}, {-2, 1, 1, 1, -1}},
                                            {{1, 1, 1, 1, 1}, {-1, 2, -3, 0.25, 0}}};
  std::vector<double> worker[2] = {std::vector<double>(5, 0.0), std::vector<double>(5, 0.0)};
  std::vector<double> server[2] = {std::vector<double>(2, 0.0), std::vector<double>(3, 0.0)};
  Range chunks[2] = {{0, 2}, {2, 3}};
  for(int call = 0; call < 3; ++call) {
    SCOPED_TRACE("call " + std::to_string(call));
    std::vector<double> want(5);
    std::vector<double> sent[2][2];  // [rank][chunk]
    for(int r = 0; r < 2; ++r)
      for(int c = 0; c < 2; ++c) {
        std::vector<double> x, error;
        for(size_t i = chunks[c].offset; i < chunks[c].end(); ++i)
          x.push_back(inputs[call][r][i] + worker[r][i]);
        sent[r][c] = signScaled(x, chunkStarts[c], error, unitsOf(chunks[c]), kind);
        for(size_t i = 0; i < error.size(); ++i)
          worker[r][chunks[c].offset + i] = error[i];
      }
    for(int c = 0; c < 2; ++c) {
      std::vector<double> y(chunks[c].size), error;
      for(size_t i = 0; i < y.size(); ++i)
        y[i] = (sent[0][c][i] + sent[1][c][i]) / 2 + server[c][i];
      std::vector<double> out = signScaled(y, chunkStarts[c], error, unitsOf(chunks[c]), kind);
      server[c] = error;
      for(size_t i = 0; i < out.size(); ++i)
        want[chunks[c].offset + i] = out[i];
    }
    std::vector<float> values(inputs[call][t.rank()].begin(), inputs[call][t.rank()].end());
    onebit.averageCompressed(values);
    expectNear(values, want, "the mean");
    expectNear(onebit.workerError(), worker[t.rank()], "the worker error");
    expectNear(onebit.serverError(), server[t.rank()], "the server error");
  }
  AllreduceBytes bytes = onebit.takeBytes();
  EXPECT_EQ(bytes.sent, 3u * bytesPerCall);
}

// One scale per chunk: per call the other server's chunk (4 bytes of scale + 1 of bits) out, and
// this server's reply (4 + 1) to the other rank.
inline void compressedMeanByHand(Transport& t) { compressedMeanByHandIn(t, {0}, {{0}, {0}}, 10); }

// Segments [0, 1), [1, 3), [3, 5): chunk [0, 2) holds two of them and so does [2, 5) (cut at 2);
// 2 scales + 1 byte of bits each way.
inline void compressedMeanBySegmentsByHand(Transport& t) {
  compressedMeanByHandIn(t, {0, 1, 3}, {{0, 1}, {0, 1}}, 18);
}

// The same segments with a unit per value (--onebit-update-direction's sqrt(v)): each segment's
// scale is x / units', each value sent as sign x scale x its unit; the bytes do not change.
inline void compressedMeanInUnitsByHand(Transport& t) {
  compressedMeanByHandIn(t, {0, 1, 3}, {{0, 1}, {0, 1}}, 18, {0.5, 2, 1, 4, 0.25});
}

// The same in units with --onebit-scale mean-abs: each segment's scale is the mean magnitude.
inline void compressedMeanWithMeanAbsScaleByHand(Transport& t) {
  compressedMeanByHandIn(t, {0, 1, 3}, {{0, 1}, {0, 1}}, 18, {0.5, 2, 1, 4, 0.25}, OneBitScale::meanAbs);
}

// The error feedback's analogue of conservation: what a segment sends plus its error is x, and
// with meanAbs the error's norm is |x|^2 - |x|_1^2 / n, below x's and below rms's error, also for
// a spike (one value 1000 among 999 of size 1), where rms's error is larger than x itself (it
// sends every value at about 31.6).
inline void meanAbsScaleKeepsTheErrorBelowTheValues() {
  std::vector<float> spike(1000);
  for(size_t i = 0; i < spike.size(); ++i)
    spike[i] = i % 2 ? 1.f : -1.f;
  spike[7] = 1000.f;
  for(bool isSpike : {true, false}) {
    std::vector<float> x = isSpike ? spike : randomValues(1000, 3);
    double squares = 0, magnitudes = 0;
    for(float v : x) {
      squares += double(v) * v;
      magnitudes += std::fabs(double(v));
    }
    double rmsError = 0, meanAbsError = 0;
    for(OneBitScale kind : {OneBitScale::rms, OneBitScale::meanAbs}) {
      std::vector<float> error(x.size()), back(x.size(), 0.f);
      std::vector<char> bytes = OneBitAllreduce::compress(x.data(), x.size(), {0}, error.data(), nullptr, kind);
      OneBitAllreduce::decompress(bytes, x.size(), {0}, back.data(), 1.f);
      double& errorSquares = kind == OneBitScale::rms ? rmsError : meanAbsError;
      for(size_t i = 0; i < x.size(); ++i) {
        ASSERT_NEAR(back[i] + error[i], x[i], 1e-3) << i;
        errorSquares += double(error[i]) * error[i];
      }
    }
    EXPECT_NEAR(meanAbsError, squares - magnitudes * magnitudes / 1000.0, 1e-4 * squares);
    EXPECT_LT(meanAbsError, squares);
    EXPECT_LE(meanAbsError, rmsError);
    if(isSpike) {
      EXPECT_GT(rmsError, squares) << "rms sends every value at the spike's share";
    }
  }
}

// Parameters starting at 0, 10 and 25 of 40 values, in blocks of 8 (0: whole parameters); the
// range [12, 32) of them: its own pieces (from 12 and 25) cut into blocks, relative to 12.
inline void segmentStartsCutParametersIntoBlocks() {
  EXPECT_EQ(segmentStarts({0, 10, 25}, 40, 8), (std::vector<size_t>{0, 8, 10, 18, 25, 33}));
  EXPECT_EQ(segmentStarts({0, 10, 25}, 40, 0), (std::vector<size_t>{0, 10, 25}));
  EXPECT_EQ(segmentStarts({5}, 12, 0), (std::vector<size_t>{0, 5}));
  EXPECT_EQ(segmentsIn(Range{12, 20}, {0, 10, 25}), (std::vector<size_t>{0, 13}));
  EXPECT_EQ(segmentStartsIn(Range{12, 20}, {0, 10, 25}, 8), (std::vector<size_t>{0, 8, 13}));
}

// A fixed first moment m as the allreducer reads it from the optimizer (and beta1). With v, also a
// fixed variance (--onebit-update-direction reads it).
inline AdamMoments momentumOf(const std::vector<float>& m, float beta1 = 0.9f, const std::vector<float>* v = nullptr) {
  AdamMoments::Reader first = [&m](Range r, float* out) {
    std::copy(m.begin() + long(r.offset), m.begin() + long(r.end()), out);
  };
  AdamMoments::Reader second;
  if(v)
    second = [v](Range r, float* out) { std::copy(v->begin() + long(r.offset), v->begin() + long(r.end()), out); };
  return AdamMoments(first, second, beta1);
}

// This rank's values `mine` through the reducer as update u: what came back, the same on every rank.
inline std::vector<float> reducedAt(Transport& t, GradientAllreducer& reducer, FlatBuffer& g,
                                    const std::vector<float>& mine, unsigned u) {
  kernels::fromHost(g.all(), mine);
  reducer.setStep(u);
  reducer.reduce(std::vector<Tensor>{g.all()});
  std::vector<float> got = kernels::toHost(g.all());
  EXPECT_EQ(got, gradient_allreducer_cases::fromRankZero(t, got));
  return got;
}

// The allreducer tests' parameters: A (300 values), B (100), C (300), in that order.
inline void declareThreeParameters(Parameters& layout) {
  layout.declare("A", Shape({20, 15}), inits::zeros());
  layout.declare("B", Shape({100}), inits::zeros());
  layout.declare("C", Shape({30, 10}), inits::zeros());
  layout.allocate();
}

// Through GradientAllreducer on any rank count: after --adam-freeze-variance-after 2 dense
// updates, what comes back is g with beta1 m + (1 - beta1) g = the compressed mean of the ranks'
// beta1 m + (1 - beta1) P g_rank (m: a fixed first moment here; P g_rank: the rank's gradient as
// if it were the update's sum),
// each bucket's parameters cut into blocks of --onebit-block-size 128 with a scale each; with
// --clip-norm C each rank's gradient is clipped to C x sqrt(bucket size / n) first, and the
// caller's clip is off for the result (it is no gradient to clip).
inline void allreducerGivesTheAveragedMomentumWith(Transport& t, float clipNorm) {
  Parameters layout(cpuDevice());
  declareThreeParameters(layout);
  size_t n = layout.totalSize();
  std::vector<float> m = randomValues(n, 5);
  float beta1 = 0.9f, p = float(t.size());
  AdamMoments source = momentumOf(m, beta1);
  Options o = gradient_allreducer_cases::options("ring", 1.f, "sampled",
                                                 "onebit-adam: true\nadam-freeze-variance-after: 2\noptimizer: adam\n"
                                                 "onebit-block-size: 128\nclip-norm: " + std::to_string(clipNorm));
  FlatBuffer g(cpuDevice(), Type::float32, n);
  std::vector<GradientBucket> buckets = {{{0, 300}}, {{300, 400}}};  // A; B and C
  GradientAllreducer reducer(o, t, {g.all()}, 3, buckets, &layout, source);
  std::vector<std::unique_ptr<OneBitAllreduce>> reference;
  reference.push_back(std::make_unique<OneBitAllreduce>(t, 300, std::vector<size_t>{0, 128, 256}));
  reference.push_back(std::make_unique<OneBitAllreduce>(t, 400, std::vector<size_t>{0, 100, 228, 356}));
  for(unsigned u = 0; u < 5; ++u) {
    SCOPED_TRACE("update " + std::to_string(u));
    std::vector<float> mine = randomValues(n, 10 * unsigned(t.rank()) + u);
    std::vector<float> got = reducedAt(t, reducer, g, mine, u);
    EXPECT_EQ(reducer.clippedBeforeTheSum(), u >= 2);
    if(u < 2)
      continue;  // dense sums before the freeze
    for(size_t b = 0; b < buckets.size(); ++b) {
      Range r = buckets[b][0];
      double squares = 0;
      for(size_t i = 0; i < r.size; ++i)
        squares += double(p * mine[r.offset + i]) * double(p * mine[r.offset + i]);  // as the update's
      double threshold = clipNorm * std::sqrt(double(r.size) / double(n)), clip = 1;
      if(clipNorm > 0 && std::sqrt(squares) > threshold)
        clip = threshold / std::sqrt(squares);
      std::vector<float> candidate(r.size);
      for(size_t i = 0; i < r.size; ++i)
        candidate[i] = beta1 * m[r.offset + i] + (1 - beta1) * float(p * clip) * mine[r.offset + i];
      reference[b]->averageCompressed(candidate);
      for(size_t i = 0; i < r.size; ++i) {
        float momentum = beta1 * m[r.offset + i] + (1 - beta1) * got[r.offset + i];
        ASSERT_NEAR(momentum, candidate[i], 1e-5 * (1 + std::fabs(candidate[i]))) << "bucket " << b << " at " << i;
      }
    }
  }
}

inline void allreducerGivesTheAveragedMomentum(Transport& t) {
  allreducerGivesTheAveragedMomentumWith(t, 0.f);
  allreducerGivesTheAveragedMomentumWith(t, 0.5f);  // clips: the values' norms are about 10
}

// --onebit-update-direction on any rank count: after the freeze (2 dense updates) the candidates
// beta1 m + (1 - beta1) g_rank are averaged in units of sqrt(v), each value's unit at least a
// 100th of its parameter's mean sqrt(v) (A's value 5 has v = 0), 1 for a parameter whose v is all
// 0 (B); the reference is OneBitAllreduce with those units computed here.
inline void allreducerSendsTheUpdateDirectionWith(Transport& t, const std::string& scale) {
  SCOPED_TRACE("--onebit-scale " + scale);
  Parameters layout(cpuDevice());
  declareThreeParameters(layout);
  size_t n = layout.totalSize();
  std::vector<float> m = randomValues(n, 5), v = randomValues(n, 6);
  for(size_t i = 0; i < n; ++i)
    v[i] = v[i] * v[i] * (i % 7 == 0 ? 1e-4f : 1.f);  // sqrt(v): |normal|, every 7th a 100th of it (floored)
  v[5] = 0.f;
  std::fill(v.begin() + 300, v.begin() + 400, 0.f);
  float beta1 = 0.9f, p = float(t.size());
  AdamMoments source = momentumOf(m, beta1, &v);
  Options o = gradient_allreducer_cases::options(
      "ring", 1.f, "sampled",
      "onebit-adam: true\nadam-freeze-variance-after: 2\noptimizer: adam\nonebit-update-direction: true\n"
      "onebit-scale: " + scale);
  FlatBuffer g(cpuDevice(), Type::float32, n);
  std::vector<GradientBucket> buckets = {{{0, 300}}, {{300, 400}}};  // A; B and C
  GradientAllreducer reducer(o, t, {g.all()}, 3, buckets, &layout, source);
  std::vector<Range> parameters = {{0, 300}, {300, 100}, {400, 300}};
  std::vector<float> units(n);
  for(Range p : parameters) {
    double mean = 0;
    for(size_t i = p.offset; i < p.end(); ++i)
      mean += std::sqrt(double(v[i])) / double(p.size);
    for(size_t i = p.offset; i < p.end(); ++i)
      units[i] = mean == 0 ? 1.f : float(std::max(std::sqrt(double(v[i])), mean / 100));
  }
  EXPECT_GT(units[5], 0.f);
  EXPECT_EQ(units[350], 1.f);
  std::vector<std::unique_ptr<OneBitAllreduce>> reference;
  reference.push_back(std::make_unique<OneBitAllreduce>(t, 300, std::vector<size_t>{0}));
  reference.push_back(std::make_unique<OneBitAllreduce>(t, 400, std::vector<size_t>{0, 100}));
  reference[0]->setUnits(std::vector<float>(units.begin(), units.begin() + 300));
  reference[1]->setUnits(std::vector<float>(units.begin() + 300, units.end()));
  for(auto& r : reference)
    r->setScale(oneBitScaleFromName(scale));
  for(unsigned u = 0; u < 5; ++u) {
    SCOPED_TRACE("update " + std::to_string(u));
    std::vector<float> mine = randomValues(n, 10 * unsigned(t.rank()) + u);
    std::vector<float> got = reducedAt(t, reducer, g, mine, u);
    if(u < 2)
      continue;
    for(size_t b = 0; b < buckets.size(); ++b) {
      Range r = buckets[b][0];
      std::vector<float> candidate(r.size);
      for(size_t i = 0; i < r.size; ++i)
        candidate[i] = beta1 * m[r.offset + i] + (1 - beta1) * p * mine[r.offset + i];
      reference[b]->averageCompressed(candidate);
      for(size_t i = 0; i < r.size; ++i) {
        float momentum = beta1 * m[r.offset + i] + (1 - beta1) * got[r.offset + i];
        ASSERT_NEAR(momentum, candidate[i], 1e-5 * (1 + std::fabs(candidate[i]))) << "bucket " << b << " at " << i;
      }
    }
  }
}

inline void allreducerSendsTheUpdateDirection(Transport& t) {
  allreducerSendsTheUpdateDirectionWith(t, "rms");
  allreducerSendsTheUpdateDirectionWith(t, "mean-abs");
}

// 0/1 Adam (--zero-one-adam, kappa 1, freeze after 6) on any rank count: the variance changes on
// steps 1 and 3 (then 7, past the freeze), so updates 0 and 2 (0-based) are the dense sum, 1, 3,
// 4, 5 P x the 1-bit mean of the gradients with error feedback, and from 6 on the momentum is
// averaged as 1-bit Adam does with errors starting from zero.
inline void zeroOneAdamSumsInOneBitBetweenVarianceSteps(Transport& t) {
  size_t n = 400;
  std::vector<float> m = randomValues(n, 7);
  float beta1 = 0.9f;
  AdamMoments source = momentumOf(m, beta1);
  Options o = gradient_allreducer_cases::options(
      "ring", 1.f, "sampled",
      "zero-one-adam: true\nadam-freeze-variance-after: 6\nadam-variance-update-scaler: 1\noptimizer: adam");
  FlatBuffer g(cpuDevice(), Type::float32, n);
  GradientAllreducer reducer(o, t, {g.all()}, 3, {}, nullptr, source);
  OneBitAllreduce gradients(t, n), momenta(t, n);
  for(unsigned u = 0; u < 8; ++u) {
    SCOPED_TRACE("update " + std::to_string(u));
    std::vector<float> mine = randomValues(n, 10 * unsigned(t.rank()) + u);
    std::vector<float> got = reducedAt(t, reducer, g, mine, u);
    std::vector<float> want = mine;
    if(u == 0 || u == 2) {  // every rank's values are known here: their sum, to rounding
      std::fill(want.begin(), want.end(), 0.f);
      for(int r = 0; r < t.size(); ++r) {
        std::vector<float> theirs = randomValues(n, 10 * unsigned(r) + u);
        for(size_t i = 0; i < n; ++i)
          want[i] += theirs[i];
      }
    } else if(u < 6) {
      gradients.averageCompressed(want);
      for(float& x : want)
        x *= float(t.size());
    } else {
      for(size_t i = 0; i < n; ++i)
        want[i] = beta1 * m[i] + (1 - beta1) * float(t.size()) * mine[i];
      momenta.averageCompressed(want);
      for(size_t i = 0; i < n; ++i)
        want[i] = (want[i] - beta1 * m[i]) / (1 - beta1);
    }
    for(size_t i = 0; i < n; ++i)
      ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << "at " << i;
  }
}

// A checkpoint after 3 updates, restored in a fresh allreducer, continues bitwise: 1-bit Adam
// (one update compressed; also in units of sqrt(v), set again from v after the restore), and 0/1 Adam in its 1-bit gradient phase, continuing past the freeze.
inline void checkpointContinuesExactlyWith(Transport& t, const std::string& compression, unsigned end) {
  size_t n = 500;
  std::vector<float> m = randomValues(n, 9), v = randomValues(n, 10);
  for(float& x : v)
    x *= x;
  AdamMoments source = momentumOf(m, 0.9f, &v);
  Options o = gradient_allreducer_cases::options("ring", 1.f, "sampled", compression);
  std::vector<GradientBucket> buckets = {{{0, 200}}, {{200, 300}}};
  FlatBuffer g(cpuDevice(), Type::float32, n);
  auto updates = [&](GradientAllreducer& reducer, unsigned from, unsigned to) {
    std::vector<std::vector<float>> out;
    for(unsigned u = from; u < to; ++u)
      out.push_back(reducedAt(t, reducer, g, randomValues(n, 17 * unsigned(t.rank()) + u), u));
    return out;
  };
  GradientAllreducer first(o, t, {g.all()}, 5, buckets, nullptr, source);
  updates(first, 0, 3);
  ModelState saved = gradient_allreducer_cases::savedOnEveryRank(t, first, n);
  bool zeroOneBeforeItsFreeze = compression.find("zero-one-adam") != std::string::npos;  // its 1-bit gradients
  ASSERT_EQ(saved.extras.count(zeroOneBeforeItsFreeze ? kZeroOneServerErrors : kOneBitServerErrors), 1u);
  ASSERT_EQ(saved.extras.count(zeroOneBeforeItsFreeze ? kOneBitServerErrors : kZeroOneServerErrors), 0u);
  GradientAllreducer resumed(o, t, {g.all()}, 5, buckets, nullptr, source);
  resumed.restoreFrom(saved);
  EXPECT_EQ(updates(resumed, 3, end), updates(first, 3, end));
}

// 0/1 Adam's errors of its 1-bit gradients are owed to the sum: the ranks' worker errors once,
// the servers' R-fold (the sum is R times the mean they correct). A checkpoint of R ranks
// restored on these P ranks (R = 2P here, or 1: saved on one rank more than there are keys is
// the same sums) and saved again owes the same: rank 0 takes the workers' sum, each server R / P
// times its part. (Momentum errors keep their terms of the mean; 1-bit Adam's cases above.)
inline void zeroOneErrorsOfGradientsAreOwedAlikeOnAnotherRankCount(Transport& t) {
  size_t n = 500;
  Options o = gradient_allreducer_cases::options(
      "ring", 1.f, "sampled",
      "zero-one-adam: true\nadam-freeze-variance-after: 5\nadam-variance-update-scaler: 1\noptimizer: adam");
  AdamMoments source = momentumOf(randomValues(n, 9), 0.9f);
  FlatBuffer g(cpuDevice(), Type::float32, n);
  auto owed = [&](const ModelState& state) {
    std::vector<double> sum(n, 0.0);
    for(const auto& [name, values] : state.extras)
      for(size_t i = 0; i < n; ++i)
        if(name.rfind(std::string(kGradientResiduals) + ".rank", 0) == 0)
          sum[i] += values[i];
        else if(name == kZeroOneServerErrors)
          sum[i] += double(state.ranks) * values[i];
    return sum;
  };
  GradientAllreducer first(o, t, {g.all()}, 5, {}, nullptr, source);
  for(unsigned u = 0; u < 4; ++u)  // update 1 and 3 in 1 bit (variance steps 1, 3)
    reducedAt(t, first, g, randomValues(n, 17 * unsigned(t.rank()) + u), u);
  ModelState saved = gradient_allreducer_cases::savedOnEveryRank(t, first, n);
  ASSERT_EQ(saved.extras.count(kZeroOneServerErrors), 1u);
  for(int claimed : {2 * t.size(), t.size() + 1}) {
    SCOPED_TRACE("saved on " + std::to_string(claimed) + " ranks");
    ModelState other = saved;
    other.ranks = claimed;
    GradientAllreducer resumed(o, t, {g.all()}, 5, {}, nullptr, source);
    resumed.restoreFrom(other);
    std::vector<double> want = owed(other), got = owed(gradient_allreducer_cases::savedOnEveryRank(t, resumed, n));
    for(size_t i = 0; i < n; ++i)
      ASSERT_NEAR(got[i], want[i], 1e-5 * (1 + std::fabs(want[i]))) << "at " << i;
  }
}

// A 0/1 Adam checkpoint of its 1-bit gradients' errors (saved before its freeze at update 5)
// resumed with the variance frozen after 3 updates: the momentum sent in 1 bit from the first
// update on, its errors start at zero (the update is a fresh allreducer's) and rank 0 says so.
inline void zeroOneCheckpointOfAnotherFreezeStartsItsErrorsAtZero(Transport& t) {
  size_t n = 500;
  auto frozenAfter = [](int updates) {
    return gradient_allreducer_cases::options("ring", 1.f, "sampled",
                                              "zero-one-adam: true\nadam-freeze-variance-after: " +
                                                  std::to_string(updates) +
                                                  "\nadam-variance-update-scaler: 1\noptimizer: adam");
  };
  std::vector<float> m = randomValues(n, 9);  // what `source` reads from
  AdamMoments source = momentumOf(m, 0.9f);
  FlatBuffer g(cpuDevice(), Type::float32, n);
  GradientAllreducer first(frozenAfter(5), t, {g.all()}, 5, {}, nullptr, source);
  for(unsigned u = 0; u < 4; ++u)  // update 1 and 3 in 1 bit (variance steps 1, 3)
    reducedAt(t, first, g, randomValues(n, 17 * unsigned(t.rank()) + u), u);
  ModelState saved = gradient_allreducer_cases::savedOnEveryRank(t, first, n);
  ASSERT_EQ(saved.extras.count(kZeroOneServerErrors), 1u);
  GradientAllreducer resumed(frozenAfter(3), t, {g.all()}, 5, {}, nullptr, source);
  resumed.restoreFrom(saved);
  GradientAllreducer fresh(frozenAfter(3), t, {g.all()}, 5, {}, nullptr, source);
  std::vector<float> mine = randomValues(n, 17 * unsigned(t.rank()) + 4);
  std::vector<float> got = reducedAt(t, resumed, g, mine, 4), want = reducedAt(t, fresh, g, mine, 4);
  EXPECT_EQ(got, want);
}

inline void checkpointContinuesExactly(Transport& t) {
  checkpointContinuesExactlyWith(t, "onebit-adam: true\nadam-freeze-variance-after: 2\noptimizer: adam", 5);
  checkpointContinuesExactlyWith(
      t, "zero-one-adam: true\nadam-freeze-variance-after: 5\nadam-variance-update-scaler: 1\noptimizer: adam", 8);
  checkpointContinuesExactlyWith(
      t, "onebit-adam: true\nadam-freeze-variance-after: 2\noptimizer: adam\nonebit-update-direction: true", 6);
}

}  // namespace onebit_cases
}  // namespace marian
