#include "data/text_file.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <poll.h>
#include <unistd.h>

#include "common/error.h"
#include "common/file_util.h"

namespace marian {

namespace {
void checkUtf8(const std::string& line, size_t number, const std::string& where) {
  size_t bad = firstInvalidUtf8(line);
  ABORT_IF(bad != std::string::npos, "{} line {} is not valid UTF-8 (byte {} of the line)", where, number, bad + 1);
}
}  // namespace

std::vector<std::string> readLines(const std::string& path, const std::string& what) {
  std::vector<std::string> lines;
  LineReader reader(path, what);
  for(std::string line; reader.next(line);)
    lines.push_back(std::move(line));
  return lines;
}

std::vector<std::string> readStdinLines(const std::string& what) {
  std::vector<std::string> lines;
  forEachInputLine("-", what, [&](std::string& line) { lines.push_back(std::move(line)); });
  return lines;
}

void forEachInputLine(const std::string& path, const std::string& what,
                      const std::function<void(std::string& line)>& onLine, const std::function<void()>& onIdle) {
  size_t number = 0;
  if(path != "stdin" && path != "-") {
    LineReader reader(path, what + " file");
    for(std::string line; reader.next(line);)
      onLine(line);
    return;
  }
  // read(2) on the descriptor, not std::cin: whether a line is waiting is known only without a
  // stream's own buffer in between (poll sees the descriptor)
  std::string pending;
  std::vector<char> chunk(1 << 16);
  auto emit = [&](std::string line) {
    if(!line.empty() && line.back() == '\r')
      line.pop_back();
    checkUtf8(line, ++number, what + " (stdin)");
    onLine(line);
  };
  size_t scanned = 0;  // pending holds no newline before this (a long line is scanned once)
  for(;;) {
    size_t from = 0;
    for(size_t end; (end = pending.find('\n', std::max(from, scanned))) != std::string::npos; from = end + 1)
      emit(pending.substr(from, end - from));  // a line as soon as it comes (a pipe kept open)
    pending.erase(0, from);
    scanned = pending.size();
    pollfd input{STDIN_FILENO, POLLIN, 0};
    if(onIdle && poll(&input, 1, 0) == 0)  // nothing to read now: the next read would wait
      onIdle();
    ssize_t n = read(STDIN_FILENO, chunk.data(), chunk.size());
    if(n < 0 && errno == EINTR)
      continue;
    ABORT_IF(n < 0, "{} (stdin) could not be read: {}", what, std::strerror(errno));
    if(n == 0)
      break;
    pending.append(chunk.data(), size_t(n));
  }
  if(!pending.empty())  // a last line without its newline
    emit(std::move(pending));
}

size_t firstInvalidUtf8(const char* text, size_t n) {
  const auto* p = reinterpret_cast<const unsigned char*>(text);
  size_t i = 0;
  while(i < n) {
    // most text is ASCII: eight bytes at a time while none has the high bit
    while(i + 8 <= n) {
      uint64_t word;
      std::memcpy(&word, p + i, 8);
      if(word & 0x8080808080808080ull)
        break;
      i += 8;
    }
    if(i >= n)
      break;
    unsigned char c = p[i];
    if(c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    unsigned min;
    unsigned cp;
    if((c & 0xE0) == 0xC0) { len = 2; min = 0x80; cp = c & 0x1F; }
    else if((c & 0xF0) == 0xE0) { len = 3; min = 0x800; cp = c & 0x0F; }
    else if((c & 0xF8) == 0xF0) { len = 4; min = 0x10000; cp = c & 0x07; }
    else return i;
    if(i + len > n)
      return i;
    for(size_t k = 1; k < len; ++k) {
      if((p[i + k] & 0xC0) != 0x80)
        return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if(cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))  // overlong, too large, surrogate
      return i;
    i += len;
  }
  return std::string::npos;
}

size_t firstInvalidUtf8(const std::string& text) { return firstInvalidUtf8(text.data(), text.size()); }

void forEachLine(const std::string& path, const std::string& what, const std::function<void(std::string& line)>& onLine) {
  LineReader reader(path, what, /*checkUtf8=*/false);
  for(std::string line; reader.next(line);)
    onLine(line);
}

LineReader::LineReader(const std::string& path, const std::string& what, bool checkUtf8)
    : path_(path), what_(what), checkUtf8_(checkUtf8), buf_(1 << 16) {
  bool stdinput = path == "stdin" || path == "-";
  ABORT_IF(!stdinput && isDirectory(path), "{} '{}' is a directory, not a file", what, path);
  // gzopen reads uncompressed files transparently, so one path serves both.
  errno = 0;
  gzFile f = stdinput ? gzdopen(dup(STDIN_FILENO), "rb") : gzopen(path.c_str(), "rb");
  ABORT_IF(!f, "{} '{}' cannot be opened: {}", what, path, std::strerror(errno ? errno : ENOENT));
  gzbuffer(f, kGzBufferBytes);
  file_ = f;
}

LineReader::~LineReader() {
  if(file_)
    gzclose(gzFile(file_));
}

bool LineReader::fill() {
  gzFile f = gzFile(file_);
  int n = gzread(f, buf_.data(), unsigned(buf_.size()));
  pos_ = 0;
  end_ = n > 0 ? size_t(n) : 0;
  if(n > 0)
    return true;
  int err = Z_OK;
  // gzerror's text lives in the gzFile: copied before gzclose frees it
  std::string msg = gzerror(f, &err);
  int closed = gzclose(f);
  file_ = nullptr;
  if(err == Z_OK && closed != Z_OK && closed != Z_BUF_ERROR) {  // an error only gzclose saw
    err = closed;
    msg = closed == Z_ERRNO ? std::strerror(errno) : "read error " + std::to_string(closed);
  }
  ABORT_IF(n < 0 || (err != Z_OK && err != Z_STREAM_END), "{} '{}' is corrupt or truncated: {}", what_, path_,
           msg.empty() ? "read error" : msg);
  return false;
}

bool LineReader::next(std::string& line) {
  line.clear();
  if(done_)
    return false;
  bool any = false;  // a last line without '\n' ends as the others do; nothing after the last '\n' is no line
  for(;;) {
    if(pos_ == end_ && !fill()) {
      done_ = true;
      if(!any || line == "\r")  // nor is a lone '\r' there
        return false;
      break;
    }
    const char* from = buf_.data() + pos_;
    const char* nl = static_cast<const char*>(std::memchr(from, '\n', end_ - pos_));
    size_t take = nl ? size_t(nl - from) : end_ - pos_;
    line.append(from, take);
    pos_ += take + (nl ? 1 : 0);
    any = true;
    if(nl)
      break;
  }
  if(!line.empty() && line.back() == '\r')
    line.pop_back();
  ++number_;
  if(checkUtf8_)
    checkUtf8(line, number_, what_ + " '" + path_ + "'");
  return true;
}

}  // namespace marian
