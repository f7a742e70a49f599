#pragma once
// defines: marian::Parameters — named parameters in ONE flat value buffer and ONE flat gradient
// buffer with the same layout (sorted by name, so every process lays them out identically);
// a shard of the model is an (offset, size) range of these buffers.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/npz.h"
#include "graph/initializers.h"
#include "tensors/arena.h"

namespace marian {

class Parameters {
public:
  struct Entry {
    std::string name;
    Shape shape;
    size_t offset = 0;  // into the flat buffers, valid once allocated
    Initializer init;
  };

  explicit Parameters(Device device, uint64_t seed = 1234);

  // Declares a parameter on first use; later calls with the same name must give the same shape.
  // Returns its index, stable for the lifetime of this object.
  size_t declare(const std::string& name, const Shape& shape, const Initializer& init);
  bool contains(const std::string& name) const { return byName_.count(name) != 0; }
  size_t index(const std::string& name) const;

  // Lays out every declared parameter (sorted by name) in one value buffer and one gradient
  // buffer. Parameters that already had memory keep their values; new ones are initialised.
  // Called by the graph before a forward pass whenever a parameter was declared since.
  void allocate();
  bool allocated() const { return values_ && layoutSize_ == entries_.size(); }

  const std::vector<Entry>& entries() const { return entries_; }
  Device device() const { return device_; }
  size_t totalSize() const { return values_ ? values_->size() : 0; }
  Tensor value(size_t i) const;
  Tensor grad(size_t i) const;
  Tensor value(const std::string& name) const { return value(index(name)); }
  Tensor grad(const std::string& name) const { return grad(index(name)); }
  Tensor values() const;  // the whole flat buffer
  Tensor grads() const;
  void zeroGrads();

  // npz by parameter name. load() needs every declared parameter in the file with the same
  // shape and float32 type and names the file and the parameter when one is not.
  void save(const std::string& path) const;
  void load(const std::string& path);
  // Marian's --pretrained-model: installs every parameter `path` has of this model's (by name,
  // with load()'s checks of shape and type); the others keep their values. Returns their names.
  std::vector<std::string> loadMatching(const std::string& path);
  // The values in `path` arranged in this (allocated) layout: a host copy of what load() would
  // install, with the same checks.
  std::vector<float> readValues(const std::string& path) const;
  // The same from items already read from `path` (named in the errors).
  std::vector<float> readValues(const std::vector<NpzItem>& items, const std::string& path) const;
  // The names, shapes and offsets of this (allocated) layout as 16 hex digits: flat arrays saved
  // in one layout are meaningless in another with the same size.
  std::string layoutFingerprint() const;
  // Flat values in this layout into `out`, one array per parameter, sorted by name, written as
  // they are (no copy: a model the size of transformer-base would take hundreds of MB more to save).
  void addToNpz(NpzWriter& out, const std::vector<float>& values) const;

private:
  // `flat` with the value in `items` of every parameter they hold; one they lack is an error, or
  // with `lacking` given keeps its value in `flat` and is named there.
  std::vector<float> readInto(const std::vector<NpzItem>& items, const std::string& path, std::vector<float> flat,
                              std::vector<std::string>* lacking) const;

  Device device_;
  uint64_t seed_;
  std::vector<Entry> entries_;  // in declaration order; index() refers to this
  std::map<std::string, size_t> byName_;
  // the gradients, made (zeroed) on first use: graphs that never run backward have none
  FlatBuffer& gradBuffer() const;

  size_t layoutSize_ = 0;  // how many entries the current buffers hold
  std::unique_ptr<FlatBuffer> values_;
  mutable std::unique_ptr<FlatBuffer> grads_;
};

}  // namespace marian
