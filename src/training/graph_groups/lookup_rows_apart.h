#pragma once
// defines: marian::LookupRowsApart — with dense sums in buckets, the embedding lookups of a table
// whose gradient also comes from elsewhere (a tied output layer, whose backward comes first) are
// added apart during backward (ExpressionGraph::LookupsApart), so that the table's bucket can go
// early; after backward only the rows the batch looked up are summed: over the node's devices,
// then over ranks as rows (an index a row, gathered around the ring and added in rank order, the
// same on every rank) while that moves fewer bytes than a ring over the tables whole, otherwise
// the tables whole; an idle rank takes part with zeros.
#include <map>
#include <memory>
#include <vector>

#include "comm/allreduce/allreduce.h"
#include "common/equal_split.h"
#include "graph/parameters.h"
#include "tensors/arena.h"

namespace marian {

class LookupRowsApart {
public:
  // tables: the parameters whose lookups go apart; devices: the node's, which compute.
  LookupRowsApart(const Parameters& layout, std::vector<size_t> tables, size_t devices, Transport& transport);

  // Device d's buffer (zeros) for the rows that lookups of parameter `param` add apart (on d's
  // compute thread, during its backward).
  Tensor rowsOf(size_t d, Device device, size_t param);
  // After every device's backward: the rows summed over the active devices and over ranks, added
  // into gradShards[k] (the node's reduced gradient of range shardRanges[k]).
  void reduceInto(const std::vector<Tensor>& gradShards, const std::vector<Range>& shardRanges,
                  const std::vector<char>& active);

private:
  const Parameters& layout_;
  Transport& transport_;
  std::vector<size_t> tables_;  // by offset
  size_t width_ = 0;            // the tables' rows' common width
  // per device: the buffers of the rows lookups add apart, by parameter; the parameters put
  // apart in this update
  std::vector<std::map<size_t, std::unique_ptr<FlatBuffer>>> rows_;
  std::vector<std::vector<size_t>> apart_;
  std::unique_ptr<Allreduce> asRows_, whole_;  // over ranks: as rows, or the tables whole
  bool logged_[2] = {false, false};            // by path (whole, rows)
};

}  // namespace marian
