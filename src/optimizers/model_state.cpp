#include "optimizers/model_state.h"

#include <algorithm>

#include "common/byte_record.h"
#include "common/not_finite.h"

namespace marian {

namespace {

void writeArrays(ByteWriter& w, const std::map<std::string, std::vector<float>>& arrays) {
  w.put<uint64_t>(arrays.size());
  for(const auto& [name, values] : arrays) {
    w.putString(name);
    w.putCounted(values);
  }
}

std::map<std::string, std::vector<float>> readArrays(ByteReader& r) {
  std::map<std::string, std::vector<float>> arrays;
  for(uint64_t i = 0, count = r.get<uint64_t>(); i < count; ++i) {
    std::string name = r.getString();
    arrays[name] = r.getCounted<float>();
  }
  return arrays;
}

}  // namespace

std::vector<char> ModelState::pack() const {
  ByteWriter w;
  w.put<uint64_t>(n);
  w.put<int32_t>(ranks);
  w.put<uint64_t>(devices);
  w.putCounted(values);
  w.putCounted(smoothed);
  writeArrays(w, optimizer);
  w.put<uint64_t>(optimizerSteps.size());
  for(const auto& [range, steps] : optimizerSteps) {
    w.put<uint64_t>(range.offset);
    w.put<uint64_t>(range.size);
    w.put<uint64_t>(steps);
  }
  writeArrays(w, extras);
  w.put<uint64_t>(counters.size());
  for(const auto& [name, value] : counters) {
    w.putString(name);
    w.put<uint64_t>(value);
  }
  return w.take();
}

ModelState ModelState::unpack(const std::vector<char>& bytes) {
  ByteReader r(bytes, "Model state message");
  ModelState s;
  s.n = size_t(r.get<uint64_t>());
  s.ranks = r.get<int32_t>();
  s.devices = size_t(r.get<uint64_t>());
  s.values = r.getCounted<float>();
  s.smoothed = r.getCounted<float>();
  s.optimizer = readArrays(r);
  for(uint64_t i = 0, count = r.get<uint64_t>(); i < count; ++i) {
    Range range;
    range.offset = size_t(r.get<uint64_t>());
    range.size = size_t(r.get<uint64_t>());
    s.optimizerSteps.push_back({range, r.get<uint64_t>()});
  }
  s.extras = readArrays(r);
  for(uint64_t i = 0, count = r.get<uint64_t>(); i < count; ++i) {
    std::string name = r.getString();
    s.counters[name] = r.get<uint64_t>();
  }
  r.expectEnd();
  return s;
}

std::string ModelState::firstNotFinite() const {
  std::string found = marian::firstNotFinite(values, "master_parameters");
  if(found.empty())
    found = marian::firstNotFinite(smoothed, "smoothed_parameters");
  for(auto it = optimizer.begin(); found.empty() && it != optimizer.end(); ++it)
    found = marian::firstNotFinite(it->second, it->first);
  return found;
}

std::vector<float> ModelState::sumOfExtras(const std::string& prefix, float scale) const {
  std::vector<std::pair<uint64_t, const std::string*>> named;  // (number, name)
  for(const auto& [name, array] : extras) {
    std::string number = name.substr(std::min(name.size(), prefix.size()));
    if(name.compare(0, prefix.size(), prefix) == 0 && !number.empty() &&
       number.find_first_not_of("0123456789") == std::string::npos && number.size() < 19)
      named.push_back({std::stoull(number), &name});
  }
  std::sort(named.begin(), named.end());
  std::vector<float> sum;
  for(const auto& [number, name] : named) {
    const std::vector<float>& array = extras.at(*name);
    ABORT_IF(array.size() != n, "The checkpoint's '{}' holds {} values, not the model's {}", *name, array.size(), n);
    sum.resize(n, 0.f);
    for(size_t i = 0; i < n; ++i)
      sum[i] += scale * array[i];
  }
  return sum;
}

void ModelState::merge(ModelState&& part, Range range) {
  ABORT_IF(part.n != n, "Merging the state of a model of {} parameters into one of {}", part.n, n);
  auto mergeArray = [&](std::vector<float>& mine, std::vector<float>& theirs) {
    if(theirs.empty())
      return;
    if(theirs.size() == range.size && range.size != n) {  // cut to its range (cutTo)
      if(mine.empty())
        mine.assign(n, 0.f);
      ABORT_IF(mine.size() != n || range.end() > n, "Merging a shard state [{}, {}) into an array of {} values",
               range.offset, range.end(), mine.size());
      placeRange(mine, range, theirs);
      return;
    }
    if(mine.empty()) {
      mine = std::move(theirs);
      return;
    }
    ABORT_IF(mine.size() != n || theirs.size() != n || range.end() > n,
             "Merging a shard state [{}, {}) of arrays of {} and {} values", range.offset, range.end(), theirs.size(),
             mine.size());
    placeRange(mine, range, rangeOf(theirs, range));
  };
  auto mergeArrays = [&](std::map<std::string, std::vector<float>>& mine, std::map<std::string, std::vector<float>>& theirs) {
    for(auto& [name, values] : theirs)
      mergeArray(mine[name], values);
  };
  mergeArray(values, part.values);
  mergeArray(smoothed, part.smoothed);
  mergeArrays(optimizer, part.optimizer);
  mergeArrays(extras, part.extras);
  optimizerSteps.insert(optimizerSteps.end(), part.optimizerSteps.begin(), part.optimizerSteps.end());
  for(auto& [name, value] : part.counters)
    counters[name] = value;
}

void ModelState::cutTo(Range range) {
  ABORT_IF(range.end() > n, "Cutting a state of {} parameters to [{}, {})", n, range.offset, range.end());
  auto cut = [&](std::vector<float>& array) {
    if(array.size() == n && range.size != n)
      array = rangeOf(array, range);
  };
  cut(values);
  cut(smoothed);
  for(auto& [name, array] : optimizer)
    cut(array);
  for(auto& [name, array] : extras)
    cut(array);
}

void ModelState::startOptimizerAfresh() {
  if(!smoothed.empty())
    values = smoothed;
  optimizer.clear();
  uint64_t steps = 0;
  for(const auto& [range, shardSteps] : optimizerSteps)
    steps = std::max(steps, shardSteps);
  counters[kOptimizerStatisticsFrom] = steps;
}

}  // namespace marian
