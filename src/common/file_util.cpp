#include "common/file_util.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>

#include <signal.h>

#include "common/error.h"
#include "common/logging.h"

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
bool isDirectory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

}  // namespace marian

namespace marian {

size_t removeStaleTemporaryFiles(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path p(path);
  fs::path folder = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  std::string prefix = p.filename().string();
  std::regex temporary(".*\\.tmp\\.(\\d+)");
  size_t removed = 0;
  std::error_code ec;
  for(const auto& entry : fs::directory_iterator(folder, ec)) {
    std::string name = entry.path().filename().string();
    std::smatch m;
    if(name.rfind(prefix, 0) != 0 || !std::regex_match(name, m, temporary))
      continue;
    std::string digits = m[1];
    pid_t pid = digits.size() < 10 ? pid_t(std::stol(digits)) : pid_t(-1);
    if(pid > 0 && pid != getpid() && (kill(pid, 0) == 0 || errno == EPERM))
      continue;  // a live writer's (EPERM: alive, another user's)
    if(fs::remove(entry.path(), ec)) {
      ++removed;
      LOG(info, "Removed '{}', left by an interrupted save", entry.path().string());
    }
  }
  return removed;
}

}  // namespace marian
