#include "graph/parameters.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>

#include "common/fnv.h"
#include "common/not_finite.h"
#include "common/npz.h"
#include "tensors/backend.h"
#include "tensors/kernels.h"

namespace marian {

Parameters::Parameters(Device device, uint64_t seed) : device_(device), seed_(seed) {}

size_t Parameters::declare(const std::string& name, const Shape& shape, const Initializer& init) {
  auto it = byName_.find(name);
  if(it != byName_.end()) {
    const Entry& e = entries_[it->second];
    ABORT_IF(e.shape != shape, "Parameter '{}' declared with shape {} but exists with shape {}",
             name, shape.toString(), e.shape.toString());
    return it->second;
  }
  ABORT_IF(shape.elements() == 0, "Parameter '{}' has empty shape {}", name, shape.toString());
  entries_.push_back({name, shape, 0, init});
  byName_[name] = entries_.size() - 1;
  return entries_.size() - 1;
}

size_t Parameters::index(const std::string& name) const {
  auto it = byName_.find(name);
  ABORT_IF(it == byName_.end(), "No parameter named '{}'", name);
  return it->second;
}

void Parameters::allocate() {
  if(allocated())
    return;
  // Keep the values of parameters laid out before; they move to their new offsets.
  std::map<std::string, std::vector<float>> kept;
  for(size_t i = 0; i < layoutSize_; ++i)
    kept[entries_[i].name] = kernels::toHost(value(i));

  std::vector<size_t> order(entries_.size());
  for(size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return entries_[a].name < entries_[b].name; });
  size_t offset = 0;
  for(size_t i : order) {
    entries_[i].offset = offset;
    offset += entries_[i].shape.elements();
  }
  // A mistyped dimension (--dim-emb 2000000000 is refused by its range, 65536 x a large
  // vocabulary is not) must be an error naming the size, not an allocation the kernel kills.
  double bytes = 2.0 * double(offset) * sizeof(float);  // values and (once trained) gradients
  double memory = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
  ABORT_IF(device_.type == DeviceType::cpu && memory > 0 && bytes > memory,
           "The model has {} parameters, {} GB for their values and gradients on one device, more than this "
           "machine's {} GB of memory: check --dim-emb, --dim-vocabs, --transformer-dim-ffn, --dim-rnn and the depths",
           offset, formatNumber("%.1f", bytes / 1e9), formatNumber("%.1f", memory / 1e9));
  values_ = std::make_unique<FlatBuffer>(device_, Type::float32, offset);
  grads_.reset();  // made on first use: a graph that only infers (decoding, validation) has none
  layoutSize_ = entries_.size();

  for(size_t i = 0; i < entries_.size(); ++i) {
    Entry& e = entries_[i];
    auto k = kept.find(e.name);
    std::vector<float> host(e.shape.elements());
    if(k != kept.end()) {
      host = std::move(k->second);
    } else {
      // seeded by name: independent of declaration order and of other parameters
      std::mt19937_64 rng(seed_ ^ std::hash<std::string>()(e.name));
      e.init(host, e.shape, rng);
    }
    kernels::fromHost(value(i), host);
  }
}

Tensor Parameters::value(size_t i) const {
  ABORT_IF(i >= layoutSize_, "Parameter '{}' has no memory yet (allocate() first)",
           i < entries_.size() ? entries_[i].name : std::to_string(i));
  return values_->view(entries_[i].offset, entries_[i].shape);
}

Tensor Parameters::grad(size_t i) const {
  ABORT_IF(i >= layoutSize_, "Parameter '{}' has no memory yet (allocate() first)",
           i < entries_.size() ? entries_[i].name : std::to_string(i));
  return gradBuffer().view(entries_[i].offset, entries_[i].shape);
}

FlatBuffer& Parameters::gradBuffer() const {
  if(!grads_)
    grads_ = std::make_unique<FlatBuffer>(device_, Type::float32, values_->size());
  return *grads_;
}

Tensor Parameters::values() const {
  ABORT_IF(!values_, "Parameters are not allocated yet");
  return values_->all();
}

Tensor Parameters::grads() const {
  ABORT_IF(!values_, "Parameters are not allocated yet");
  return gradBuffer().all();
}

void Parameters::zeroGrads() {
  if(!values_)
    return;
  if(grads_)
    backendFor(device_).zero(grads_->all().data, grads_->size() * sizeof(float));
  else
    gradBuffer();  // made zeroed
}

void Parameters::addToNpz(NpzWriter& out, const std::vector<float>& values) const {
  ABORT_IF(values.size() != totalSize(), "{} values for a model of {}", values.size(), totalSize());
  std::vector<size_t> byName(layoutSize_);
  for(size_t i = 0; i < layoutSize_; ++i)
    byName[i] = i;
  std::sort(byName.begin(), byName.end(), [&](size_t a, size_t b) { return entries_[a].name < entries_[b].name; });
  for(size_t i : byName) {
    const Entry& e = entries_[i];
    std::vector<int> dims = e.shape.dims();
    out.add(e.name, std::vector<size_t>(dims.begin(), dims.end()), "<f4", values.data() + e.offset,
            e.shape.elements() * sizeof(float));
  }
}

void Parameters::save(const std::string& path) const {
  NpzWriter out(path);
  addToNpz(out, kernels::toHost(values()));
  out.commit();
}

void Parameters::load(const std::string& path) {
  allocate();
  kernels::fromHost(values(), readValues(path));
}

std::string Parameters::layoutFingerprint() const {
  Fnv64 h;
  std::vector<const Entry*> byOffset;
  for(const Entry& e : entries_)
    byOffset.push_back(&e);
  std::sort(byOffset.begin(), byOffset.end(), [](const Entry* a, const Entry* b) { return a->offset < b->offset; });
  for(const Entry* e : byOffset)
    h.add(e->name + e->shape.toString() + "@" + std::to_string(e->offset) + ";");
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h.value);
  return hex;
}

std::vector<float> Parameters::readValues(const std::string& path) const { return readValues(readNpz(path), path); }

std::vector<float> Parameters::readValues(const std::vector<NpzItem>& items, const std::string& path) const {
  ABORT_IF(!allocated(), "Parameters must be allocated before reading '{}'", path);
  return readInto(items, path, std::vector<float>(totalSize()), nullptr);
}

std::vector<std::string> Parameters::loadMatching(const std::string& path) {
  allocate();
  std::vector<std::string> lacking;
  kernels::fromHost(values(), readInto(readNpz(path), path, kernels::toHost(values()), &lacking));
  return lacking;
}

std::vector<float> Parameters::readInto(const std::vector<NpzItem>& items, const std::string& path,
                                        std::vector<float> flat, std::vector<std::string>* lacking) const {
  std::map<std::string, const NpzItem*> found;
  for(const NpzItem& item : items)
    found[item.name] = &item;
  for(size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    auto it = found.find(e.name);
    if(it == found.end() && lacking) {
      lacking->push_back(e.name);
      continue;
    }
    ABORT_IF(it == found.end(), "Model file '{}' has no parameter '{}' (shape {})", path, e.name,
             e.shape.toString());
    const NpzItem& item = *it->second;
    std::vector<int> dims = e.shape.dims();
    std::vector<size_t> expected(dims.begin(), dims.end());
    // Leading 1s do not matter: Marian writes a bias of [n] as (1, n).
    auto strip = [](std::vector<size_t> d) {
      while(d.size() > 1 && d.front() == 1)
        d.erase(d.begin());
      return d;
    };
    if(strip(item.shape) != strip(expected)) {
      std::string got = "(";
      for(size_t d : item.shape)
        got += std::to_string(d) + ",";
      ABORT("Model file '{}': parameter '{}' has shape {}) but the model needs {}", path, e.name,
            got, e.shape.toString());
    }
    ABORT_IF(item.descr != "<f4", "Model file '{}': parameter '{}' has type '{}' but must be float32 ('<f4')",
             path, e.name, item.descr);
    std::memcpy(flat.data() + e.offset, item.bytes.data(), item.bytes.size());
    std::string notFinite = firstNotFinite(flat.data() + e.offset, item.bytes.size() / sizeof(float), e.name);
    ABORT_IF(!notFinite.empty(), "Model file '{}': {}: the model is broken (saved from a run that diverged?)", path,
             notFinite);
  }
  return flat;
}

}  // namespace marian
