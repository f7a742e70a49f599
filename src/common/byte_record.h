#pragma once
// defines: marian::ByteWriter, marian::ByteReader, packArray, unpackArray — the one binary format
// of every record that travels between ranks or threads (parameter-server messages, packed model
// states, allreduce payloads): values in host byte order laid end to end (every rank of a run is
// the same architecture), arrays either with a uint64 count before them or sized by the record.
// Every read is bounds-checked: a short, oversized or trailing record is an Error naming it.
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "common/error.h"

namespace marian {

class ByteWriter {
public:
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable<T>::value, "only plain values go on the wire");
    append(&v, sizeof(T));
  }
  // The values alone: the reader knows how many (from a count written before, or the record's size).
  template <class T>
  void putArray(const T* values, size_t n) {
    static_assert(std::is_trivially_copyable<T>::value, "only plain values go on the wire");
    append(values, n * sizeof(T));
  }
  template <class T>
  void putArray(const std::vector<T>& v) {
    putArray(v.data(), v.size());
  }
  // A uint64 count, then the values.
  template <class T>
  void putCounted(const std::vector<T>& v) {
    put<uint64_t>(v.size());
    putArray(v);
  }
  void putString(const std::string& s) {
    put<uint64_t>(s.size());
    append(s.data(), s.size());
  }
  void reserve(size_t bytes) { bytes_.reserve(bytes); }
  std::vector<char> take() { return std::move(bytes_); }

private:
  void append(const void* p, size_t n) {
    if(n == 0)
      return;  // an empty vector's data() may be null
    const char* c = static_cast<const char*>(p);
    bytes_.insert(bytes_.end(), c, c + n);
  }
  std::vector<char> bytes_;
};

class ByteReader {
public:
  // `what` names the record in errors ("Parameter-server message", "Model state"); the reader
  // keeps a reference: `bytes` must outlive it.
  ByteReader(const std::vector<char>& bytes, const char* what) : bytes_(bytes), what_(what) {}

  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable<T>::value, "only plain values come off the wire");
    T v;
    take(&v, sizeof(T), 1);
    return v;
  }
  // n values, refused before allocating when fewer bytes are left.
  template <class T>
  std::vector<T> getArray(uint64_t n) {
    static_assert(std::is_trivially_copyable<T>::value, "only plain values come off the wire");
    ABORT_IF(n > left() / sizeof(T), "{} of {} bytes announces {} values of {} bytes at byte {}, {} bytes left", what_,
             bytes_.size(), n, sizeof(T), at_, left());
    std::vector<T> v(static_cast<size_t>(n));
    take(v.data(), sizeof(T), v.size());
    return v;
  }
  template <class T>
  std::vector<T> getCounted() {
    return getArray<T>(get<uint64_t>());
  }
  std::string getString() {
    uint64_t n = get<uint64_t>();
    ABORT_IF(n > left(), "{} of {} bytes announces a name of {} bytes at byte {}", what_, bytes_.size(), n, at_);
    std::string s(static_cast<size_t>(n), '\0');
    take(s.data(), 1, s.size());
    return s;
  }
  size_t left() const { return bytes_.size() - at_; }
  // Every byte read: a longer record is not the one the reader expects.
  void expectEnd() const {
    ABORT_IF(at_ != bytes_.size(), "{} of {} bytes has {} bytes after its end", what_, bytes_.size(), left());
  }

private:
  void take(void* into, size_t size, size_t count) {
    size_t n = size * count;
    ABORT_IF(n > left(), "{} of {} bytes is truncated at byte {} ({} more needed)", what_, bytes_.size(), at_, n);
    if(n)
      std::memcpy(into, bytes_.data() + at_, n);
    at_ += n;
  }
  const std::vector<char>& bytes_;
  const char* what_;
  size_t at_ = 0;
};

// A record that is one array and nothing else.
template <class T>
std::vector<char> packArray(const std::vector<T>& v) {
  ByteWriter w;
  w.putArray(v);
  return w.take();
}
template <class T>
std::vector<T> unpackArray(const std::vector<char>& bytes, const char* what) {
  ABORT_IF(bytes.size() % sizeof(T) != 0, "{} of {} bytes is not a whole number of {}-byte values", what, bytes.size(),
           sizeof(T));
  ByteReader r(bytes, what);
  return r.getArray<T>(bytes.size() / sizeof(T));
}

}  // namespace marian
