#include "data/text_output.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "common/error.h"
#include "common/file_util.h"

namespace marian {

namespace {
bool gzipped(const std::string& path) { return endsWith(path, ".gz"); }

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
  if(gz_)  // (an error path: close() is the checked end)
    gzclose(static_cast<gzFile>(gz_));
}

void TextOutput::close() {
  if(gz_) {
    int closed = gzclose(static_cast<gzFile>(gz_));  // writes the gzip trailer
    gz_ = nullptr;
    ABORT_IF(closed != Z_OK, "Writing {} failed: {}", what_, closed == Z_ERRNO ? std::strerror(errno) : "zlib error");
    return;
  }
  flush();
  if(file_.is_open()) {
    file_.close();
    ABORT_IF(!file_, "Writing {} failed: {}", what_, std::strerror(errno));
  }
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

std::string gzipBytes(const std::string& text) {
  // (one deflate call: its counts are 32 bits; the files written whole are far smaller)
  ABORT_IF(text.size() > (size_t(1) << 31), "{} bytes are too many to compress at once", text.size());
  z_stream z{};
  ABORT_IF(deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK,
           "zlib cannot compress");  // 15 + 16: a gzip header and trailer
  std::string out(deflateBound(&z, uLong(text.size())) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = uInt(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  int done = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  ABORT_IF(done != Z_STREAM_END, "zlib could not compress {} bytes", text.size());
  return out;
}

void writeTextFile(const std::string& path, const std::string& text) {
  writeFileAtomic(path, gzipped(path) ? gzipBytes(text) : text);
}

}  // namespace marian
