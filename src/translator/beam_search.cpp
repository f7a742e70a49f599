#include "translator/beam_search.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/error.h"
#include "data/vocab.h"
#include "tensors/kernels.h"

namespace marian {

BeamSearch::BeamSearch(EncoderDecoder& model, ExpressionGraph& graph, const BeamOptions& options)
    : model_(model), graph_(graph), options_(options) {
  ABORT_IF(options.beamSize < 1, "--beam-size must be >= 1, not {}", options.beamSize);
  ABORT_IF(options.maxLengthFactor <= 0, "--max-length-factor must be > 0");
}

std::vector<std::vector<Hypothesis>> BeamSearch::search(const Batch& batch) {
  int B = batch.sentences, S = batch.srcLen, K = options_.beamSize;
  graph_.clear();
  Expr encoded = model_.encodeSources(graph_, batch);
  graph_.forward();
  std::vector<float> context = kernels::toHost(encoded->val());
  size_t D = context.size() / (size_t(B) * size_t(S));

  struct Live {
    int sentence;
    std::vector<int> words;
    float score;
    std::vector<float> wordScores;
  };
  std::vector<Live> live;
  std::vector<std::vector<Hypothesis>> finished(static_cast<size_t>(B));
  std::vector<int> maxLength(static_cast<size_t>(B));
  for(int s = 0; s < B; ++s) {
    float length = 0;
    for(int t = 0; t < S; ++t)
      length += batch.srcMask[size_t(s) * S + t];
    maxLength[size_t(s)] = std::max(1, int(std::ceil(options_.maxLengthFactor * length)));
    live.push_back({s, {}, 0.f, {}});
  }

  for(int t = 0; !live.empty(); ++t) {
    // one row per live hypothesis: its source's mask and encoder states, its words so far
    int H = int(live.size());
    Batch step;
    step.sentences = H;
    step.srcLen = S;
    step.trgLen = t + 1;
    step.srcMask.resize(size_t(H) * S);
    step.trgIds.assign(size_t(H) * (t + 1), options_.eosId);
    step.trgMask.assign(size_t(H) * (t + 1), 1.f);
    std::vector<float> rows(size_t(H) * S * D);
    for(int h = 0; h < H; ++h) {
      size_t s = size_t(live[size_t(h)].sentence);
      std::copy_n(batch.srcMask.begin() + long(s * S), S, step.srcMask.begin() + long(size_t(h) * S));
      std::memcpy(rows.data() + size_t(h) * S * D, context.data() + s * S * D, S * D * sizeof(float));
      std::copy(live[size_t(h)].words.begin(), live[size_t(h)].words.end(), step.trgIds.begin() + long(size_t(h) * (t + 1)));
    }
    graph_.clear();
    Expr logProbs = model_.nextWordLogProbs(graph_, step, graph_.constant({H, S, int(D)}, std::move(rows)));
    graph_.forward();
    std::vector<float> lp = kernels::toHost(logProbs->val());
    size_t V = lp.size() / size_t(H);

    std::vector<Live> next;
    for(int h0 = 0; h0 < H;) {  // the live hypotheses of one sentence are adjacent
      int s = live[size_t(h0)].sentence, h1 = h0;
      while(h1 < H && live[size_t(h1)].sentence == s)
        ++h1;
      auto& done = finished[size_t(s)];
      size_t keep = size_t(K) - done.size();
      // Marian's limit: the hypotheses of the last step end there, </s> or not
      bool last = t + 1 >= maxLength[size_t(s)];
      std::vector<std::pair<float, size_t>> candidates;  // (score, h * V + word)
      for(int h = h0; h < h1; ++h)
        for(size_t w = 0; w < V; ++w)
          if(options_.allowUnk || int(w) != options_.unkId)
            candidates.push_back({live[size_t(h)].score + lp[size_t(h) * V + w] - options_.wordPenalty, size_t(h) * V + w});
      keep = std::min(keep, candidates.size());
      auto better = [](const std::pair<float, size_t>& a, const std::pair<float, size_t>& b) {
        return a.first > b.first || (a.first == b.first && a.second < b.second);
      };
      std::partial_sort(candidates.begin(), candidates.begin() + long(keep), candidates.end(), better);
      for(size_t c = 0; c < keep; ++c) {
        size_t h = candidates[c].second / V;
        int w = int(candidates[c].second % V);
        const Live& from = live[h];
        std::vector<float> wordScores = from.wordScores;
        wordScores.push_back(candidates[c].first - from.score);
        if(w == options_.eosId || last) {
          Hypothesis done1{from.words, candidates[c].first, candidates[c].first, std::move(wordScores)};
          if(w != options_.eosId)
            done1.words.push_back(w);
          float length = float(t + 1);  // tokens emitted, </s> included
          if(options_.normalize > 0)
            done1.normalized = candidates[c].first / std::pow(length, options_.normalize);
          done.push_back(std::move(done1));
        } else {
          Live n{s, from.words, candidates[c].first, std::move(wordScores)};
          n.words.push_back(w);
          next.push_back(std::move(n));
        }
      }
      h0 = h1;
    }
    live = std::move(next);
  }
  for(auto& done : finished)
    std::stable_sort(done.begin(), done.end(),
                     [](const Hypothesis& a, const Hypothesis& b) { return a.normalized > b.normalized; });
  return finished;
}

}  // namespace marian
