#include "translator/scorer.h"

#include <atomic>

#include "common/error.h"
#include "common/parallel.h"
#include "data/corpus.h"
#include "tensors/kernels.h"
#include "translator/translator.h"

namespace marian {

ScoringBatches scoringBatches(const Options& o) {
  return {size_t(o.get<int>("mini-batch")), size_t(o.get<int>("mini-batch-words")), size_t(o.get<int>("maxi-batch")),
          o.get<std::string>("maxi-batch-sort"), size_t(o.get<int>("workspace"))};
}

Scorer::Scorer(const Options& modelOptions, const std::vector<std::shared_ptr<Vocab>>& vocabs,
               const std::vector<Device>& devices, const ScoringBatches& batches)
    : models_(modelOptions, vocabs, devices, batches.workspaceMB), batches_(batches),
      rightLeft_(modelOptions.get<bool>("right-left")) {}

std::vector<PairScore> Scorer::score(std::vector<std::vector<int>> sources, std::vector<std::vector<int>> targets,
                                     bool wordLogProbs, bool alignments) {
  ABORT_IF(sources.size() != targets.size(), "{} sources but {} targets to score", sources.size(), targets.size());
  for(size_t i = 0; rightLeft_ && i < sources.size(); ++i) {
    reverseWords(sources[i]);
    reverseWords(targets[i]);
  }
  std::vector<size_t> srcLengths, trgLengths;
  for(size_t i = 0; i < sources.size(); ++i) {
    srcLengths.push_back(sources[i].size());
    trgLengths.push_back(targets[i].size());
  }
  DecodingLimits limits;
  limits.maxiBatch = batches_.maxiBatch;
  limits.sortByLength = batches_.sortBy != "none";
  limits.miniBatchWords = batches_.miniBatchWords;
  std::vector<std::vector<size_t>> batchLines =
      batches_.sortBy == "trg" ? decodingBatches(srcLengths, batches_.miniBatch, limits, &trgLengths, &srcLengths)
                               : decodingBatches(srcLengths, batches_.miniBatch, limits, nullptr, &trgLengths);

  std::vector<PairScore> out(sources.size());
  for(size_t d = 0; d < models_.size(); ++d)
    models_.model(d).wantAlignment(alignments);
  std::atomic<size_t> nextBatch{0};
  parallelFor(models_.size(), [&](size_t d) {
    ExpressionGraph& graph = models_.graph(d);
    for(size_t b = nextBatch++; b < batchLines.size(); b = nextBatch++) {
      std::vector<const std::vector<int>*> src, trg;
      for(size_t line : batchLines[b]) {
        src.push_back(&sources[line]);
        trg.push_back(&targets[line]);
      }
      graph.clear();
      Batch batch = Batch::fromPairs(src, trg);
      Expr ce = models_.model(d).labelCrossEntropies(graph, batch, /*training=*/false);
      Expr attention = alignments ? models_.model(d).alignment() : nullptr;  // [sentences, heads, trgLen, srcLen]
      ABORT_IF(alignments && !attention, "--alignment: this model gives no attention to align with");
      graph.forward(attention ? std::vector<Expr>{ce, attention} : std::vector<Expr>{ce});
      std::vector<float> labelCe = kernels::toHost(ce->val());  // sentence by sentence
      std::vector<float> weights = attention ? kernels::toHost(attention->val()) : std::vector<float>();
      size_t labels = 0;
      for(size_t line : batchLines[b])
        labels += targets[line].size();
      ABORT_IF(labels != labelCe.size(), "The model gave {} label cross-entropies for {} target labels", labelCe.size(),
               labels);
      size_t at = 0, row = 0;
      for(size_t line : batchLines[b]) {
        PairScore& s = out[line];
        if(attention) {  // the guided head's rows of the real target tokens, over the real source tokens
          int heads = attention->shape()[1];
          for(size_t t = 0; t < targets[line].size(); ++t) {
            const float* p = weights.data() + ((row * size_t(heads)) * size_t(batch.trgLen) + t) * size_t(batch.srcLen);
            s.alignment.emplace_back(p, p + sources[line].size());
          }
          if(rightLeft_)
            s.alignment = readingOrder(s.alignment);
        }
        ++row;
        s.labels = targets[line].size();
        for(size_t k = 0; k < s.labels; ++k) {
          s.logProb -= labelCe[at + k];
          if(wordLogProbs)
            s.wordLogProbs.push_back(-labelCe[at + k]);
        }
        at += s.labels;
      }
    }
  });
  return out;
}

}  // namespace marian
