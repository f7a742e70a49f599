#include "data/text_output.h"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "common/error.h"
#include "common/file_util.h"

namespace marian {

namespace {
bool gzipped(const std::string& path) { return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0; }

// a .gz file's descriptor, or the error naming it
gzFile openGz(const std::string& path) {
  errno = 0;
  gzFile f = gzopen(path.c_str(), "wb");
  ABORT_IF(!f, "Cannot write {}: {}", path, std::strerror(errno ? errno : ENOMEM));
  return f;
}

void writeGz(gzFile f, const std::string& text, const std::string& what) {
  for(size_t at = 0; at < text.size();) {  // gzwrite takes an unsigned count
    unsigned n = unsigned(std::min<size_t>(text.size() - at, 1u << 30));
    ABORT_IF(gzwrite(f, text.data() + at, n) != int(n), "Writing {} failed: {}", what, std::strerror(errno));
    at += n;
  }
}
}  // namespace

TextOutput::TextOutput(const std::string& path, const std::string& what)
    : what_(what + " to " + (path == "stdout" || path == "-" ? "the standard output" : path)) {
  if(path == "stdout" || path == "-")
    return;
  if(gzipped(path)) {
    gz_ = openGz(path);
    return;
  }
  file_.open(path);
  ABORT_IF(!file_, "Cannot write {}: {}", path, std::strerror(errno));
}

TextOutput::~TextOutput() {
  if(gz_)
    gzclose(static_cast<gzFile>(gz_));
}

void TextOutput::write(const std::string& text) {
  if(gz_) {
    writeGz(static_cast<gzFile>(gz_), text, what_);
    return;
  }
  std::ostream& out = file_.is_open() ? static_cast<std::ostream&>(file_) : std::cout;
  out << text;
  ABORT_IF(!out, "Writing {} failed: {}", what_, std::strerror(errno));
}

void TextOutput::flush() {
  if(gz_) {
    ABORT_IF(gzflush(static_cast<gzFile>(gz_), Z_SYNC_FLUSH) != Z_OK, "Writing {} failed: {}", what_,
             std::strerror(errno));
    return;
  }
  std::ostream& out = file_.is_open() ? static_cast<std::ostream&>(file_) : std::cout;
  out.flush();
  ABORT_IF(!out, "Writing {} failed: {}", what_, std::strerror(errno));
}

void writeTextFile(const std::string& path, const std::string& text) {
  if(!gzipped(path)) {
    writeFileAtomic(path, text);
    return;
  }
  std::string tmp = atomicTempPath(path);
  gzFile f = openGz(tmp);
  writeGz(f, text, path);
  int closed = gzclose(f);
  if(closed != Z_OK)
    std::remove(tmp.c_str());
  ABORT_IF(closed != Z_OK, "Writing {} failed", path);
  ABORT_IF(std::rename(tmp.c_str(), path.c_str()) != 0, "Cannot write {}: {}", path, std::strerror(errno));
}

}  // namespace marian
