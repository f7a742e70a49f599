#include "data/text_file.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"

namespace marian {

std::vector<std::string> readLines(const std::string& path, const std::string& what) {
  // gzopen reads uncompressed files transparently, so one path serves both.
  gzFile f = gzopen(path.c_str(), "rb");
  ABORT_IF(!f, "{} '{}' cannot be opened: {}", what, path, std::strerror(errno ? errno : ENOENT));
  gzbuffer(f, 1 << 17);
  std::vector<std::string> lines;
  std::string line;
  char buf[1 << 16];
  int n;
  while((n = gzread(f, buf, sizeof(buf))) > 0) {
    for(int i = 0; i < n; ++i) {
      if(buf[i] == '\n') {
        if(!line.empty() && line.back() == '\r')
          line.pop_back();
        lines.push_back(std::move(line));
        line.clear();
      } else {
        line.push_back(buf[i]);
      }
    }
  }
  int err = 0;
  const char* msg = gzerror(f, &err);
  gzclose(f);
  ABORT_IF(n < 0 || (err != Z_OK && err != Z_STREAM_END), "{} '{}' is corrupt: {}", what, path, msg);
  if(!line.empty())
    lines.push_back(std::move(line));
  return lines;
}

}  // namespace marian
