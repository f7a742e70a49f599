#pragma once
// The cases of the compressed outer exchanges of local steps (training/exchange/outer_exchange.h:
// --outer-quantize-bits, --outer-density), written once against Transport and run on each rank:
// under mpirun by test_gradient_allreducer_mpi.cpp, on threads by
// test_gradient_allreducer_in_process.cpp. The quantized mean and both sides' errors against
// double over three calls (8, 4 and 2 bits, chunks that end inside a block), with the bytes of
// every call; the 2-bit code by hand and its error on normal values; the 1-bit mean with its
// segments cut at the fragment's parameters; the sparse exchange against its definition in
// double (each rank's top-k of what it holds, the rest kept); SparseLoCo's chunked top-k in 2 and
// 1 bits with a decayed accumulator against its definition in double, with its bytes, and its
// messages' refusals; through OuterRounds, a checkpoint of the errors continues exactly, and on
// another rank count rank 0 carries what every saved rank held back (one fragment, and 3
// fragments each with its own exchange).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>

#include "comm/allreduce/allreduce_reference.h"
#include "comm/allreduce/chunk_topk_mean.h"
#include "comm/allreduce/quantized.h"
#include "comm/allreduce/segments.h"
#include "comm/in_process_transport.h"
#include "comm/transport.h"
#include "gradient_allreducer_cases.h"
#include "random_values.h"
#include "outer_rounds_helpers.h"
#include "training/exchange/outer_rounds.h"

namespace marian {
namespace outer_exchange_cases {

// a rank's input of a call: standard normal, a few values 50x larger (a block's scale is its largest)
inline std::vector<float> inputOf(int rank, int call, size_t n) {
  std::vector<float> v = randomValues(n, unsigned(1000 * call + rank + 1));
  for(size_t i = size_t(rank + call) % 97; i < n; i += 97)
    v[i] *= 50.f;
  return v;
}

// every rank's inputs of a call
inline std::vector<std::vector<float>> inputsOf(int ranks, int call, size_t n) {
  std::vector<std::vector<float>> inputs;
  for(int r = 0; r < ranks; ++r)
    inputs.push_back(inputOf(r, call, n));
  return inputs;
}

// The bytes this rank sends in one compressed mean (compressed_mean.h), chunk j encoded in
// chunkBytes(j): every other chunk to its owner, then its own chunk's mean to every other rank.
inline uint64_t compressedMeanBytesSent(Transport& t, const std::function<uint64_t(int)>& chunkBytes) {
  uint64_t sent = 0;
  for(int j = 0; j < t.size(); ++j)
    sent += j != t.rank() ? chunkBytes(j) + chunkBytes(t.rank()) : 0;
  return sent;
}

inline void expectWithin(const std::vector<float>& got, const std::vector<double>& want, double tolerance,
                         const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for(size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tolerance) << what << " at " << i;
}

// n = 1001 values: chunks of 333-334 on 3 ranks, 250-251 on 4, each ending inside a block of 256.
inline void quantizedMeanMatchesDouble(Transport& t) {
  const size_t n = 1001;
  const int P = t.size();
  for(int bits : {8, 4, 2}) {
    SCOPED_TRACE(std::to_string(bits) + " bits");
    QuantizedAllreduce quantized(t, n, bits);
    QuantizedReference reference(n, size_t(P), bits, QuantizedAllreduce::kBlock);
    uint64_t perCall = compressedMeanBytesSent(t, [&](int j) {
      return QuantizedAllreduce::encodedBytes(quantized.chunk(j).size, bits, QuantizedAllreduce::kBlock);
    });
    quantized.takeBytes();
    for(int call = 0; call < 3; ++call) {
      SCOPED_TRACE("call " + std::to_string(call));
      std::vector<std::vector<float>> inputs = inputsOf(P, call, n);
      std::vector<double> want = reference.average(inputs);
      std::vector<float> values = inputs[size_t(t.rank())];
      quantized.averageCompressed(values);
      // float rounding of the scales and the means only: far below a code's step (the largest
      // value over 7 or 127, here about 150 / 127)
      expectWithin(values, want, 1e-4, "the mean");
      expectWithin(quantized.workerError(), reference.workerError(size_t(t.rank())), 1e-4, "the worker error");
      Range mine = quantized.chunk(t.rank());
      expectWithin(quantized.serverError(),
                   std::vector<double>(reference.serverError().begin() + long(mine.offset),
                                       reference.serverError().begin() + long(mine.end())),
                   1e-4, "the server error");
    }
    AllreduceBytes bytes = quantized.takeBytes();
    EXPECT_EQ(bytes.sent, 3 * perCall);
    // n, n/2 or n/4 bytes and a scale a block, against 2 (P-1)/P 4n of a dense ring
    double ofDense = bits == 8 ? 0.27 : bits == 4 ? 0.14 : 0.07;
    EXPECT_LT(double(perCall), ofDense * 2.0 * double(P - 1) / double(P) * 4.0 * double(n) + 64.0 * P);
  }
}

// 2 bits by hand: the block [1, -2, 0.5, 3] has the root mean square 1.88746, so the split at
// 0.9816 x 1.88746 = 1.85273 puts 1 and 0.5 on the inner level (0.4528), -2 and 3 on the outer
// (1.5104); the least-squares scale (1 x 0.4528 + 2 x 1.5104 + 0.5 x 0.4528 + 3 x 1.5104) /
// (2 x 0.4528^2 + 2 x 1.5104^2) = 1.65529. The codes (bit 0 outer, bit 1 negative) 0, 3, 0, 1 in
// one byte, the first lowest: 0 + 3x4 + 0x16 + 1x64 = 76.
inline void twoBitsByHand() {
  const std::vector<float> x = {1.f, -2.f, 0.5f, 3.f};
  std::vector<float> error(4);
  std::vector<char> bytes = QuantizedAllreduce::quantize(x.data(), 4, 2, 4, error.data());
  ASSERT_EQ(bytes.size(), 5u);  // a scale and a byte of codes
  float scale;
  std::memcpy(&scale, bytes.data(), sizeof(float));
  EXPECT_NEAR(scale, 1.6552871, 1e-6);
  EXPECT_EQ(static_cast<unsigned char>(bytes[4]), 76u);
  std::vector<float> out(4, 0.f);
  QuantizedAllreduce::dequantize(bytes, 4, 2, 4, out.data(), 1.f);
  const std::vector<double> want = {0.7495140, -2.5001457, 0.7495140, 2.5001457};
  for(size_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(out[i], want[i], 1e-6) << i;
    EXPECT_NEAR(error[i], x[i] - want[i], 1e-6) << i;
  }
}

// The 2-bit code's squared error on normal values is Lloyd-Max's for 4 levels, 0.1175 of the
// values' (the least-squares scale fits each block of 256 a little better), where a sign and the
// mean magnitude (1 bit) leave 1 - 2/pi = 0.363.
inline void twoBitsErrorIsLloydMaxs() {
  const size_t n = 256 * 64;
  std::vector<float> x = randomValues(n, 7), error(n);
  QuantizedAllreduce::quantize(x.data(), n, 2, QuantizedAllreduce::kBlock, error.data());
  double values = 0, errors = 0;
  for(size_t i = 0; i < n; ++i) {
    values += double(x[i]) * x[i];
    errors += double(error[i]) * error[i];
  }
  EXPECT_GT(errors / values, 0.10);
  EXPECT_LT(errors / values, 0.12);
}

inline Options outerOptions(const std::string& compression) {
  YAML::Node node = YAML::Load("local-steps: 4\nouter-optimizer: nesterov\nouter-learn-rate: 0.7\nouter-momentum: 0.9\n");
  for(const auto& kv : YAML::Load(compression))
    node[kv.first.as<std::string>()] = kv.second;
  return Options(node);
}

// --outer-quantize-bits 1 through createOuterExchange, for the fragment [100, 1101) of a layout
// whose parameters start at 0, 50, 400, 1000 and 1101: against the compressed mean in double with
// the mean-abs scale on the segments written here by hand (the fragment's parameters [0, 300),
// [300, 900), [900, 1001), each in blocks of 256), the errors both sides hold back, and the bytes.
inline void oneBitOuterMeanMatchesDouble(Transport& t) {
  const size_t n = 1001;
  const int P = t.size();
  const std::vector<size_t> segments = {0, 256, 300, 556, 812, 900};
  std::unique_ptr<OuterExchange> exchange =
      createOuterExchange(outerOptions("outer-quantize-bits: 1\n"), t, Range{100, n}, {0, 50, 400, 1000, 1101});
  OneBitReference reference(n, size_t(P), segments, OneBitScale::meanAbs);
  uint64_t perCall = compressedMeanBytesSent(t, [&](int j) {  // a scale a segment of the chunk, a bit a value
    Range c = equalPart(n, size_t(j), size_t(P));
    return uint64_t(4 * segmentsIn(c, segments).size() + (c.size + 7) / 8);
  });
  ChannelBytes before = t.bytes(Channel::outer);
  for(int call = 0; call < 3; ++call) {
    SCOPED_TRACE("call " + std::to_string(call));
    std::vector<std::vector<float>> inputs = inputsOf(P, call, n);
    std::vector<double> want = reference.average(inputs);
    std::vector<float> values = inputs[size_t(t.rank())];
    exchange->average(values);
    expectWithin(values, want, 1e-4, "the mean");
    OuterExchange::HeldBack held = exchange->heldBack();
    expectWithin(held.residual, reference.workerError(size_t(t.rank())), 1e-4, "the worker error");
    Range mine = equalPart(n, size_t(t.rank()), size_t(P));
    std::vector<double> ownerError(n, 0.0);
    std::copy(reference.serverError().begin() + long(mine.offset), reference.serverError().begin() + long(mine.end()),
              ownerError.begin() + long(mine.offset));
    expectWithin(held.ownerError, ownerError, 1e-4, "the owner's error");
  }
  EXPECT_EQ(t.bytes(Channel::outer).sent - before.sent, 3 * perCall);
  // a bit a value and a scale a segment, against 2 (P-1)/P 4n of a dense ring
  EXPECT_LT(double(perCall), 0.04 * 2.0 * double(P - 1) / double(P) * 4.0 * double(n) + 64.0 * P);
}

// Three rounds through OuterRounds with a plain mean step (sgd, lr 1, momentum 0: the start moves
// by minus the mean it receives) against a model in double: sentBy(r, x) is what rank r sends of
// its pseudo-gradient x (round start minus its end), the model keeping what it holds back.
inline void threeRoundsMatchDouble(Transport& t, OuterRounds& rounds, size_t n,
                                   const std::function<std::vector<double>(int, const std::vector<double>&)>& sentBy) {
  const int P = t.size();
  std::vector<double> start(n, 0.0);
  for(int call = 0; call < 3; ++call) {
    SCOPED_TRACE("round " + std::to_string(call));
    std::vector<double> mean(n, 0.0);
    std::vector<float> mine;
    for(int r = 0; r < P; ++r) {
      std::vector<float> delta = inputOf(r, call, n), end(n);
      std::vector<double> x(n);
      for(size_t i = 0; i < n; ++i) {
        end[i] = float(start[i]) - delta[i];
        x[i] = start[i] - double(end[i]);
      }
      if(r == t.rank())
        mine = end;
      std::vector<double> sent = sentBy(r, x);
      for(size_t i = 0; i < n; ++i)
        mean[i] += sent[i] / P;
    }
    for(size_t i = 0; i < n; ++i)
      start[i] -= mean[i];
    endRound(rounds, uint64_t(call), mine);
    expectWithin(mine, start, 1e-4, "the next round's start");
  }
}

// The sparse exchange through OuterRounds with a plain mean step (sgd, lr 1, momentum 0: the
// start moves by minus the mean it receives), against its definition: each rank's x = its
// pseudo-gradient + its residual, the k largest |x| sent, the rest kept; the mean of what was sent.
inline void sparseMeanMatchesDouble(Transport& t) {
  const size_t n = 300, k = 30;  // density 0.1 (0.1f x 300 is 30.0000004: still 30, as in chunks)
  const int P = t.size();
  Options o = outerOptions("outer-density: 0.1\nouter-optimizer: sgd\nouter-learn-rate: 1\nouter-momentum: 0\n"
                           "sparse-allreduce: ring\n");  // a dense name: the sparse sum is dsar-split's
  OuterRounds rounds(o, t, std::vector<float>(n, 0.f));
  std::vector<std::vector<double>> residual(size_t(P), std::vector<double>(n, 0.0));
  threeRoundsMatchDouble(t, rounds, n, [&](int r, const std::vector<double>& delta) {
    std::vector<double>& x = residual[size_t(r)];
    for(size_t i = 0; i < n; ++i)
      x[i] += delta[i];
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return std::fabs(x[a]) > std::fabs(x[b]); });
    std::vector<double> sent(n, 0.0);
    for(size_t j = 0; j < k; ++j) {
      sent[order[j]] = x[order[j]];
      x[order[j]] = 0;
    }
    return sent;
  });
  AllreduceBytes bytes = rounds.takeBytes();
  // pairs, not values: about k of P ranks' 8 bytes each way, far below 2 (P-1)/P 4n a round
  EXPECT_LT(double(bytes.sent), 3 * (2.0 * double(P) * 8.0 * double(k) + 64.0 * P));
}

// SparseLoCo's exchange (--outer-density with --outer-quantize-bits 2 or 1, --outer-error-decay)
// through OuterRounds with a plain mean step, for parameters at 0, 100 and 4500 of 5000 values
// (chunks [0, 100), [100, 4196), [4196, 4500), [4500, 5000): the second parameter cut at 4096),
// against its definition in double: each rank's x = decay x what it held back + its
// pseudo-gradient; of each chunk the ceil(0.05 size) largest |x| sent as a sign and the mean |x|
// of the kept (1 bit) or of the kept below and at or above that mean (2 bits); the rest held back;
// the next start moves by minus the mean over ranks of what they sent. Over three rounds, with
// every rank's residual as the checkpoint holds it and the bytes of the allgather.
inline void chunkTopkMeanMatchesDouble(Transport& t) {
  const size_t n = 5000;
  const double decay = 0.9;
  const std::vector<std::pair<size_t, size_t>> chunks = {{0, 100}, {100, 4196}, {4196, 4500}, {4500, 5000}};
  const std::vector<size_t> keptOf = {5, 205, 16, 25};  // 5% of each, rounded up
  const int P = t.size();
  for(int bits : {2, 1}) {
    SCOPED_TRACE(std::to_string(bits) + " bits");
    Options o = outerOptions("outer-density: 0.05\nouter-quantize-bits: " + std::to_string(bits) +
                             "\nouter-error-decay: 0.9\nouter-optimizer: sgd\nouter-learn-rate: 1\nouter-momentum: 0\n");
    OuterRounds rounds(o, t, std::vector<float>(n, 0.f), {0, 100, 4500});
    rounds.takeBytes();
    std::vector<std::vector<double>> residual(size_t(P), std::vector<double>(n, 0.0));
    uint64_t messageBytes = 0;  // a magnitude or two a chunk, then offset and code bits of the kept
    for(size_t kept : keptOf)
      messageBytes += 4 * (bits == 2 ? 2 : 1) + (kept * (12 + bits) + 7) / 8;
    threeRoundsMatchDouble(t, rounds, n, [&](int r, const std::vector<double>& delta) {
      std::vector<double>& x = residual[size_t(r)];
      for(size_t i = 0; i < n; ++i)
        x[i] = decay * x[i] + delta[i];
      std::vector<double> sent(n, 0.0);
      for(size_t c = 0; c < chunks.size(); ++c) {
        auto [begin, stop] = chunks[c];
        std::vector<size_t> order(stop - begin);
        std::iota(order.begin(), order.end(), begin);
        std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return std::fabs(x[a]) > std::fabs(x[b]); });
        order.resize(keptOf[c]);
        double all = 0, below = 0, above = 0;
        size_t nBelow = 0;
        for(size_t i : order)
          all += std::fabs(x[i]);
        double average = all / double(order.size());
        for(size_t i : order)
          (std::fabs(x[i]) < average ? below : above) += std::fabs(x[i]), nBelow += std::fabs(x[i]) < average;
        for(size_t i : order) {
          double size = bits == 1 ? average
                        : std::fabs(x[i]) < average ? below / double(nBelow)
                                                    : above / double(order.size() - nBelow);
          sent[i] = x[i] < 0 ? -size : size;
          x[i] -= sent[i];
        }
      }
      return sent;
    });
    // every rank's messages pass once around the ring: P-1 of them sent a round
    EXPECT_EQ(rounds.takeBytes().sent, 3 * uint64_t(P - 1) * messageBytes);
    ModelState saved = savedOnEveryRank(t, rounds, n);
    for(int r = 0; r < P; ++r)
      expectWithin(saved.extras.at("outer-residual.rank" + std::to_string(r)), residual[size_t(r)], 1e-4,
                   "rank " + std::to_string(r) + "'s residual");
    // about (P-1) 5% of 14 bits a value, against 2 (P-1)/P 4n a dense ring sends
    EXPECT_LT(double(messageBytes), 0.03 * 4.0 * double(n));
  }
}

// One rank's chunk top-k message decodes to what its errors say it stands for, with the error's
// norm below the values', and a message of another size, an offset outside its chunk or a
// negative magnitude is refused.
inline void chunkTopkMessagesDecodeAndRefuseCorruption() {
  const size_t n = 700;
  const std::vector<size_t> chunks = {0, 300, 310};  // the middle one of 10 values: a single one kept
  std::vector<float> x = randomValues(n, 7);
  for(int bits : {1, 2}) {
    std::vector<float> error(n);
    std::vector<char> message = ChunkTopkMean::compress(x.data(), n, chunks, 0.1f, bits, error.data());
    ASSERT_EQ(message.size(), ChunkTopkMean::messageBytes(n, chunks, 0.1f, bits));
    std::vector<float> decoded(n, 0.f);
    ChunkTopkMean::decompress(message, n, chunks, 0.1f, bits, decoded.data(), 1.f);
    size_t sent = 0;
    double errorNorm = 0, norm = 0;
    for(size_t i = 0; i < n; ++i) {
      ASSERT_NEAR(decoded[i] + error[i], x[i], 1e-6) << i;
      sent += decoded[i] != 0.f;
      errorNorm += double(error[i]) * error[i];
      norm += double(x[i]) * x[i];
    }
    EXPECT_EQ(sent, 30u + 1u + 39u);
    EXPECT_LT(errorNorm, norm) << "least-squares magnitudes: the error's norm below the values'";
    auto refusal = [&](std::vector<char> bad) {
      try {
        ChunkTopkMean::decompress(bad, n, chunks, 0.1f, bits, decoded.data(), 1.f);
      } catch(const Error& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    };
    std::vector<char> shorter(message.begin(), message.end() - 1);
    EXPECT_NE(refusal(shorter).find("expected"), std::string::npos);
    std::vector<char> badOffset = message;  // the first offset of the first chunk: 4095 in 300
    size_t entries = 4 * (bits == 2 ? 2 : 1);
    badOffset[entries] = char(0xff);
    badOffset[entries + 1] = char(badOffset[entries + 1] | 0x0f);
    EXPECT_NE(refusal(badOffset).find("offset 4095 in a chunk of 300"), std::string::npos);
    std::vector<char> negative = message;
    float minus = -1.f;
    std::memcpy(negative.data(), &minus, sizeof(float));
    EXPECT_NE(refusal(negative).find("magnitude -1"), std::string::npos);
  }
}

// Three rounds of a compressed exchange, a checkpoint (gathered on rank 0, read by every rank),
// and the fourth round twice: the uninterrupted OuterRounds and one restored from the checkpoint
// give the same start bitwise; then the same checkpoint resumed on all but the last rank (another
// rank count): rank 0 carries the saved ranks' residuals, the others none.
inline void checkpointContinuesExactly(Transport& t, const std::string& compression) {
  SCOPED_TRACE(compression);
  const size_t n = 600;
  const int P = t.size();
  Options o = outerOptions(compression);
  OuterRounds rounds(o, t, std::vector<float>(n, 0.f));
  std::vector<float> start(n, 0.f);
  auto endOf = [&](int call) {
    std::vector<float> delta = inputOf(t.rank(), call, n), end(n);
    for(size_t i = 0; i < n; ++i)
      end[i] = start[i] - 0.01f * delta[i];
    return end;
  };
  for(int call = 0; call < 3; ++call) {
    start = endOf(call);
    endRound(rounds, uint64_t(call), start);
  }
  ModelState saved = savedOnEveryRank(t, rounds, n);
  ASSERT_EQ(saved.extras.count("outer-residual.rank" + std::to_string(P - 1)), 1u) << "every rank's residual";

  OuterRounds resumed(o, t, std::vector<float>(n, 0.f));
  resumed.restoreFrom(saved);
  std::vector<float> once = endOf(3), again = endOf(3);
  endRound(rounds, 3, once);
  endRound(resumed, 3, again);
  EXPECT_EQ(once, again) << "the restored exchange's round differs";

  // another rank count: the first P-1 ranks of this job read the checkpoint of P
  if(P < 3)
    return;
  InProcessNetwork fewer(P - 1);
  std::vector<std::vector<float>> residualOf(size_t(P - 1));
  std::vector<float> serverErrors;
  if(t.rank() == 0)
    fewer.run([&](Transport& f) {
      OuterRounds smaller(o, f, std::vector<float>(n, 0.f));
      smaller.restoreFrom(saved);
      ModelState again;
      again.n = n;
      again.ranks = f.size();
      smaller.saveTo(again);
      if(f.rank() != 0)
        return;
      for(int r = 0; r < f.size(); ++r)
        residualOf[size_t(r)] = again.extras.at("outer-residual.rank" + std::to_string(r));
      if(again.extras.count("outer-server-error"))
        serverErrors = again.extras.at("outer-server-error");
    });
  if(t.rank() != 0)
    return;
  std::vector<float> want = saved.sumOfExtras("outer-residual.rank", float(P - 1) / float(P));
  ASSERT_EQ(residualOf[0].size(), n);
  for(size_t i = 0; i < n; ++i)
    ASSERT_FLOAT_EQ(residualOf[0][i], want[i]) << "rank 0's residual at " << i;
  for(int r = 1; r < P - 1; ++r)
    for(float v : residualOf[size_t(r)])
      ASSERT_EQ(v, 0.f) << "rank " << r << " holds a residual after a resume on another rank count";
  // the owners' errors, cut into the chunks of P-1 owners and gathered again, are the saved ones
  auto server = saved.extras.find("outer-server-error");
  ASSERT_EQ(server != saved.extras.end(), !serverErrors.empty());
  if(!serverErrors.empty()) {
    EXPECT_EQ(serverErrors, server->second) << "the owners' errors did not come back whole";
  }
}

inline void checkpointsContinueExactly(Transport& t) {
  checkpointContinuesExactly(t, "outer-quantize-bits: 4\n");
  // each fragment's exchange with its own errors, the owners' chunks cut per fragment
  checkpointContinuesExactly(t, "outer-quantize-bits: 4\nouter-fragments: 3\n");
  checkpointContinuesExactly(t, "outer-quantize-bits: 8\n");
  checkpointContinuesExactly(t, "outer-quantize-bits: 2\n");
  checkpointContinuesExactly(t, "outer-quantize-bits: 1\n");
  checkpointContinuesExactly(t, "outer-density: 0.05\nsparse-allreduce: ssar-split\n");
  checkpointContinuesExactly(t, "outer-density: 0.05\nouter-quantize-bits: 2\nouter-error-decay: 0.9\n");
}

}  // namespace outer_exchange_cases
}  // namespace marian
