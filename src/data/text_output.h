#pragma once
// defines: TextOutput, writeTextFile — text written as Marian writes it: gzip-compressed when the
// file's name ends in .gz (its io::OutputFileStream), plain otherwise.
#include <fstream>
#include <memory>
#include <string>

namespace marian {

// An output written a part at a time: standard output ("stdout" or "-"), a plain file or a .gz
// file, opened (or the error naming it) at construction; each flush makes what was written
// readable (a .gz file ends a deflate block there). Errors say "Writing WHAT to PATH failed".
class TextOutput {
public:
  TextOutput(const std::string& path, const std::string& what);
  ~TextOutput();
  TextOutput(const TextOutput&) = delete;
  TextOutput& operator=(const TextOutput&) = delete;

  void write(const std::string& text);
  void flush();
  // The end of the output, checked (a .gz file's trailer is written here); the destructor of one
  // not closed closes it unchecked.
  void close();
private:
  std::string what_;
  std::ofstream file_;
  void* gz_ = nullptr;  // gzFile
};

// `text` as the file `path` (gzip-compressed for .gz), as writeFileAtomic writes: a reader never
// sees part of it.
void writeTextFile(const std::string& path, const std::string& text);
// `text` as the bytes of a .gz file.
std::string gzipBytes(const std::string& text);

}  // namespace marian
