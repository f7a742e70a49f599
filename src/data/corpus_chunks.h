#pragma once
// defines: marian::CorpusChunks — a parallel corpus left on disk, cut into chunks of consecutive
// lines whose byte offsets are known, so that any chunk can be read alone (and by several
// threads at once) while only the offsets stay in memory. One pass at the start counts the lines,
// records the offsets, checks every line (UTF-8, a TSV line's fields, the weights) and that the sides have the
// same number of lines, so that bad data is named, every bad line at once, before training starts; a .gz file (or a
// pipe) is copied, decompressed, into --tempdir during that pass (the copy is unlinked at once,
// so it goes when the run ends, however it ends). The two sides come from two files or from one
// TSV file; --data-weighting's weights from a third file or a third TSV field.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/content_hash.h"

namespace marian {

struct RawPair {
  std::string src, trg;
  size_t line;          // 0-based
  std::string weights;  // the line's weights (--data-weighting), as written; empty without
};

// Where --data-weighting's weights are: a third file (files[2]), or a TSV field among three; a line
// of one weight (sentence level) or of any number (word level).
struct ChunkWeights {
  int tsvField = -1;
  bool sentenceLevel = false;
};

class CorpusChunks {
public:
  // files: a source and a target file, or one TSV file when tsv (source TAB target per line);
  // with weights, a third file of them, or the TSV field weights.tsvField.
  CorpusChunks(const std::vector<std::string>& files, bool tsv, size_t chunkLines, const std::string& tempdir,
               ChunkWeights weights = ChunkWeights());
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
  // (a TSV file's with the weights it holds).
  std::string identity() const;
  // The weights file's content hash ("" without one): not the corpus's, as a resume may train on
  // with other weights (Marian's too), but the ranks' copies must agree.
  std::string weightsIdentity() const;

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

  // a line's problem on side k: its weights are numbers, its TSV fields as many as expected
  std::string problemOf(size_t k, const char* line, size_t n) const;

  std::vector<Side> sides_;  // two files and perhaps the weights, or one TSV file
  bool tsv_;
  ChunkWeights weights_;
  size_t chunkLines_, lines_ = 0;
};

// What is wrong with a corpus line (without its line ending), in words that follow "line N", or "":
// not UTF-8, or (tsvFields > 0) not that many TAB-separated fields.
std::string lineProblem(const char* line, size_t n, size_t tsvFields);
// The weights of a line (--data-weighting) in order: numbers separated by spaces or TABs, as
// Marian's std::stof reads them (a sign, an exponent); stops at the first that is not a number or
// not a finite float.
enum class WeightsResult { ok, notANumber, outOfRange };
WeightsResult forEachWeight(const char* line, size_t n, const std::function<void(float)>& onWeight);
// What is wrong with a line of weights (--data-weighting): not finite numbers separated by spaces,
// none, or (sentenceLevel) more than one.
std::string weightsProblem(const char* line, size_t n, bool sentenceLevel);

}  // namespace marian
