#include "data/corpus_chunks.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <thread>

#include "common/error.h"
#include "common/file_util.h"
#include "common/format.h"
#include "data/text_file.h"
#include "data/word_alignment.h"

namespace marian {

namespace {

constexpr size_t kReadBlock = 1 << 20;
constexpr size_t kNamedProblems = 10;        // bad lines named in the pass's error; the rest counted
constexpr size_t kLongestLine = size_t(16) << 20;  // longer is no sentence (a binary file?)

bool isGzip(int fd) {
  unsigned char magic[2] = {0, 0};
  bool gz = pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  return gz;
}

// An unlinked temporary file in `dir` (it goes when its descriptor closes).
int anonymousTempFile(const std::string& dir, const std::string& forWhat) {
  std::string path;
  int fd = makeTempFile(dir, "marian-corpus", "decompressing '" + forWhat + "'", path);
  unlink(path.c_str());
  return fd;
}

void writeAll(int fd, const char* data, size_t n, const std::string& what) {
  while(n > 0) {
    ssize_t w = write(fd, data, n);
    if(w < 0 && errno == EINTR)
      continue;
    ABORT_IF(w <= 0, "{}: {}", what, std::strerror(errno));
    data += w;
    n -= size_t(w);
  }
}

// Streams a file's bytes through `onBytes`; with a `copyFd`, decompressed when gzip (zlib reads
// other bytes as they are) and copied into `copyFd` on the way.
template <class OnBytes>
void streamFile(const std::string& name, int fd, int copyFd, const std::string& tempdir, OnBytes onBytes) {
  std::vector<char> buf(kReadBlock);
  if(copyFd < 0) {
    for(;;) {
      ssize_t n = read(fd, buf.data(), buf.size());
      if(n < 0 && errno == EINTR)
        continue;
      ABORT_IF(n < 0, "Corpus file '{}' cannot be read: {}", name, std::strerror(errno));
      if(n == 0)
        return;
      onBytes(buf.data(), size_t(n));
    }
  }
  int dupFd = dup(fd);  // gzclose closes what it was given
  ABORT_IF(dupFd < 0, "Corpus file '{}' cannot be read: {}", name, std::strerror(errno));
  gzFile gz = gzdopen(dupFd, "rb");
  ABORT_IF(!gz, "Corpus file '{}' cannot be opened as gzip", name);
  gzbuffer(gz, kGzBufferBytes);
  int n;
  std::string failure;
  try {
    while((n = gzread(gz, buf.data(), unsigned(buf.size()))) > 0) {
      writeAll(copyFd, buf.data(), size_t(n),
               "Cannot decompress '" + name + "' into --tempdir '" + tempdir + "'");
      onBytes(buf.data(), size_t(n));
    }
  } catch(...) {
    gzclose(gz);
    throw;
  }
  int err = Z_OK;
  std::string msg = gzerror(gz, &err);
  gzclose(gz);
  ABORT_IF(n < 0 || (err != Z_OK && err != Z_STREAM_END), "Corpus file '{}' is corrupt or truncated: {}", name,
           msg.empty() ? "read error" : msg);
}

std::string join(const std::vector<std::string>& parts, const std::string& between) {
  std::string all;
  for(size_t i = 0; i < parts.size(); ++i)
    all += (i ? between : "") + parts[i];
  return all;
}

std::string readRange(int fd, uint64_t from, uint64_t to, const std::string& name) {
  std::string bytes(size_t(to - from), '\0');
  size_t done = 0;
  while(done < bytes.size()) {
    ssize_t n = pread(fd, bytes.data() + done, bytes.size() - done, off_t(from + done));
    if(n < 0 && errno == EINTR)
      continue;
    ABORT_IF(n <= 0, "Corpus file '{}' cannot be read at byte {}: {}", name, from + done,
             n == 0 ? "it became shorter while training" : std::strerror(errno));
    done += size_t(n);
  }
  return bytes;
}

}  // namespace


std::string lineProblem(const char* line, size_t n, size_t tsvFields, const std::string& fieldsNamed) {
  size_t bad = firstInvalidUtf8(line, n);
  if(bad != std::string::npos)
    return "is not valid UTF-8 (byte " + std::to_string(bad + 1) + " of the line)";
  if(tsvFields > 0) {
    size_t fields = 1;
    for(const char* t = line; (t = static_cast<const char*>(std::memchr(t, '\t', size_t(line + n - t)))); ++t)
      ++fields;
    if(fields != tsvFields)
      return "has " + std::to_string(fields) + " field(s): --tsv needs " + fieldsNamed;
  }
  return "";
}

WeightsResult forEachWeight(const char* line, size_t n, const std::function<void(float)>& onWeight) {
  const char* end = line + n;
  for(const char* p = line;;) {
    while(p < end && (*p == ' ' || *p == '\t'))
      ++p;
    if(p == end)
      return WeightsResult::ok;
    if(*p == '+' && p + 1 < end && *(p + 1) != '-')  // from_chars takes no '+', stof does
      ++p;
    float w = 0;
    std::from_chars_result r = std::from_chars(p, end, w);
    if(r.ec == std::errc::invalid_argument || (r.ptr < end && *r.ptr != ' ' && *r.ptr != '\t'))
      return WeightsResult::notANumber;
    if(r.ec != std::errc() || !std::isfinite(w))
      return WeightsResult::outOfRange;
    onWeight(w);
    p = r.ptr;
  }
}

std::string weightsProblem(const char* line, size_t n, bool sentenceLevel) {
  size_t count = 0;
  WeightsResult r = forEachWeight(line, n, [&](float) { ++count; });
  std::string text(line, n);
  if(r == WeightsResult::notANumber)
    return "is not a list of weights (numbers separated by spaces): '" + text + "'";
  if(r == WeightsResult::outOfRange)
    return "has a weight out of float's range, or not finite: '" + text + "'";
  if(count == 0)
    return "has no weight (--data-weighting)";
  return sentenceLevel && count > 1
             ? "has " + std::to_string(count) + " weights: --data-weighting-type sentence takes one a line"
             : "";
}

CorpusChunks::Kind CorpusChunks::kindOfSide(size_t k) const {
  if(int(k) == weightsSide_)
    return Kind::weights;
  if(int(k) == alignmentSide_)
    return Kind::alignment;
  return tsv_ ? Kind::tsv : Kind::text;
}

std::string CorpusChunks::extraProblem(Kind kind, const char* text, size_t n) const {
  return kind == Kind::weights ? weightsProblem(text, n, extras_.sentenceWeights) : alignmentProblem(text, n);
}

size_t CorpusChunks::tsvFields() const {
  return 2 + size_t(extras_.weights.tsvField >= 0) + size_t(extras_.alignment.tsvField >= 0);
}

std::string CorpusChunks::fileLabel(size_t k) const {
  Kind kind = kindOfSide(k);
  const char* what = kind == Kind::weights ? "Weights file '" : kind == Kind::alignment ? "Alignment file '" : "Corpus file '";
  return what + sides_[k].name + "'";
}

std::string CorpusChunks::problemOf(size_t k, const char* line, size_t n) const {
  Kind kind = kindOfSide(k);
  if(kind == Kind::weights || kind == Kind::alignment)
    return extraProblem(kind, line, n);
  if(kind == Kind::text)
    return lineProblem(line, n, 0);
  std::vector<std::string> items = {"a source", "a target"};
  if(extras_.weights.tsvField >= 0)
    items.push_back("the weights (--data-weighting)");
  if(extras_.alignment.tsvField >= 0)
    items.push_back("the word alignments (--guided-alignment)");
  std::string named = items[0];
  for(size_t i = 1; i < items.size(); ++i)
    named += (i + 1 == items.size() ? " and " : ", ") + items[i];
  std::string problem =
      lineProblem(line, n, tsvFields(), named + (items.size() == 2 ? " separated by one TAB" : " separated by TABs"));
  for(auto [extra, extraKind] : {std::pair{&extras_.weights, Kind::weights}, std::pair{&extras_.alignment, Kind::alignment}}) {
    if(!problem.empty() || extra->tsvField < 0)
      continue;
    const char* field = line;
    for(int f = 0; f < extra->tsvField; ++f)
      field = static_cast<const char*>(std::memchr(field, '\t', size_t(line + n - field))) + 1;
    const char* end = static_cast<const char*>(std::memchr(field, '\t', size_t(line + n - field)));
    problem = extraProblem(extraKind, field, end ? size_t(end - field) : size_t(line + n - field));
    if(!problem.empty())
      problem = "field " + std::to_string(extra->tsvField) + " " + problem;
  }
  return problem;
}

CorpusChunks::CorpusChunks(const std::vector<std::string>& files, bool tsv, size_t chunkLines,
                           const std::string& tempdir, const LineExtras& extras)
    : tsv_(tsv), extras_(extras), chunkLines_(chunkLines) {
  ABORT_IF(chunkLines == 0, "CorpusChunks: chunks need at least one line");
  ABORT_IF(tsv && files.size() != 1, "--tsv reads one training file with a source and a target per line, got {}",
           files.size());
  ABORT_IF(!tsv && files.size() != 2, "A parallel corpus needs two files (or --tsv and one), got {}", files.size());
  std::vector<std::string> all = files;  // the texts, then the extras' own files
  for(auto [extra, side] : {std::pair{&extras.weights, &weightsSide_}, std::pair{&extras.alignment, &alignmentSide_}}) {
    ABORT_IF(extra->tsvField >= int(tsvFields()) || (extra->tsvField >= 0 && (!tsv || !extra->file.empty())),
             "CorpusChunks: extra field {} of a TSV line of {}", extra->tsvField, tsvFields());
    if(!extra->file.empty()) {
      *side = int(all.size());
      all.push_back(extra->file);
    }
  }
  ABORT_IF(extras.weights.tsvField >= 0 && extras.weights.tsvField == extras.alignment.tsvField,
           "CorpusChunks: weights and alignments in the same TSV field {}", extras.weights.tsvField);
  try {
    scan(all, tempdir);
  } catch(...) {  // the destructor does not run for a constructor that throws
    for(Side& side : sides_)
      if(side.fd >= 0)
        close(side.fd);
    throw;
  }
}

void CorpusChunks::scan(const std::vector<std::string>& files, const std::string& tempdir) {
  sides_.resize(files.size());
  for(size_t k = 0; k < files.size(); ++k) {
    Side& s = sides_[k];
    s.name = files[k];
    ABORT_IF(isDirectory(s.name), "Corpus file '{}' is a directory, not a file", s.name);
    s.fd = open(s.name.c_str(), O_RDONLY | O_CLOEXEC);
    ABORT_IF(s.fd < 0, "Corpus file '{}' cannot be opened: {}", s.name, std::strerror(errno));
  }
  // One pass per side, the sides in parallel: line starts every chunkLines lines.
  std::vector<std::exception_ptr> failed(sides_.size());
  auto scanSide = [&](size_t k) {
    int copyFd = -1;
    try {
      Side& s = sides_[k];
      // a .gz file, or a pipe (--train-sets <(zcat ...)), cannot be read at offsets: copied
      struct stat st {};
      if(fstat(s.fd, &st) != 0 || !S_ISREG(st.st_mode) || isGzip(s.fd))
        copyFd = anonymousTempFile(tempdir, s.name);
      uint64_t at = 0, lineStart = 0;
      bool lineOpen = false;  // bytes seen since the last '\n'
      char lastByte = '\n';
      std::string carry;      // the start of a line a read cut off
      bool carryCut = false;  // that line is longer than checked
      // every complete line (its '\n' left off) is checked here, before training begins
      auto check = [&](const char* text, size_t n) {
        if(n > 0 && text[n - 1] == '\r')
          --n;
        std::string problem = carryCut ? "is longer than " + std::to_string(kLongestLine >> 20) + " MB: is this a text file?"
                                       : problemOf(k, text, n);
        if(problem.empty())
          s.emptyLines += n == 0;
        else if(s.badLines++ < kNamedProblems)
          s.problems.push_back("line " + std::to_string(s.lines + 1) + " " + problem);
      };
      auto keep = [&](const char* part, size_t n) {  // a line's part, unless the line is too long
        if(carryCut || carry.size() + n > kLongestLine)
          carryCut = true;
        else
          carry.append(part, n);
      };
      streamFile(s.name, s.fd, copyFd, tempdir, [&](const char* data, size_t n) {
        s.content.add(data, n);
        const char* p = data;
        const char* end = data + n;
        while(p < end) {
          if(!lineOpen) {
            lineStart = at + uint64_t(p - data);
            if(s.lines % chunkLines_ == 0)
              s.offsets.push_back(lineStart);
            lineOpen = true;
          }
          const char* nl = static_cast<const char*>(std::memchr(p, '\n', size_t(end - p)));
          if(!nl) {
            keep(p, size_t(end - p));
            p = end;
            break;
          }
          if(carry.empty() && !carryCut) {
            check(p, size_t(nl - p));
          } else {
            keep(p, size_t(nl - p));
            check(carry.data(), carry.size());
            carry.clear();
            carryCut = false;
          }
          ++s.lines;
          lineOpen = false;
          p = nl + 1;
        }
        at += n;
        lastByte = data[n - 1];
      });
      // a last line without '\n' is a line if it has text (a lone '\r' has none), as readLines reads
      if(lineOpen && (at - lineStart > 1 || lastByte != '\r')) {
        check(carry.data(), carry.size());
        ++s.lines;
      } else if(lineOpen && s.lines % chunkLines_ == 0) {
        s.offsets.pop_back();  // the chunk it opened holds no line
      }
      s.size = at;
      if(copyFd >= 0) {
        close(s.fd);
        s.fd = copyFd;
      }
    } catch(...) {
      if(copyFd >= 0 && copyFd != sides_[k].fd)
        close(copyFd);
      failed[k] = std::current_exception();
    }
  };
  std::vector<std::thread> scanners;
  for(size_t k = 1; k < sides_.size(); ++k)
    scanners.emplace_back(scanSide, k);
  scanSide(0);
  for(auto& t : scanners)
    t.join();
  for(auto& f : failed)
    if(f)
      std::rethrow_exception(f);
  // every problem the pass found, in one error
  std::vector<std::string> problems;
  for(size_t k = 0; k < sides_.size(); ++k) {
    const Side& s = sides_[k];
    std::string file = fileLabel(k);
    if(s.lines == 0)
      problems.push_back(file + " is empty");
    else if(s.badLines == 1)
      problems.push_back(file + " " + s.problems[0]);
    else if(s.badLines > 1)
      problems.push_back(file + " has " + std::to_string(s.badLines) + " bad lines" +
                         (s.badLines > kNamedProblems ? " (the first " + std::to_string(kNamedProblems) + " here)" : "") +
                         ": " + join(s.problems, "; "));
  }
  for(size_t k = 1; k < sides_.size(); ++k)
    if(sides_[0].lines != sides_[k].lines)
      problems.push_back(format("{} ({} lines) and {} ({} lines) differ in length: '{}' ends after line {}",
                                fileLabel(0), sides_[0].lines, fileLabel(k), sides_[k].lines,
                                sides_[0].lines < sides_[k].lines ? sides_[0].name : sides_[k].name,
                                std::min(sides_[0].lines, sides_[k].lines)));
  ABORT_IF(!problems.empty(), "{}", join(problems, "\n"));
  lines_ = sides_[0].lines;
}

CorpusChunks::~CorpusChunks() {
  for(Side& s : sides_)
    if(s.fd >= 0)
      close(s.fd);
}

std::vector<size_t> CorpusChunks::emptyLines() const {
  std::vector<size_t> empty;
  for(const Side& s : sides_)
    empty.push_back(s.emptyLines);
  return empty;
}

uint64_t CorpusChunks::bytes() const {
  uint64_t total = 0;
  for(const Side& s : sides_)
    total += s.size;
  return total;
}

std::string CorpusChunks::identity() const {
  std::string id = format("{} lines", grouped(lines_));
  for(size_t k = 0; k < sides_.size() && kindOfSide(k) != Kind::weights && kindOfSide(k) != Kind::alignment; ++k)
    id += std::string(tsv_ ? "; TSV " : k == 0 ? "; source " : "; target ") + sides_[k].content.str();
  return id;
}

std::string CorpusChunks::extrasIdentity() const {
  std::string id;
  if(weightsSide_ >= 0)
    id = "weights " + sides_[size_t(weightsSide_)].content.str();
  if(alignmentSide_ >= 0)
    id += (id.empty() ? "" : "; ") + std::string("alignments ") + sides_[size_t(alignmentSide_)].content.str();
  return id;
}

std::vector<std::string> CorpusChunks::linesOf(size_t k, size_t chunk) const {
  const Side& side = sides_[k];
  uint64_t from = side.offsets[chunk];
  uint64_t to = chunk + 1 < side.offsets.size() ? side.offsets[chunk + 1] : side.size;
  std::string text = readRange(side.fd, from, to, side.name);
  size_t first = chunk * chunkLines_;
  size_t count = std::min(chunkLines_, lines_ - first);
  std::vector<std::string> lines;
  lines.reserve(count);
  size_t p = 0;
  while(p < text.size() && lines.size() < count) {
    size_t nl = text.find('\n', p);
    if(nl == std::string::npos)
      nl = text.size();
    size_t end = nl > p && text[nl - 1] == '\r' ? nl - 1 : nl;
    lines.emplace_back(text, p, end - p);
    p = nl + 1;
  }
  std::string file = fileLabel(k);
  ABORT_IF(lines.size() != count, "{} changed while training: chunk {} has {} lines, not {}", file, chunk,
           lines.size(), count);
  // the pass checked every line: a problem here means the file changed since
  for(size_t i = 0; i < lines.size(); ++i) {
    std::string problem = problemOf(k, lines[i].data(), lines[i].size());
    ABORT_IF(!problem.empty(), "{} line {} {} (the file changed while training)", file, first + i + 1, problem);
  }
  return lines;
}

std::vector<RawPair> CorpusChunks::read(size_t chunk) const {
  ABORT_IF(chunk >= chunks(), "CorpusChunks: chunk {} of {}", chunk, chunks());
  size_t first = chunk * chunkLines_;
  std::vector<RawPair> pairs;
  if(tsv_) {
    std::vector<std::string> lines = linesOf(0, chunk);
    pairs.reserve(lines.size());
    for(size_t i = 0; i < lines.size(); ++i) {
      std::vector<std::string> fields;  // as many as tsvFields(): linesOf checked
      for(size_t from = 0;;) {
        size_t tab = lines[i].find('\t', from);
        fields.push_back(lines[i].substr(from, tab == std::string::npos ? std::string::npos : tab - from));
        if(tab == std::string::npos)
          break;
        from = tab + 1;
      }
      RawPair pair{"", "", first + i, "", ""};
      std::vector<std::string> text;  // the fields the extras leave: source and target
      for(size_t f = 0; f < fields.size(); ++f) {
        if(int(f) == extras_.weights.tsvField)
          pair.weights = std::move(fields[f]);
        else if(int(f) == extras_.alignment.tsvField)
          pair.alignment = std::move(fields[f]);
        else
          text.push_back(std::move(fields[f]));
      }
      pair.src = std::move(text[0]);
      pair.trg = std::move(text[1]);
      pairs.push_back(std::move(pair));
    }
    return pairs;
  }
  std::vector<std::string> src = linesOf(0, chunk), trg = linesOf(1, chunk);
  std::vector<std::string> weights = weightsSide_ >= 0 ? linesOf(size_t(weightsSide_), chunk) : std::vector<std::string>();
  std::vector<std::string> alignments =
      alignmentSide_ >= 0 ? linesOf(size_t(alignmentSide_), chunk) : std::vector<std::string>();
  pairs.reserve(src.size());
  for(size_t i = 0; i < src.size(); ++i)
    pairs.push_back(RawPair{std::move(src[i]), std::move(trg[i]), first + i,
                            weights.empty() ? std::string() : std::move(weights[i]),
                            alignments.empty() ? std::string() : std::move(alignments[i])});
  return pairs;
}

}  // namespace marian
