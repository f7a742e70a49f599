#pragma once
// defines: readLines, forEachInputLine, forEachLine, firstInvalidUtf8 — text files, plain or
// gzip-compressed (.gz), in UTF-8.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace marian {

// zlib's input buffer for reading text (its default, 8 KiB, makes many small reads)
constexpr unsigned kGzBufferBytes = 1u << 17;

// All lines without their line endings. A missing or unreadable file, or a line that is not
// UTF-8, is an error naming it.
std::vector<std::string> readLines(const std::string& path, const std::string& what = "Input file");
// The lines of standard input, as readLines reads a file (`what` names it in errors).
std::vector<std::string> readStdinLines(const std::string& what);
// The lines of a file, or of standard input for "stdin" or "-", one at a time and each checked
// as readLines checks them (`line` may be moved from); errors name "WHAT file 'PATH'" or
// "WHAT (stdin)". onIdle, if given, is called whenever standard input has no line waiting (the
// next read would wait for its writer: a pipe kept open).
void forEachInputLine(const std::string& path, const std::string& what,
                      const std::function<void(std::string& line)>& onLine,
                      const std::function<void()>& onIdle = {});
// The same one line at a time (`line` may be moved from): memory stays that of one line.
void forEachLine(const std::string& path, const std::string& what, const std::function<void(std::string& line)>& onLine);
// The byte offset of the first byte that is not part of valid UTF-8 in `text`, or npos.
size_t firstInvalidUtf8(const char* text, size_t n);
size_t firstInvalidUtf8(const std::string& text);

}  // namespace marian
