#pragma once
// defines: marian::ShardLayout — which node serves which part of the flat parameter vector:
// uniform over nodes, then each node's part uniform over its devices (seed 004 §3.6: the
// network, not the update, is the bottleneck, so nodes get equal parts).
#include <cstddef>
#include <utility>

namespace marian {

struct ShardLayout {
  size_t total = 0;
  int nodes = 1;

  // [offset, offset + size) of node n's shard
  std::pair<size_t, size_t> node(int n) const {
    size_t begin = total * size_t(n) / size_t(nodes), end = total * size_t(n + 1) / size_t(nodes);
    return {begin, end - begin};
  }
};

}  // namespace marian
