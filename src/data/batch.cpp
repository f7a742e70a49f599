#include "data/batch.h"

#include <algorithm>

#include "common/error.h"

namespace marian {

namespace {
void fill(const std::vector<IdSpan>& sents, int& len, std::vector<int>& ids, std::vector<float>& mask,
          size_t& words) {
  len = 0;
  for(const IdSpan& s : sents)
    len = std::max(len, int(s.size()));
  ids.assign(sents.size() * size_t(len), Vocab::kEos);
  mask.assign(sents.size() * size_t(len), 0.f);
  words = 0;
  for(size_t b = 0; b < sents.size(); ++b) {
    std::copy(sents[b].begin(), sents[b].end(), ids.begin() + b * len);
    std::fill(mask.begin() + b * len, mask.begin() + b * len + sents[b].size(), 1.f);
    words += sents[b].size();
  }
}

std::vector<IdSpan> spans(const std::vector<const std::vector<int>*>& sents) {
  std::vector<IdSpan> out;
  for(const std::vector<int>* s : sents)
    out.push_back(IdSpan{s->data(), s->size()});
  return out;
}
}  // namespace

namespace {
// Each target's weights, one a token, into the batch's trgWeights (1 at padding).
void fillWeights(const std::vector<std::vector<float>>& rows, Batch& b) {
  if(rows.empty())
    return;
  b.trgWeights.assign(size_t(b.sentences) * b.trgLen, 1.f);
  for(size_t s = 0; s < rows.size(); ++s)
    std::copy(rows[s].begin(), rows[s].end(), b.trgWeights.begin() + s * b.trgLen);
}

// Sentence `sentence`'s alignment points onto the batch, each with its share of its target position.
void addAlignment(int sentence, const AlignmentPoint* points, size_t n, std::vector<Batch::AlignmentLink>& out) {
  std::vector<int> onTarget;  // the points on each target position
  for(size_t i = 0; i < n; ++i) {
    if(onTarget.size() <= points[i].trg)
      onTarget.resize(points[i].trg + 1, 0);
    ++onTarget[points[i].trg];
  }
  for(size_t i = 0; i < n; ++i)
    out.push_back(Batch::AlignmentLink{sentence, int(points[i].src), int(points[i].trg),
                                       1.f / float(onTarget[points[i].trg])});
}

// The alignment links of sentences [begin, begin + n), numbered from `first`.
void copyAlignment(const Batch& from, int begin, int n, int first, std::vector<Batch::AlignmentLink>& out) {
  for(const Batch::AlignmentLink& l : from.guidedAlignment)
    if(l.sentence >= begin && l.sentence < begin + n)
      out.push_back(Batch::AlignmentLink{l.sentence - begin + first, l.src, l.trg, l.share});
}

// The weights of rows [begin, begin + n) at their real positions (none when the batch has none).
std::vector<std::vector<float>> weightRows(const Batch& b, int begin, int n) {
  std::vector<std::vector<float>> out;
  for(int s = begin; !b.trgWeights.empty() && s < begin + n; ++s) {
    std::vector<float> row;
    for(int t = 0; t < b.trgLen && b.trgMask[size_t(s) * b.trgLen + t] != 0.f; ++t)
      row.push_back(b.trgWeights[size_t(s) * b.trgLen + t]);
    out.push_back(std::move(row));
  }
  return out;
}
}  // namespace

Batch Batch::fromPairs(const Corpus& corpus, const std::vector<size_t>& indices) {
  Batch b;
  b.sentences = int(indices.size());
  std::vector<IdSpan> src, trg;
  bool weighted = false;
  for(size_t i : indices) {
    PairView p = corpus[i];
    src.push_back(p.src);
    trg.push_back(p.trg);
    weighted = weighted || p.weights;
  }
  fill(src, b.srcLen, b.srcIds, b.srcMask, b.srcWords);
  fill(trg, b.trgLen, b.trgIds, b.trgMask, b.trgWords);
  if(weighted) {  // each token's weight (a sentence's at each of its tokens), 1 at padding
    b.trgWeights.assign(size_t(b.sentences) * b.trgLen, 1.f);
    for(size_t s = 0; s < indices.size(); ++s) {
      PairView p = corpus[indices[s]];
      for(size_t t = 0; t < p.trg.size(); ++t)
        b.trgWeights[s * b.trgLen + t] = p.weights[p.weightCount == 1 ? 0 : t];
    }
  }
  for(size_t s = 0; s < indices.size(); ++s) {
    PairView p = corpus[indices[s]];
    addAlignment(int(s), p.alignment, p.alignmentCount, b.guidedAlignment);
  }
  return b;
}

Batch Batch::fromSources(const std::vector<const std::vector<int>*>& sources) {
  Batch b;
  b.sentences = int(sources.size());
  fill(spans(sources), b.srcLen, b.srcIds, b.srcMask, b.srcWords);
  return b;
}

namespace {
// The sentences of rows [begin, begin + n) without padding.
std::vector<std::vector<int>> rows(const std::vector<int>& ids, const std::vector<float>& mask, int len, int begin,
                                   int n) {
  std::vector<std::vector<int>> out;
  for(int s = begin; s < begin + n; ++s) {
    std::vector<int> sent;
    for(int t = 0; t < len && mask[size_t(s) * len + t] != 0.f; ++t)
      sent.push_back(ids[size_t(s) * len + t]);
    out.push_back(std::move(sent));
  }
  return out;
}

Batch fromRows(const std::vector<std::vector<int>>& srcRows, const std::vector<std::vector<int>>& trgRows) {
  std::vector<const std::vector<int>*> src, trg;
  for(size_t i = 0; i < srcRows.size(); ++i) {
    src.push_back(&srcRows[i]);
    trg.push_back(&trgRows[i]);
  }
  return Batch::fromPairs(src, trg);
}
}  // namespace

Batch Batch::fromPairs(const std::vector<const std::vector<int>*>& sources,
                       const std::vector<const std::vector<int>*>& targets) {
  ABORT_IF(sources.size() != targets.size(), "A batch of {} sources and {} targets", sources.size(), targets.size());
  Batch b;
  b.sentences = int(sources.size());
  fill(spans(sources), b.srcLen, b.srcIds, b.srcMask, b.srcWords);
  fill(spans(targets), b.trgLen, b.trgIds, b.trgMask, b.trgWords);
  return b;
}

Batch Batch::slice(int begin, int n) const {
  ABORT_IF(begin < 0 || n <= 0 || begin + n > sentences, "Batch slice [{}, {}) of {}", begin, begin + n, sentences);
  Batch b = fromRows(rows(srcIds, srcMask, srcLen, begin, n), rows(trgIds, trgMask, trgLen, begin, n));
  fillWeights(weightRows(*this, begin, n), b);
  copyAlignment(*this, begin, n, 0, b.guidedAlignment);
  return b;
}

Batch Batch::merge(const std::vector<Batch>& batches) {
  ABORT_IF(batches.empty(), "Batch::merge of no batches");
  if(batches.size() == 1)
    return batches[0];
  std::vector<std::vector<int>> src, trg;
  std::vector<std::vector<float>> weights;
  std::vector<int> parts;
  std::vector<AlignmentLink> alignment;
  for(const Batch& b : batches) {
    ABORT_IF(!b.parts.empty(), "Batch::merge of a merged batch");
    ABORT_IF(b.trgWeights.empty() != batches[0].trgWeights.empty(), "Batch::merge of weighted and unweighted batches");
    ABORT_IF(b.guidedAlignment.empty() != batches[0].guidedAlignment.empty(),
             "Batch::merge of batches with and without alignments");
    auto s = rows(b.srcIds, b.srcMask, b.srcLen, 0, b.sentences), t = rows(b.trgIds, b.trgMask, b.trgLen, 0, b.sentences);
    auto w = weightRows(b, 0, b.sentences);
    src.insert(src.end(), s.begin(), s.end());
    trg.insert(trg.end(), t.begin(), t.end());
    weights.insert(weights.end(), w.begin(), w.end());
    copyAlignment(b, 0, b.sentences, int(src.size()) - b.sentences, alignment);
    parts.push_back(b.sentences);
  }
  Batch merged = fromRows(src, trg);
  fillWeights(weights, merged);
  merged.guidedAlignment = std::move(alignment);
  merged.parts = std::move(parts);
  return merged;
}

std::vector<Batch> Batch::split() const {
  if(parts.empty())
    return {*this};
  std::vector<Batch> out;
  int begin = 0;
  for(int n : parts) {
    out.push_back(slice(begin, n));
    begin += n;
  }
  return out;
}

}  // namespace marian
