#include "data/pair_reader.h"

#include <cstdlib>

#include "common/error.h"
#include "common/format.h"
#include "data/corpus_chunks.h"

namespace marian {

namespace {
// An n-best line's fields, split at " ||| " as Marian reads them; fewer than four is an error
// naming `where`.
std::vector<std::string> nbestFields(const std::string& line, const std::string& where) {
  std::vector<std::string> fields;
  const std::string sep = " ||| ";
  size_t from = 0;
  for(size_t at; (at = line.find(sep, from)) != std::string::npos; from = at + sep.size())
    fields.push_back(line.substr(from, at - from));
  fields.push_back(line.substr(from));
  ABORT_IF(fields.size() < 4, "{} has {} field(s), not an n-best line (id ||| translation ||| features ||| score)",
           where, fields.size());
  return fields;
}
}  // namespace

std::string nbestWithFeature(const std::string& nbestLine, const std::string& feature, float score,
                             const std::vector<std::string>& fieldsBefore) {
  std::vector<std::string> fields;
  size_t from = 0;
  for(size_t at; (at = nbestLine.find("|||", from)) != std::string::npos; from = at + 3)
    fields.push_back(nbestLine.substr(from, at - from));
  fields.push_back(nbestLine.substr(from));
  ABORT_IF(fields.size() < 3, "An n-best line without its features: '{}'", nbestLine);
  std::string added;
  for(const std::string& field : fieldsBefore)
    added += " " + field + " |||";
  fields[2] = added + fields[2] + feature + "= " + formatNumber("%g", double(score)) + " ";
  std::string line = fields[0];
  for(size_t i = 1; i < fields.size(); ++i)
    line += "|||" + fields[i];
  return line;
}

PairReader::PairReader(const std::vector<std::string>& files, bool tsv, bool nbest) : tsv_(tsv), nbest_(nbest) {
  ABORT_IF(tsv && nbest, "--tsv and --n-best together: an n-best list is read beside its source file");
  ABORT_IF(tsv && files.size() != 1, "--tsv reads one file with a source and a target per line, got {} files",
           files.size());
  ABORT_IF(!tsv && files.size() != 2, "Give a source and a {} file with -t/--train-sets (or --tsv and one), got {}",
           nbest ? "n-best" : "target", files.size());
  // a TSV line's problems, UTF-8 included, are lineProblem's (next)
  first_ = std::make_unique<LineReader>(files[0], tsv ? "TSV file" : "Source file", /*checkUtf8=*/!tsv);
  if(!tsv)
    second_ = std::make_unique<LineReader>(files[1], nbest ? "N-best list" : "Target file");
}

std::string PairReader::where(const TextPair& pair) const {
  std::string line = "line " + std::to_string(pair.line) + " of ";
  if(tsv_)
    return line + "TSV file '" + first_->path() + "'";
  if(nbest_)
    return line + "n-best list '" + second_->path() + "'";
  return line + "'" + first_->path() + "' and '" + second_->path() + "'";
}

bool PairReader::next(TextPair& pair) {
  if(tsv_) {
    std::string text;
    if(!first_->next(text))
      return false;
    pair.line = first_->linesRead();
    std::string problem = lineProblem(text.data(), text.size(), /*tsvFields=*/2);
    ABORT_IF(!problem.empty(), "TSV file '{}' line {} {}", first_->path(), pair.line, problem);
    size_t tab = text.find('\t');
    pair.src = text.substr(0, tab);
    pair.trg = text.substr(tab + 1);
    return true;
  }
  std::string text;
  bool more = second_->next(text);
  pair.line = second_->linesRead();
  if(!nbest_) {
    std::string src;
    bool moreSource = first_->next(src);
    ABORT_IF(more != moreSource, "Source file '{}' and target file '{}' differ in length: the {} ends after {} lines",
             first_->path(), second_->path(), more ? "source" : "target", more ? pair.line - 1 : pair.line);
    pair.src = std::move(src);
    pair.trg = std::move(text);
    return more;
  }
  if(!more)
    return false;
  std::string where = "N-best list '" + second_->path() + "' line " + std::to_string(pair.line);
  std::vector<std::string> fields = nbestFields(text, where);
  char* end = nullptr;
  long id = std::strtol(fields[0].c_str(), &end, 10);
  ABORT_IF(fields[0].empty() || *end || id < 0, "{}: its id '{}' is not a line number of the source", where,
           fields[0]);
  ABORT_IF(id < sourceLine_, "{}: its id {} comes after id {}; an n-best list is in its source's order", where, id,
           sourceLine_);
  while(sourceLine_ < id) {
    ABORT_IF(!first_->next(sourceText_), "{}: its id {} is past the end of source file '{}' ({} lines)", where, id,
             first_->path(), first_->linesRead());
    ++sourceLine_;
  }
  pair.src = sourceText_;
  pair.trg = fields[1];
  pair.nbestLine = std::move(text);
  return true;
}

}  // namespace marian
