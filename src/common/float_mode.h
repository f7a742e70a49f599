#pragma once
// defines: flushDenormalsToZero
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace marian {

// Flushes denormal floats to zero on the calling thread (x86 FTZ and DAZ). Gradients and Adam's
// second moments drift into the denormal range, where every operation is ~100x slower; GPUs
// and PyTorch flush them too. Every thread that runs CPU kernels calls this once.
inline void flushDenormalsToZero() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_setcsr(_mm_getcsr() | 0x8040);  // FTZ (bit 15) | DAZ (bit 6)
#endif
}

}  // namespace marian
