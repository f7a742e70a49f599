#pragma once
// defines: AtomicFile, writeFileAtomic, atomicTempPath, makeTempFile, fileExists, isDirectory
#include <cstddef>
#include <fstream>
#include <string>
#include <vector>

namespace marian {

// Writes to PATH.tmp.<pid> and, at commit(), renames it over PATH: readers see the old file or
// the new one, never a partial one. Written in pieces, so a large file (a checkpoint) is never
// held in memory whole. Destroyed without commit (an error on the way), it removes the
// temporary file and PATH is left as it was.
class AtomicFile {
public:
  explicit AtomicFile(const std::string& path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  void write(const void* data, size_t bytes);
  void write(const std::string& s) { write(s.data(), s.size()); }
  void commit();

private:
  std::string path_, tmp_;
  std::ofstream out_;
  bool committed_ = false;
};

void writeFileAtomic(const std::string& path, const std::string& content);
// PATH.tmp.<pid>: the name a writer of PATH renames over it when done (what
// removeStaleTemporaryFiles knows to remove after a kill).
std::string atomicTempPath(const std::string& path);
// A new file in `dir` (--tempdir) named PREFIX.XXXXXX, open: its descriptor, and its path in
// `path`; the error names `forWhat`.
int makeTempFile(const std::string& dir, const std::string& prefix, const std::string& forWhat, std::string& path);
bool fileExists(const std::string& path);
// Whether a name ends with `suffix` (".gz", ".spm").
inline bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool isDirectory(const std::string& path);

}  // namespace marian

namespace marian {

// Removes the NAME.tmp.<pid> files in `folder` that writeFileAtomic leaves when its process is
// killed mid-write (those of live processes stay), of the names that begin with one of
// `prefixes`; returns how many.
size_t removeStaleTemporaryFiles(const std::string& folder, const std::vector<std::string>& prefixes);

}  // namespace marian
