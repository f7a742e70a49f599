#include "common/file_util.h"

#include <fcntl.h>
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

std::string atomicTempPath(const std::string& path) { return path + ".tmp." + std::to_string(getpid()); }

int makeTempFile(const std::string& dir, const std::string& prefix, const std::string& forWhat, std::string& path) {
  std::string pattern = (dir.empty() ? std::string("/tmp") : dir) + "/" + prefix + ".XXXXXX";  // "": the system's
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int fd = mkstemp(name.data());
  ABORT_IF(fd < 0, "Cannot create a temporary file '{}' in --tempdir for {}: {}", pattern, forWhat,
           std::strerror(errno));
  path = name.data();
  return fd;
}

AtomicFile::AtomicFile(const std::string& path)
    : path_(path), tmp_(atomicTempPath(path)), out_(tmp_, std::ios::binary | std::ios::trunc) {
  ABORT_IF(!out_, "Cannot write '{}': {}", tmp_, std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if(!committed_) {
    out_.close();
    std::remove(tmp_.c_str());
  }
}

void AtomicFile::write(const void* data, size_t bytes) {
  out_.write(static_cast<const char*>(data), std::streamsize(bytes));
}

void AtomicFile::commit() {
  out_.close();
  if(!out_) {
    std::remove(tmp_.c_str());
    committed_ = true;  // nothing left to remove
    ABORT("Cannot write '{}' (disk full?)", tmp_);
  }
  // The data on the disk before the rename, and the rename in its folder after: a crash of the
  // machine (not only of the process) then leaves the old file or the new one whole, never an
  // empty new one in the old one's place (ext4 without auto_da_alloc, XFS, network file systems).
  int fd = ::open(tmp_.c_str(), O_RDONLY);
  if(fd < 0 || ::fsync(fd) != 0) {
    int err = errno;
    if(fd >= 0)
      ::close(fd);
    std::remove(tmp_.c_str());
    committed_ = true;
    ABORT("Cannot write '{}' to the disk: {}", tmp_, std::strerror(err));
  }
  ::close(fd);
  if(std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    int err = errno;
    std::remove(tmp_.c_str());
    committed_ = true;
    ABORT("Cannot rename '{}' to '{}': {}", tmp_, path_, std::strerror(err));
  }
  committed_ = true;
  std::string folder = std::filesystem::path(path_).parent_path().string();
  int dir = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY);
  if(dir >= 0) {  // a file system that cannot sync a folder (EINVAL) still has the renamed file
    ::fsync(dir);
    ::close(dir);
  }
}

void writeFileAtomic(const std::string& path, const std::string& content) {
  AtomicFile file(path);
  file.write(content);
  file.commit();
}

bool fileExists(const std::string& path) { return std::ifstream(path).good(); }
bool isDirectory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

}  // namespace marian

namespace marian {

size_t removeStaleTemporaryFiles(const std::string& folderPath, const std::vector<std::string>& prefixes) {
  namespace fs = std::filesystem;
  fs::path folder = folderPath.empty() ? fs::path(".") : fs::path(folderPath);
  std::regex temporary(".*\\.tmp\\.(\\d+)");
  size_t removed = 0;
  std::error_code ec;
  for(const auto& entry : fs::directory_iterator(folder, ec)) {
    std::string name = entry.path().filename().string();
    bool ours = false;
    for(const std::string& prefix : prefixes)
      ours = ours || name.rfind(prefix, 0) == 0;
    std::smatch m;
    if(!ours || !std::regex_match(name, m, temporary))
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
