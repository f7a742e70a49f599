#include "data/text_file.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"
#include "common/file_util.h"

namespace marian {

std::vector<std::string> readLines(const std::string& path, const std::string& what) {
  std::vector<std::string> lines;
  forEachLine(path, what, [&](std::string& line) { lines.push_back(std::move(line)); });
  return lines;
}

void forEachLine(const std::string& path, const std::string& what, const std::function<void(std::string& line)>& onLine) {
  ABORT_IF(isDirectory(path), "{} '{}' is a directory, not a file", what, path);
  // gzopen reads uncompressed files transparently, so one path serves both.
  errno = 0;
  gzFile f = gzopen(path.c_str(), "rb");
  ABORT_IF(!f, "{} '{}' cannot be opened: {}", what, path, std::strerror(errno ? errno : ENOENT));
  gzbuffer(f, 1 << 17);
  std::string line;
  char buf[1 << 16];
  int n;
  while((n = gzread(f, buf, sizeof(buf))) > 0) {
    for(int i = 0; i < n; ++i) {
      if(buf[i] == '\n') {
        if(!line.empty() && line.back() == '\r')
          line.pop_back();
        onLine(line);
        line.clear();
      } else {
        line.push_back(buf[i]);
      }
    }
  }
  int err = Z_OK;
  // gzerror's text lives in the gzFile: copied before gzclose frees it
  std::string msg = gzerror(f, &err);
  int closed = gzclose(f);
  if(err == Z_OK && closed != Z_OK && closed != Z_BUF_ERROR) {  // an error only gzclose saw
    err = closed;
    msg = closed == Z_ERRNO ? std::strerror(errno) : "read error " + std::to_string(closed);
  }
  ABORT_IF(n < 0 || (err != Z_OK && err != Z_STREAM_END), "{} '{}' is corrupt or truncated: {}", what, path,
           msg.empty() ? "read error" : msg);
  if(!line.empty() && line.back() == '\r')  // a last line without '\n' ends as the others do
    line.pop_back();
  if(!line.empty())
    onLine(line);
}

}  // namespace marian
