#pragma once
// defines: readLines, writeLines — text files, plain or gzip-compressed (.gz).
#include <string>
#include <vector>

namespace marian {

// All lines without their line endings. A missing or unreadable file is an error naming it.
std::vector<std::string> readLines(const std::string& path, const std::string& what = "Input file");

}  // namespace marian
