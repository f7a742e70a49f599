#include "data/batch.h"

#include <algorithm>

#include "common/error.h"

namespace marian {

namespace {
void fill(const std::vector<const std::vector<int>*>& sents, int& len, std::vector<int>& ids,
          std::vector<float>& mask, size_t& words) {
  len = 0;
  for(auto* s : sents)
    len = std::max(len, int(s->size()));
  ids.assign(sents.size() * size_t(len), Vocab::kEos);
  mask.assign(sents.size() * size_t(len), 0.f);
  words = 0;
  for(size_t b = 0; b < sents.size(); ++b) {
    std::copy(sents[b]->begin(), sents[b]->end(), ids.begin() + b * len);
    std::fill(mask.begin() + b * len, mask.begin() + b * len + sents[b]->size(), 1.f);
    words += sents[b]->size();
  }
}
}  // namespace

Batch Batch::fromPairs(const Corpus& corpus, const std::vector<size_t>& indices) {
  Batch b;
  b.sentences = int(indices.size());
  std::vector<const std::vector<int>*> src, trg;
  for(size_t i : indices) {
    src.push_back(&corpus[i].src);
    trg.push_back(&corpus[i].trg);
  }
  fill(src, b.srcLen, b.srcIds, b.srcMask, b.srcWords);
  fill(trg, b.trgLen, b.trgIds, b.trgMask, b.trgWords);
  return b;
}

Batch Batch::fromSources(const std::vector<const std::vector<int>*>& sources) {
  Batch b;
  b.sentences = int(sources.size());
  fill(sources, b.srcLen, b.srcIds, b.srcMask, b.srcWords);
  return b;
}

Batch Batch::slice(int begin, int n) const {
  ABORT_IF(begin < 0 || n <= 0 || begin + n > sentences, "Batch slice [{}, {}) of {}", begin, begin + n, sentences);
  auto rows = [&](const std::vector<int>& ids, const std::vector<float>& mask, int len) {
    std::vector<std::vector<int>> out;
    for(int s = begin; s < begin + n; ++s) {
      std::vector<int> sent;
      for(int t = 0; t < len && mask[size_t(s) * len + t] != 0.f; ++t)
        sent.push_back(ids[size_t(s) * len + t]);
      out.push_back(std::move(sent));
    }
    return out;
  };
  auto srcRows = rows(srcIds, srcMask, srcLen), trgRows = rows(trgIds, trgMask, trgLen);
  std::vector<const std::vector<int>*> src, trg;
  for(int i = 0; i < n; ++i) {
    src.push_back(&srcRows[i]);
    trg.push_back(&trgRows[i]);
  }
  Batch b;
  b.sentences = n;
  fill(src, b.srcLen, b.srcIds, b.srcMask, b.srcWords);
  fill(trg, b.trgLen, b.trgIds, b.trgMask, b.trgWords);
  return b;
}

}  // namespace marian
