#pragma once
// defines: writeFileAtomic, fileExists, isDirectory
#include <string>

namespace marian {

// Writes to PATH.tmp.<pid> and renames it over PATH: readers see the old file or the new one,
// never a partial one.
void writeFileAtomic(const std::string& path, const std::string& content);
bool fileExists(const std::string& path);
bool isDirectory(const std::string& path);

}  // namespace marian

namespace marian {

// Removes the PATH*.tmp.<pid> files that writeFileAtomic leaves when its process is killed
// mid-write (those of live processes stay); returns how many.
size_t removeStaleTemporaryFiles(const std::string& path);

}  // namespace marian
