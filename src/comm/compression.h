#pragma once
// defines: marian::Compression — how a rank (a parameter-server client, or a rank of sync-SGD)
// compresses what it sends, read once from the options both paths share:
// - the kept fraction and its warm-up (--grad-dropping-warmup: exponential from 1 down to the
//   target over W steps, as Marian's dropping and DGC's sparsity warm-up do),
// - DGC's momentum correction and factor masking (--grad-dropping-momentum, Lin et al. 2018),
// - DGC's local clipping (--compression-clip-norm C: a rank's gradient is clipped to
//   C / sqrt(ranks) before it joins the residual),
// - local gradients (Aji, Heafield & Bogoychev 2019, --local-gradients): besides the global
//   sparse sum, a rank applies its own gradient's unsent part, so the ranks' copies drift apart
//   and are averaged every --local-average-freq updates; validation and saves use their mean
//   without changing them, and checkpoints keep every rank's copy.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/error.h"
#include "common/options.h"
#include "tensors/tensor.h"

namespace marian {

// What a rank adds to the global sparse sum before its optimizer step (Aji et al. 2019, §3):
//   partial: its own gradient in place of what it sent of it: sum - sent + own = sum + the change
//            of its residual (each of its gradients applied once locally, and later globally
//            what it still sends);
//   sum:     its whole own gradient on top of the sum (what it sent counts twice locally).
enum class LocalGradients { off, partial, sum };

struct Compression {
  double keep = 1.0;          // the kept fraction after the warm-up
  uint64_t warmup = 0;        // steps over which the kept fraction falls from 1 to keep
  float momentum = 0.f;       // DGC momentum correction (0: plain residuals)
  float clipNorm = 0.f;       // DGC local clipping (0: off)
  LocalGradients local = LocalGradients::off;
  uint64_t averageFreq = 0;   // updates between averagings of the ranks' copies (0: never)
  bool averageMoments = true; // whether averaging includes the optimizer's moments

  bool compresses() const { return keep < 1.0; }

  // The kept fraction at step `step` (0-based): keep^(step / warmup) during the warm-up.
  double keepAt(uint64_t step) const {
    if(keep >= 1.0 || warmup == 0 || step >= warmup)
      return keep;
    return std::pow(keep, double(step) / double(warmup));
  }

  // How many of n values a rank sends at step `step`; kept(n, f): when the fraction is f.
  size_t keptOf(size_t n, uint64_t step) const { return kept(n, keepAt(step)); }
  static size_t kept(size_t n, double fraction) {
    return std::max<size_t>(1, size_t(std::llround(fraction * double(n))));
  }

  // DGC's local clipping (when clipNorm > 0) of `part`, which holds `share` of a rank's gradient
  // values on `ranks` ranks: to the norm C / sqrt(ranks), times sqrt(share) when the gradient is
  // clipped in parts (buckets).
  void clipLocally(Tensor part, int ranks, double share) const;

  // keep: the kept fraction the caller's scheme reads (--compression-density for sync-SGD,
  // 1 - --grad-dropping-rate for the parameter server).
  static Compression fromOptions(const Options& o, double keep) {
    Compression c;
    c.keep = keep;
    c.warmup = uint64_t(o.get<int>("grad-dropping-warmup"));
    c.momentum = o.get<float>("grad-dropping-momentum");
    c.clipNorm = o.get<float>("compression-clip-norm");
    std::string local = o.get<std::string>("local-gradients");
    if(local == "partial")
      c.local = LocalGradients::partial;
    else if(local == "sum")
      c.local = LocalGradients::sum;
    c.averageFreq = uint64_t(o.get<int>("local-average-freq"));
    c.averageMoments = o.get<std::string>("local-average-state") == "all";
    return c;
  }
};

}  // namespace marian
