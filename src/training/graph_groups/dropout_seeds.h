#pragma once
// defines: the seeds of the dropout masks — per batch and device, then per --optimizer-delay
// piece — functions of the run's seed, the update, the device and the piece only, so that a
// resumed run draws the masks the uninterrupted one drew, whatever the number of threads. The
// device is its index in the job (rank x devices a rank + the rank's device): every device of
// every rank draws its own masks, as Marian's, whose generators differ per device and process.
#include <cstddef>
#include <cstdint>

namespace marian {

inline uint64_t batchRandomSeed(uint64_t seed, uint64_t update, size_t device) {
  // devices past 130 (a job of many nodes) add a large odd multiple, so that no two updates and
  // devices share a seed; below, the seeds runs have always drawn
  return (seed * 1000003ull + update) * 131ull + device % 131 + (device / 131) * 0xD1B54A32D192ED03ull;
}
// The job's index of device d of a rank's n.
inline size_t jobDevice(int rank, size_t n, size_t d) { return size_t(rank) * n + d; }

// Piece p of the mini-batches one device sums into one update; piece 0 keeps the batch's seed.
inline uint64_t pieceRandomSeed(uint64_t batchSeed, size_t piece) {
  return batchSeed + piece * 0x9E3779B97F4A7C15ull;
}

}  // namespace marian
