#pragma once
// defines: marian::ShardLayout — which node serves which part of the flat parameter vector:
// equal parts over nodes (seed 004 §3.6: the network, not the update, is the bottleneck, so nodes
// get equal parts); ServerShard splits a node's part equally over its devices' threads.
#include "common/equal_split.h"

namespace marian {

struct ShardLayout {
  size_t total = 0;
  int nodes = 1;

  Range node(int n) const { return equalPart(total, size_t(n), size_t(nodes)); }
};

}  // namespace marian
