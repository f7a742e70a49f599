#pragma once
// defines: marian::CorpusChunks — a parallel corpus left on disk, cut into chunks of consecutive
// lines whose byte offsets are known, so that any chunk can be read alone (and by several
// threads at once) while only the offsets stay in memory. One pass at the start counts the lines,
// records the offsets, checks every line (UTF-8, a TSV line's fields, weights, alignments) and that the sides have the
// same number of lines, so that bad data is named, every bad line at once, before training starts; a .gz file (or a
// pipe) is copied, decompressed, into --tempdir during that pass (the copy is unlinked at once,
// so it goes when the run ends, however it ends). The two sides come from two files or from one
// TSV file; what a line carries beside its pair (LineExtras) from files of their own or TSV fields.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/content_hash.h"

namespace marian {

struct RawPair {
  std::string src, trg;
  size_t line;            // 0-based
  std::string weights;    // the line's weights (--data-weighting), as written; empty without
  std::string alignment;  // the line's word alignments (--guided-alignment), as written; empty without
};

// Where one kind of what a line carries beside its pair is: a file of its own (a line a pair), or
// a field of the TSV line (0-based); neither: none.
struct LineExtra {
  std::string file;
  int tsvField = -1;
  bool given() const { return !file.empty() || tsvField >= 0; }
};
// What a corpus line carries beside its pair: --data-weighting's weights (one a line with
// sentenceWeights, else any number) and --guided-alignment's word alignments.
struct LineExtras {
  LineExtra weights, alignment;
  bool sentenceWeights = false;
};

class CorpusChunks {
public:
  // files: a source and a target file, or one TSV file when tsv (source TAB target per line,
  // and the extras' fields).
  CorpusChunks(const std::vector<std::string>& files, bool tsv, size_t chunkLines, const std::string& tempdir,
               const LineExtras& extras = LineExtras());
  ~CorpusChunks();
  CorpusChunks(const CorpusChunks&) = delete;
  CorpusChunks& operator=(const CorpusChunks&) = delete;

  size_t lines() const { return lines_; }
  size_t chunks() const { return (lines_ + chunkLines_ - 1) / chunkLines_; }
  size_t chunkLines() const { return chunkLines_; }
  // Empty lines on each side (their pairs are skipped when encoded)
  std::vector<size_t> emptyLines() const;
  // The pairs of one chunk in file order (a line the pass would refuse now is an error: the file
  // changed). Safe to call from several threads.
  std::vector<RawPair> read(size_t chunk) const;
  // The bytes of text on disk (the decompressed size for .gz): what a full pass reads.
  uint64_t bytes() const;
  // What identifies the corpus's text (decompressed): its line count and each file's content hash
  // (a TSV file's with the extras it holds).
  std::string identity() const;
  // The content hashes of the extras' own files ("" without any): not the corpus's, as a resume
  // may train on with other weights or alignments (Marian's too), but the ranks' copies must agree.
  std::string extrasIdentity() const;

private:
  struct Side {
    std::string name;               // as the user gave it
    int fd = -1;                    // the file, or its decompressed copy
    std::vector<uint64_t> offsets;  // where each chunk's first line starts
    uint64_t size = 0;              // bytes
    ContentHash content;            // of the text the pass read
    size_t lines = 0;
    size_t emptyLines = 0, badLines = 0;
    std::vector<std::string> problems;  // the first bad lines, named
  };
  void scan(const std::vector<std::string>& files, const std::string& tempdir);  // the pass
  std::vector<std::string> linesOf(size_t k, size_t chunk) const;  // of side k

  // a line's problem on side k: UTF-8, its TSV fields as many as expected, its extras' text
  std::string problemOf(size_t k, const char* line, size_t n) const;
  // what side k holds: a side's text, TSV lines, or an extra's own file
  enum class Kind { text, tsv, weights, alignment };
  Kind kindOfSide(size_t k) const;
  // what is wrong with an extra's text (a line of its file, or its TSV field)
  std::string extraProblem(Kind kind, const char* text, size_t n) const;
  std::string fileLabel(size_t k) const;  // "Corpus file 'x'", "Weights file 'x'", ...
  size_t tsvFields() const;  // of a TSV line: the source, the target and the extras' fields

  std::vector<Side> sides_;  // two files or one TSV file, then the extras' own files
  bool tsv_;
  LineExtras extras_;
  int weightsSide_ = -1, alignmentSide_ = -1;  // the extras' files among sides_
  size_t chunkLines_, lines_ = 0;
};

// What is wrong with a corpus line (without its line ending), in words that follow "line N", or "":
// not UTF-8, or (tsvFields > 0) not that many TAB-separated fields (`fieldsNamed` what they are).
std::string lineProblem(const char* line, size_t n, size_t tsvFields,
                        const std::string& fieldsNamed = "a source and a target separated by one TAB");
// The weights of a line (--data-weighting) in order: numbers separated by spaces or TABs, as
// Marian's std::stof reads them (a sign, an exponent); stops at the first that is not a number or
// not a finite float.
enum class WeightsResult { ok, notANumber, outOfRange };
WeightsResult forEachWeight(const char* line, size_t n, const std::function<void(float)>& onWeight);
// What is wrong with a line of weights (--data-weighting): not finite numbers separated by spaces,
// none, or (sentenceLevel) more than one.
std::string weightsProblem(const char* line, size_t n, bool sentenceLevel);

}  // namespace marian
