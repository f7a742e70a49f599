#include "comm/allreduce.h"

#include <cstring>

#include "common/error.h"

namespace marian {

namespace {
constexpr double kTimeout = 600;  // seconds a collective step may wait for its peer
}

void Allreduce::send(int dest, int round, const std::vector<char>& bytes) {
  mpi_.send(Channel::collective, dest, round, bytes, kTimeout);
  bytes_.sent += bytes.size();
}

std::vector<char> Allreduce::recv(int source, int round) {
  auto m = mpi_.recv(Channel::collective, source, round, kTimeout, name() + " step " + std::to_string(round));
  bytes_.received += m.bytes.size();
  return std::move(m.bytes);
}

std::vector<char> Allreduce::exchange(int dest, int source, int round, const std::vector<char>& bytes) {
  auto m = mpi_.exchange(Channel::collective, dest, source, round, bytes, kTimeout,
                         name() + " step " + std::to_string(round));
  bytes_.sent += bytes.size();
  bytes_.received += m.bytes.size();
  return std::move(m.bytes);
}

void Allreduce::ringAllgatherAdd(const SparseVector& mine, std::vector<float>& sum, int firstRound) {
  int P = mpi_.size(), r = mpi_.rank();
  mine.addTo(sum.data());
  std::vector<char> travelling = packSparse(mine);
  for(int s = 0; s < P - 1; ++s) {  // forward what arrived last step
    travelling = exchange((r + 1) % P, (r + P - 1) % P, firstRound + s, travelling);
    SparseVector in = unpackSparse(travelling);
    for(uint32_t i : in.indices)
      ABORT_IF(i >= sum.size(), "{}: index {} outside dimension {}", name(), i, sum.size());
    in.addTo(sum.data());
  }
}

std::vector<char> packSparse(const SparseVector& v) {
  std::vector<char> out(v.bytes());
  std::memcpy(out.data(), v.indices.data(), v.size() * sizeof(uint32_t));
  std::memcpy(out.data() + v.size() * sizeof(uint32_t), v.values.data(), v.size() * sizeof(float));
  return out;
}

SparseVector unpackSparse(const std::vector<char>& bytes) {
  ABORT_IF(bytes.size() % 8 != 0, "Sparse message of {} bytes is not (index, value) pairs", bytes.size());
  SparseVector v;
  size_t n = bytes.size() / 8;
  v.indices.resize(n);
  v.values.resize(n);
  std::memcpy(v.indices.data(), bytes.data(), n * sizeof(uint32_t));
  std::memcpy(v.values.data(), bytes.data() + n * sizeof(uint32_t), n * sizeof(float));
  return v;
}

std::vector<char> packDense(const float* values, size_t n) {
  std::vector<char> out(n * sizeof(float));
  if(n)
    std::memcpy(out.data(), values, out.size());
  return out;
}

SparseVector mergeSparse(const SparseVector& a, const SparseVector& b) {
  SparseVector out;
  out.indices.reserve(a.size() + b.size());
  out.values.reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while(i < a.size() || j < b.size()) {
    if(j == b.size() || (i < a.size() && a.indices[i] < b.indices[j])) {
      out.indices.push_back(a.indices[i]);
      out.values.push_back(a.values[i++]);
    } else if(i == a.size() || b.indices[j] < a.indices[i]) {
      out.indices.push_back(b.indices[j]);
      out.values.push_back(b.values[j++]);
    } else {
      out.indices.push_back(a.indices[i]);
      out.values.push_back(a.values[i++] + b.values[j++]);
    }
  }
  return out;
}

std::unique_ptr<Allreduce> createRing(MpiTransport& t);
std::unique_ptr<Allreduce> createTopkA(MpiTransport& t);
std::unique_ptr<Allreduce> createSsarRecursiveDoubling(MpiTransport& t);
std::unique_ptr<Allreduce> createSsarSplit(MpiTransport& t);

std::vector<std::string> allreduceNames() { return {"ring", "topka", "ssar-recdbl", "ssar-split"}; }

std::unique_ptr<Allreduce> createAllreduce(const std::string& name, MpiTransport& t) {
  if(name == "ring")
    return createRing(t);
  if(name == "topka")
    return createTopkA(t);
  if(name == "ssar-recdbl")
    return createSsarRecursiveDoubling(t);
  if(name == "ssar-split")
    return createSsarSplit(t);
  std::string known;
  for(const std::string& n : allreduceNames())
    known += (known.empty() ? "" : ", ") + n;
  ABORT("Unknown sparse allreduce '{}'; available: {}", name, known);
}

}  // namespace marian
