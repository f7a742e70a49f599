#include "training/graph_groups/lookup_rows_apart.h"

#include <algorithm>
#include <numeric>

#include "comm/allreduce/algorithms.h"
#include "comm/allreduce/row_allgather.h"
#include "comm/allreduce/sparse_ops.h"
#include "common/logging.h"
#include "tensors/kernels.h"

namespace marian {

LookupRowsApart::LookupRowsApart(const Parameters& layout, std::vector<size_t> tables, size_t devices,
                                 Transport& transport)
    : layout_(layout), transport_(transport), tables_(std::move(tables)), rows_(devices), apart_(devices) {
  // the tables are taken end to end, in rows of their common width
  std::sort(tables_.begin(), tables_.end(),
            [&](size_t a, size_t b) { return layout_.entries()[a].offset < layout_.entries()[b].offset; });
  for(size_t table : tables_)
    width_ = std::gcd(width_, size_t(layout_.entries()[table].shape.back()));
  asRows_ = createRowAllgather(transport_, width_);
  whole_ = createAllreduce("ring", transport_, AllreduceSettings());
}

Tensor LookupRowsApart::rowsOf(size_t d, Device device, size_t param) {
  const Parameters::Entry& e = layout_.entries()[param];
  std::unique_ptr<FlatBuffer>& buffer = rows_[d][param];
  if(!buffer)
    buffer = std::make_unique<FlatBuffer>(device, Type::float32, e.shape.elements());
  Tensor rows = buffer->all().reshaped(e.shape);
  kernels::fill(rows, 0.f);
  apart_[d].push_back(param);
  return rows;
}

void LookupRowsApart::reduceInto(const std::vector<Tensor>& gradShards, const std::vector<Range>& shardRanges,
                               const std::vector<char>& active) {
  std::vector<float> sums;    // this rank's: the tables end to end
  std::vector<size_t> bases;  // where each table starts in `sums`
  for(size_t table : tables_) {
    bases.push_back(sums.size());
    sums.resize(sums.size() + layout_.entries()[table].shape.elements(), 0.f);
    for(size_t d = 0; d < rows_.size(); ++d)
      if(active[d] && std::find(apart_[d].begin(), apart_[d].end(), table) != apart_[d].end()) {
        std::vector<float> part = kernels::toHost(rows_[d][table]->all());
        for(size_t i = 0; i < part.size(); ++i)
          sums[bases.back() + i] += part[i];
      }
  }
  for(auto& a : apart_)
    a.clear();
  size_t width = width_;
  std::vector<size_t> rows;  // those that hold a value
  for(size_t row = 0; row * width < sums.size(); ++row)
    if(std::any_of(sums.begin() + long(row * width), sums.begin() + long((row + 1) * width),
                   [](float v) { return v != 0.f; }))
      rows.push_back(row);
  float lookedUp = float(rows.size()), tableRows = float(sums.size() / width);  // whole numbers below 2^24
  transport_.allreduceSum(&lookedUp, 1, transport_.peerTimeout(), "the count of rows looked up");
  // bytes each rank receives: (P-1)/P of every rank's rows with their indices, or 2(P-1)/P of the tables
  bool asRows = double(lookedUp) * double(width + 1) < 2.0 * double(tableRows) * double(width);
  SparseVector summed;  // over ranks, indices into `sums`
  if(asRows) {
    SparseVector mine;
    for(size_t row : rows)
      for(size_t i = row * width; i < (row + 1) * width; ++i)
        if(sums[i] != 0.f) {
          mine.indices.push_back(uint32_t(i));
          mine.values.push_back(sums[i]);
        }
    summed = asRows_->reduce(mine, sums.size()).sparse;
  } else {
    whole_->sumDense(sums);
    for(size_t i = 0; i < sums.size(); ++i)
      if(sums[i] != 0.f) {
        summed.indices.push_back(uint32_t(i));
        summed.values.push_back(sums[i]);
      }
  }
  for(size_t e = 0, t = 0; e < summed.size(); ++e) {  // into the flat layout (tables by offset)
    while(t + 1 < bases.size() && summed.indices[e] >= bases[t + 1])
      ++t;
    summed.indices[e] = uint32_t(layout_.entries()[tables_[t]].offset + summed.indices[e] - bases[t]);
  }
  if(transport_.rank() == 0 && !logged_[asRows]) {
    logged_[asRows] = true;
    std::string names;
    for(size_t table : tables_)
      names += (names.empty() ? "" : ", ") + layout_.entries()[table].name;
    LOG(info, "[training] Embedding lookups of {} are summed apart after backward, {} ({} of {} rows looked up over "
              "the ranks in this update); the rest of their gradient in its bucket during backward",
        names, asRows ? "as rows (an index a row)" : "as a dense allreduce of the tables", lookedUp, tableRows);
  }
  for(size_t k = 0; k < gradShards.size(); ++k) {
    Range r = shardRanges[k];
    SparseVector part = sliceFrom(summed, uint32_t(r.offset), uint32_t(r.end()));
    kernels::scatterAdd(gradShards[k], part.indices, part.values);
  }
}

}  // namespace marian
