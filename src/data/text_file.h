#pragma once
// defines: readLines, forEachLine — text files, plain or gzip-compressed (.gz).
#include <functional>
#include <string>
#include <vector>

namespace marian {

// All lines without their line endings. A missing or unreadable file is an error naming it.
std::vector<std::string> readLines(const std::string& path, const std::string& what = "Input file");
// The same one line at a time (`line` may be moved from): memory stays that of one line.
void forEachLine(const std::string& path, const std::string& what, const std::function<void(std::string& line)>& onLine);

}  // namespace marian
