#include "common/file_util.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "common/error.h"

namespace marian {

void writeFileAtomic(const std::string& path, const std::string& content) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    ABORT_IF(!out, "Cannot write '{}': {}", tmp, std::strerror(errno));
    out << content;
    out.close();
    if(!out) {
      std::remove(tmp.c_str());
      ABORT("Cannot write '{}' (disk full?)", tmp);
    }
  }
  if(std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(tmp.c_str());
    ABORT("Cannot rename '{}' to '{}': {}", tmp, path, std::strerror(err));
  }
}

bool fileExists(const std::string& path) { return std::ifstream(path).good(); }

}  // namespace marian
