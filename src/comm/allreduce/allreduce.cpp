#include "comm/allreduce/allreduce.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/error.h"

namespace marian {

namespace {
constexpr double kTimeout = 600;  // seconds a collective step may wait for its peer
}

std::vector<float> AllreduceResult::toDense(size_t n) const {
  if(isDense)
    return dense;
  std::vector<float> out(n, 0.f);
  sparse.addTo(out.data());
  return out;
}

void AllreduceResult::addTo(float* out) const {
  if(isDense) {
    for(size_t i = 0; i < dense.size(); ++i)
      out[i] += dense[i];
  } else {
    sparse.addTo(out);
  }
}

void Allreduce::sumDense(std::vector<float>& values) {
  SparseVector nonzero;
  for(size_t i = 0; i < values.size(); ++i)
    if(values[i] != 0.f) {
      nonzero.indices.push_back(uint32_t(i));
      nonzero.values.push_back(values[i]);
    }
  values = sum(nonzero, values.size()).toDense(values.size());
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

MpiTransport::PendingSend Allreduce::startSend(int dest, int round, const std::vector<char>& bytes) {
  return mpi_.startSend(Channel::collective, dest, round, bytes);
}

void Allreduce::finishSend(MpiTransport::PendingSend& s) {
  size_t size = s.size;
  mpi_.finishSend(s, kTimeout, name());
  bytes_.sent += size;
}

std::vector<std::vector<char>> Allreduce::ringAllgather(std::vector<char> mine, int firstRound) {
  int P = mpi_.size(), r = mpi_.rank();
  std::vector<std::vector<char>> all(static_cast<size_t>(P));
  all[size_t(r)] = std::move(mine);
  for(int s = 0; s < P - 1; ++s) {  // forward what arrived last step
    int from = (r - s - 1 + 2 * P) % P;
    all[size_t(from)] = exchange((r + 1) % P, (r + P - 1) % P, firstRound + s, all[size_t((from + 1) % P)]);
  }
  return all;
}

SparseVector Allreduce::splitAndReduce(const SparseVector& local, const std::vector<uint32_t>& starts,
                                       int firstRound) {
  int P = mpi_.size(), r = mpi_.rank();
  std::vector<SparseVector> parts(static_cast<size_t>(P));
  parts[size_t(r)] = slice(local, starts[size_t(r)], starts[size_t(r) + 1]);
  for(int s = 1; s < P; ++s) {
    int dest = (r + s) % P, source = (r - s + P) % P;
    std::vector<char> out = packSparse(slice(local, starts[size_t(dest)], starts[size_t(dest) + 1]));
    parts[size_t(source)] = unpackSparse(exchange(dest, source, firstRound + s - 1, out));
    for(uint32_t i : parts[size_t(source)].indices)
      ABORT_IF(i < starts[size_t(r)] || i >= starts[size_t(r) + 1],
               "{}: rank {} sent index {} outside my region [{}, {})", name(), source, i, starts[size_t(r)],
               starts[size_t(r) + 1]);
  }
  SparseVector mine;
  for(const SparseVector& p : parts)
    mine = mergeSparse(mine, p);
  return mine;
}

void Allreduce::checkIndices(const SparseVector& v, size_t n) const {
  for(size_t j = 0; j < v.size(); ++j) {
    ABORT_IF(v.indices[j] >= n, "{}: index {} outside dimension {}", name(), v.indices[j], n);
    ABORT_IF(j > 0 && v.indices[j] <= v.indices[j - 1], "{}: indices not ascending at entry {}", name(), j);
  }
}

std::vector<char> packSparse(const SparseVector& v) {
  std::vector<char> out(v.bytes());
  if(v.size()) {
    std::memcpy(out.data(), v.indices.data(), v.size() * sizeof(uint32_t));
    std::memcpy(out.data() + v.size() * sizeof(uint32_t), v.values.data(), v.size() * sizeof(float));
  }
  return out;
}

SparseVector unpackSparse(const std::vector<char>& bytes) {
  ABORT_IF(bytes.size() % 8 != 0, "Sparse message of {} bytes is not (index, value) pairs", bytes.size());
  SparseVector v;
  size_t n = bytes.size() / 8;
  v.indices.resize(n);
  v.values.resize(n);
  if(n) {
    std::memcpy(v.indices.data(), bytes.data(), n * sizeof(uint32_t));
    std::memcpy(v.values.data(), bytes.data() + n * sizeof(uint32_t), n * sizeof(float));
  }
  return v;
}

std::vector<char> packDense(const float* values, size_t n) {
  std::vector<char> out(n * sizeof(float));
  if(n)
    std::memcpy(out.data(), values, out.size());
  return out;
}

SparseVector mergeSparse(const SparseVector& a, const SparseVector& b) {
  if(a.size() == 0)
    return b;
  if(b.size() == 0)
    return a;
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

SparseVector slice(const SparseVector& v, uint32_t begin, uint32_t end) {
  size_t lo = size_t(std::lower_bound(v.indices.begin(), v.indices.end(), begin) - v.indices.begin());
  size_t hi = size_t(std::lower_bound(v.indices.begin(), v.indices.end(), end) - v.indices.begin());
  SparseVector out;
  out.indices.assign(v.indices.begin() + long(lo), v.indices.begin() + long(hi));
  out.values.assign(v.values.begin() + long(lo), v.values.begin() + long(hi));
  return out;
}

SparseVector largestK(const SparseVector& v, size_t k) {
  if(v.size() <= k)
    return v;
  std::vector<uint32_t> order(v.size());
  for(size_t j = 0; j < order.size(); ++j)
    order[j] = uint32_t(j);
  auto larger = [&](uint32_t a, uint32_t b) {
    float ma = std::fabs(v.values[a]), mb = std::fabs(v.values[b]);
    return ma > mb || (ma == mb && a < b);
  };
  std::nth_element(order.begin(), order.begin() + long(k), order.end(), larger);
  order.resize(k);
  std::sort(order.begin(), order.end());  // positions in v are in index order
  SparseVector out;
  out.indices.reserve(k);
  out.values.reserve(k);
  for(uint32_t j : order) {
    out.indices.push_back(v.indices[j]);
    out.values.push_back(v.values[j]);
  }
  return out;
}

std::vector<uint32_t> equalBlocks(size_t n, int P) {
  std::vector<uint32_t> starts(size_t(P) + 1);
  for(int b = 0; b <= P; ++b)
    starts[size_t(b)] = uint32_t(n * size_t(b) / size_t(P));
  return starts;
}

std::unique_ptr<Allreduce> createDense(MpiTransport& t);
std::unique_ptr<Allreduce> createRing(MpiTransport& t);
std::unique_ptr<Allreduce> createTree(MpiTransport& t);
std::unique_ptr<Allreduce> createTopkA(MpiTransport& t);
std::unique_ptr<Allreduce> createSsarRecursiveDoubling(MpiTransport& t);
std::unique_ptr<Allreduce> createSsarSplit(MpiTransport& t);
std::unique_ptr<Allreduce> createDsarSplit(MpiTransport& t);
std::unique_ptr<Allreduce> createGlobalTopk(MpiTransport& t);
std::unique_ptr<Allreduce> createOkTopk(MpiTransport& t, const AllreduceSettings& s);

std::vector<std::string> allreduceNames() {
  return {"dense", "ring", "tree", "topka", "ssar-recdbl", "ssar-split", "dsar-split", "gtopk", "oktopk"};
}

std::unique_ptr<Allreduce> createAllreduce(const std::string& name, MpiTransport& t, const AllreduceSettings& s) {
  if(name == "dense")
    return createDense(t);
  if(name == "ring")
    return createRing(t);
  if(name == "tree")
    return createTree(t);
  if(name == "topka")
    return createTopkA(t);
  if(name == "ssar-recdbl")
    return createSsarRecursiveDoubling(t);
  if(name == "ssar-split")
    return createSsarSplit(t);
  if(name == "dsar-split")
    return createDsarSplit(t);
  if(name == "gtopk")
    return createGlobalTopk(t);
  if(name == "oktopk")
    return createOkTopk(t, s);
  std::string known;
  for(const std::string& n : allreduceNames())
    known += (known.empty() ? "" : ", ") + n;
  ABORT("Unknown allreduce '{}'; available: {}", name, known);
}

}  // namespace marian
