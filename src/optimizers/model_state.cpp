#include "optimizers/model_state.h"

#include <cstring>

#include "common/error.h"

namespace marian {

namespace {

class Writer {
public:
  std::vector<char> bytes;
  template <class T>
  void scalar(T v) {
    append(&v, sizeof(T));
  }
  void string(const std::string& s) {
    scalar<uint64_t>(s.size());
    append(s.data(), s.size());
  }
  void floats(const std::vector<float>& v) {
    scalar<uint64_t>(v.size());
    append(v.data(), v.size() * sizeof(float));
  }

private:
  void append(const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    bytes.insert(bytes.end(), c, c + n);
  }
};

class Reader {
public:
  explicit Reader(const std::vector<char>& bytes) : bytes_(bytes) {}
  template <class T>
  T scalar() {
    T v;
    take(&v, sizeof(T));
    return v;
  }
  std::string string() {
    std::string s(size_t(scalar<uint64_t>()), '\0');
    take(s.data(), s.size());
    return s;
  }
  std::vector<float> floats() {
    uint64_t n = scalar<uint64_t>();
    ABORT_IF(n > (bytes_.size() - at_) / sizeof(float), "Model state message truncated: {} values announced", n);
    std::vector<float> v(static_cast<size_t>(n));
    take(v.data(), v.size() * sizeof(float));
    return v;
  }

private:
  void take(void* p, size_t n) {
    ABORT_IF(at_ + n > bytes_.size(), "Model state message of {} bytes truncated at {}", bytes_.size(), at_);
    if(n)
      std::memcpy(p, bytes_.data() + at_, n);
    at_ += n;
  }
  const std::vector<char>& bytes_;
  size_t at_ = 0;
};

void writeArrays(Writer& w, const std::map<std::string, std::vector<float>>& arrays) {
  w.scalar<uint64_t>(arrays.size());
  for(const auto& [name, values] : arrays) {
    w.string(name);
    w.floats(values);
  }
}

std::map<std::string, std::vector<float>> readArrays(Reader& r) {
  std::map<std::string, std::vector<float>> arrays;
  for(uint64_t i = 0, count = r.scalar<uint64_t>(); i < count; ++i) {
    std::string name = r.string();
    arrays[name] = r.floats();
  }
  return arrays;
}

}  // namespace

std::vector<char> ModelState::pack() const {
  Writer w;
  w.scalar<uint64_t>(n);
  w.scalar<int32_t>(ranks);
  w.scalar<uint64_t>(devices);
  w.floats(values);
  w.floats(smoothed);
  writeArrays(w, optimizer);
  w.scalar<uint64_t>(optimizerSteps.size());
  for(const auto& [range, steps] : optimizerSteps) {
    w.scalar<uint64_t>(range.offset);
    w.scalar<uint64_t>(range.size);
    w.scalar<uint64_t>(steps);
  }
  writeArrays(w, extras);
  w.scalar<uint64_t>(counters.size());
  for(const auto& [name, value] : counters) {
    w.string(name);
    w.scalar<uint64_t>(value);
  }
  return std::move(w.bytes);
}

ModelState ModelState::unpack(const std::vector<char>& bytes) {
  Reader r(bytes);
  ModelState s;
  s.n = size_t(r.scalar<uint64_t>());
  s.ranks = r.scalar<int32_t>();
  s.devices = size_t(r.scalar<uint64_t>());
  s.values = r.floats();
  s.smoothed = r.floats();
  s.optimizer = readArrays(r);
  for(uint64_t i = 0, count = r.scalar<uint64_t>(); i < count; ++i) {
    Range range;
    range.offset = size_t(r.scalar<uint64_t>());
    range.size = size_t(r.scalar<uint64_t>());
    s.optimizerSteps.push_back({range, r.scalar<uint64_t>()});
  }
  s.extras = readArrays(r);
  for(uint64_t i = 0, count = r.scalar<uint64_t>(); i < count; ++i) {
    std::string name = r.string();
    s.counters[name] = r.scalar<uint64_t>();
  }
  return s;
}

void ModelState::merge(ModelState&& part, Range range) {
  ABORT_IF(part.n != n, "Merging the state of a model of {} parameters into one of {}", part.n, n);
  auto mergeArray = [&](std::vector<float>& mine, std::vector<float>& theirs) {
    if(theirs.empty())
      return;
    if(mine.empty()) {
      mine = std::move(theirs);
      return;
    }
    ABORT_IF(mine.size() != n || theirs.size() != n || range.end() > n,
             "Merging a shard state [{}, {}) of arrays of {} and {} values", range.offset, range.end(), theirs.size(),
             mine.size());
    std::copy(theirs.begin() + long(range.offset), theirs.begin() + long(range.end()), mine.begin() + long(range.offset));
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

}  // namespace marian
