#pragma once
// defines: marian::ChunkTopkMean — the mean over ranks of a dense vector of which each rank sends
// only its largest values, chunk by chunk, in 1 or 2 bits each (SparseLoCo's pseudo-gradients,
// Sarfi et al. 2025: top-k of each chunk, 2-bit values, all-gathered). The vector is cut into
// chunks (the caller's starts: every parameter's values in blocks of kChunk); of a chunk of size s
// the keptIn(s, density) values largest in magnitude go on the wire, each as its offset in the
// chunk (kOffsetBits bits) and a code: a sign bit, and with 2 bits a bit choosing one of the
// chunk's two magnitudes (the mean |x| of the kept values below their mean |x|, and of those at
// or above it); with 1 bit the one magnitude is the kept values' mean |x|. Each magnitude is the
// least-squares value for its group, so the error's norm never exceeds x's (as 1 bit's mean-abs
// scale, onebit.h); a single small value of a group may be sent larger than it is. Every rank's
// message goes once around the ring (an allgather, P-1 steps) and every rank decodes and adds them
// in rank order: the same mean on every rank. Bytes sent per rank and call:
//   (P-1) x sum over chunks of (4 x 2^(bits-1) + ceil(kept x (kOffsetBits + bits) / 8)),
// about (P-1) x density x n x (12 + bits) / 8: unlike an allreduce, it grows with P.
#include <string>
#include <vector>

#include "comm/allreduce/allreduce.h"

namespace marian {

class ChunkTopkMean : public Allreduce {
public:
  static constexpr size_t kChunk = 4096;
  static constexpr int kOffsetBits = 12;  // log2(kChunk)

  // chunkStarts: sorted, 0 first, no chunk longer than kChunk; density in (0, 1]; bits 1 or 2.
  ChunkTopkMean(Transport& transport, size_t n, std::vector<size_t> chunkStarts, float density, int bits);
  std::string name() const override { return "chunk-topk"; }
  AllreduceResult reduce(const SparseVector& local, size_t n, size_t k) override;  // an error: dense only

  // x (n values): this rank's vector, which becomes the mean over ranks of what every rank's
  // message stands for; error (n): x - what this rank's message stands for. Collective.
  void average(std::vector<float>& x, std::vector<float>& error);

  // The values of a chunk of `size` sent: ceil(density x size), at least 1 (--outer-density's count,
  // in chunks or over the whole vector).
  static size_t keptIn(size_t size, float density);
  // One rank's message for x (n values), with error[i] = x[i] - what it stands for; and back,
  // added times weight into out (a message of another size, an offset outside its chunk or a
  // magnitude that is not finite and >= 0 is an error).
  static std::vector<char> compress(const float* x, size_t n, const std::vector<size_t>& chunkStarts, float density,
                                    int bits, float* error);
  static void decompress(const std::vector<char>& bytes, size_t n, const std::vector<size_t>& chunkStarts,
                         float density, int bits, float* out, float weight);
  // The size of that message in bytes.
  static size_t messageBytes(size_t n, const std::vector<size_t>& chunkStarts, float density, int bits);

private:
  size_t n_;
  std::vector<size_t> chunkStarts_;
  float density_;
  int bits_;
};

}  // namespace marian
