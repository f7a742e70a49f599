#pragma once
// defines: readLines, forEachInputLine, forEachLine, LineReader, firstInvalidUtf8 — text files,
// plain or gzip-compressed (.gz), in UTF-8.
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

// A file's lines pulled one at a time, so that several files are read in step (marian-scorer's
// source and target); "stdin" or "-" reads standard input. Errors as readLines's: a missing,
// unreadable or corrupt file, and with checkUtf8 a line that is not UTF-8, named with its number.
class LineReader {
public:
  LineReader(const std::string& path, const std::string& what, bool checkUtf8 = true);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;
  // The next line without its ending; false after the last.
  bool next(std::string& line);
  size_t linesRead() const { return number_; }
  const std::string& path() const { return path_; }

private:
  bool fill();  // more bytes into buf_; false at the end of the file
  void* file_ = nullptr;  // gzFile
  std::string path_, what_;
  bool checkUtf8_;
  std::vector<char> buf_;
  size_t pos_ = 0, end_ = 0;
  size_t number_ = 0;
  bool done_ = false;
};
// The byte offset of the first byte that is not part of valid UTF-8 in `text`, or npos.
size_t firstInvalidUtf8(const char* text, size_t n);
size_t firstInvalidUtf8(const std::string& text);

}  // namespace marian
