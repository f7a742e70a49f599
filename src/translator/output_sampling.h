#pragma once
// defines: marian::OutputSampling — Marian's --output-sampling: each step's log-probabilities of a
// hypothesis pruned (full: none; topk K; nucleus P: the most probable words whose mass before them
// is at most P; epsilon E: the words of probability at least E, or the best), renormalized,
// divided by a temperature, with Gumbel noise added and renormalized again, so that beam search's
// best continuation is a sample of that distribution (beam 1; more beams: stochastic beam search,
// as Marian's). The noise is a hash of (seed, batch, step, row, word), each mixed in by a 64-bit
// finaliser (splitmix64) so that no two batches, steps or rows share draws whatever the seed: the
// same command on a file gives the same samples on any number of threads.
#include <cstdint>
#include <string>
#include <vector>

namespace marian {

class OutputSampling {
public:
  // Marian's values: [] (off), [full [T]], [topk [K [T]]], [nucleus [P [T]]], [epsilon [E [T]]]
  // (defaults K 10, P 0.9, E 0.02, T 1), and its old 0 (off) and 1 (full).
  explicit OutputSampling(const std::vector<std::string>& values = {});
  bool on() const { return method_ != Method::off; }
  std::string describe() const;
  // The draws of a batch (its place in the whole input) and of one of its steps.
  static uint64_t batchKey(uint64_t seed, uint64_t batch);
  static uint64_t stepKey(uint64_t batchKey, int step);
  // A row of log-probabilities [vocab] in place, as sampling changes it: the row'th hypothesis of
  // the step `stepKey`; `forbidden` (<unk> unless allowed; -1: none) is never kept, so that a
  // pruned row keeps a word beam search may choose (Marian keeps <unk> and then drops it).
  void apply(float* logProbs, size_t vocab, uint64_t stepKey, size_t row, int forbidden = -1) const;

private:
  enum class Method { off, full, topk, nucleus, epsilon };
  Method method_ = Method::off;
  float param_ = 0.f, temperature_ = 1.f;
};

// A standard Gumbel draw, -log(-log(u)), from a uniform u in (0, 1) of a 32-bit hash.
float gumbelOf(uint32_t hash);

}  // namespace marian
