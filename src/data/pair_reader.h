#pragma once
// defines: marian::PairReader — the text pairs marian-scorer scores, pulled one at a time (memory
// stays a part's, whatever the files' size): a source and a target file read in step, one --tsv
// file of source TAB target, or a source file and an n-best list (Marian's "id ||| translation |||
// features ||| score"), each hypothesis paired with its source's line, the id.
#include <memory>
#include <string>
#include <vector>

#include "data/text_file.h"

namespace marian {

struct TextPair {
  std::string src, trg;
  std::string nbestLine;  // the n-best list's whole line (its fields are written back)
  size_t line = 0;        // 1-based, in the target file, the TSV file or the n-best list
};

class PairReader {
public:
  // files: source and target (or the n-best list); with tsv, the one file.
  PairReader(const std::vector<std::string>& files, bool tsv, bool nbest);
  // The next pair; false after the last. A target file with more or fewer lines than its source,
  // a TSV line without exactly two fields, an n-best line without its four fields or with an id
  // before an earlier one's or past the source's end is an error naming the file and line.
  bool next(TextPair& pair);
  // Where a pair's line is, for errors: "line 3 of 'src.de' and 'trg.en'", "line 3 of TSV file
  // 'pairs.tsv'", "line 3 of n-best list 'out.nbest'".
  std::string where(const TextPair& pair) const;

private:
  std::unique_ptr<LineReader> first_, second_;  // the source (or TSV file), the target (or n-best list)
  bool tsv_, nbest_;
  long sourceLine_ = -1;  // the n-best list's source: the 0-based line held in sourceText_
  std::string sourceText_;
};

// An n-best line with a feature added after its others, as Marian's scorer writes it (its fields
// split at "|||", spaces kept): "0 ||| text ||| F0= -1.2 Score= -3.45678 ||| -0.6"; each of
// `fieldsBefore` (an alignment, "WordScores= ...") goes before the features as a field of its own.
std::string nbestWithFeature(const std::string& nbestLine, const std::string& feature, float score,
                             const std::vector<std::string>& fieldsBefore);

}  // namespace marian
