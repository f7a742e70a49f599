#include "translator/beam_search.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "data/vocab.h"
#include "tensors/kernels.h"

namespace marian {

BeamSearch::BeamSearch(EncoderDecoder& model, ExpressionGraph& graph, const BeamOptions& options)
    : BeamSearch(std::vector<ScoringModel>{{&model, &graph, 1.f}}, options) {}

BeamSearch::BeamSearch(std::vector<ScoringModel> models, const BeamOptions& options)
    : models_(std::move(models)), options_(options) {
  ABORT_IF(options.beamSize < 1, "--beam-size must be >= 1, not {}", options.beamSize);
  ABORT_IF(options.maxLengthFactor <= 0, "--max-length-factor must be > 0");
  ABORT_IF(models_.empty(), "Beam search needs a model");
  for(size_t m = 0; m < models_.size(); ++m) {
    models_[m].model->wantAlignment(options.alignment && m == 0);
    states_.push_back(std::make_unique<DecoderState>(models_[m].graph->device()));
  }
}

BeamSearch::~BeamSearch() = default;

std::vector<std::vector<Hypothesis>> BeamSearch::search(const Batch& batch, uint64_t samplingSeed) {
  int B = batch.sentences, S = batch.srcLen, K = options_.beamSize;
  size_t M = models_.size();
  for(size_t m = 0; m < M; ++m) {
    ExpressionGraph& graph = *models_[m].graph;
    states_[m]->clear();
    graph.clear();
    models_[m].model->startDecoding(graph, batch, *states_[m]);
    graph.forward(states_[m]->pendingValues());
  }

  struct Live {
    int sentence;
    std::vector<int> words;
    float score;
    std::vector<float> wordScores;
    int row;  // its row in the decoder states
    int alignment;  // its last token's entry of `alignments` (-1: none)
    std::vector<float> modelScores;  // each model's summed log-probability
  };
  // --alignment: each token's P(source token) with the entry of the token before it, so that a
  // step adds one row per hypothesis and a finished one traces its rows back (as Marian's)
  struct AlignmentEntry {
    int before;
    std::vector<float> row;
  };
  std::vector<AlignmentEntry> alignments;
  auto traceBack = [&](int entry) {
    SoftAlignment rows;
    for(; entry >= 0; entry = alignments[size_t(entry)].before)
      rows.push_back(alignments[size_t(entry)].row);
    std::reverse(rows.begin(), rows.end());
    return rows;
  };
  std::vector<Live> live;
  std::vector<std::vector<Hypothesis>> finished(static_cast<size_t>(B));
  std::vector<int> maxLength(static_cast<size_t>(B)), srcLength(static_cast<size_t>(B));
  for(int s = 0; s < B; ++s) {
    float own = 0;  // tokens of the sentence's source, </s> included
    for(int t = 0; t < S; ++t)
      own += batch.srcMask[size_t(s) * S + t];
    srcLength[size_t(s)] = int(own);
    if(own <= 1.f) {  // an empty line: as Marian, </s> at once with score 0, the empty translation,
      // ranked as a finished translation of length 1 ((0 - penalty x 1) / 1^normalize)
      finished[size_t(s)].push_back(Hypothesis{{}, 0.f, -options_.wordPenalty, {0.f}, {}, std::vector<float>(M, 0.f)});
      if(options_.alignment)  // </s> on the source's one token
        finished[size_t(s)].back().alignment = {{1.f}};
      continue;
    }
    // Marian's cap: the longest source of the batch (its width S), so a sentence's translation
    // depends on its batch; or, when asked, the sentence's own source
    float length = options_.maxLengthPerSentence ? own : float(S);
    maxLength[size_t(s)] = std::max(1, int(std::ceil(options_.maxLengthFactor * length)));
    live.push_back({s, {}, 0.f, {}, s, -1, std::vector<float>(M, 0.f)});
  }

  for(int t = 0; !live.empty(); ++t) {
    // the state's rows become the live hypotheses, each continuing its parent's row
    int H = int(live.size());
    std::vector<int> parents(static_cast<size_t>(H)), sentences(static_cast<size_t>(H));
    DecodingStep step;
    step.position = t;
    for(int h = 0; h < H; ++h) {
      Live& l = live[size_t(h)];
      parents[size_t(h)] = l.row;
      l.row = h;
      sentences[size_t(h)] = l.sentence;
      step.lastWords.push_back(l.words.empty() ? options_.eosId : l.words.back());
      step.prefixes.push_back(&l.words);
    }
    step.sentences = &sentences;
    // each model's log-probabilities [H, V]; the ensemble's their sum, each times its weight
    std::vector<std::vector<float>> modelLogProbs(M);
    std::vector<float> attention;
    for(size_t m = 0; m < M; ++m) {
      ExpressionGraph& graph = *models_[m].graph;
      DecoderState& state = *states_[m];
      state.keepRows(parents);
      graph.clear();
      Expr logProbs = models_[m].model->decodeStep(graph, step, state);
      std::vector<Expr> keep = state.pendingValues();
      keep.push_back(logProbs);
      Expr alignment = options_.alignment && m == 0 ? models_[m].model->alignment() : nullptr;  // [H, S]
      ABORT_IF(options_.alignment && m == 0 && !alignment, "--alignment: this model gives no attention to align with");
      if(alignment)
        keep.push_back(alignment);
      graph.forward(keep);
      modelLogProbs[m] = kernels::toHost(logProbs->val());
      if(alignment)
        attention = kernels::toHost(alignment->val());
    }
    // lp: what the search ranks by; one model of weight 1, unsampled, ranks by its own (not copied)
    bool combined = M > 1 || models_[0].weight != 1.f || options_.sampling.on();
    std::vector<float> lp = combined ? modelLogProbs[0] : std::move(modelLogProbs[0]);
    if(M > 1 || models_[0].weight != 1.f) {
      for(float& v : lp)
        v *= models_[0].weight;
      for(size_t m = 1; m < M; ++m)
        for(size_t i = 0; i < lp.size(); ++i)
          lp[i] += models_[m].weight * modelLogProbs[m][i];
    }
    auto raw = [&](size_t m) -> const std::vector<float>& { return combined || m > 0 ? modelLogProbs[m] : lp; };
    size_t V = lp.size() / size_t(H);
    if(options_.sampling.on()) {  // each row's distribution sampled: its best continuation is a draw
      uint64_t step = OutputSampling::stepKey(samplingSeed, t);
      for(int h = 0; h < H; ++h)
        options_.sampling.apply(lp.data() + size_t(h) * V, V, step, size_t(h), options_.allowUnk ? -1 : options_.unkId);
    }

    std::vector<Live> next;
    for(int h0 = 0; h0 < H;) {  // the live hypotheses of one sentence are adjacent
      int s = live[size_t(h0)].sentence, h1 = h0;
      while(h1 < H && live[size_t(h1)].sentence == s)
        ++h1;
      auto& done = finished[size_t(s)];
      size_t keep = size_t(K) - done.size();
      // Marian's limit: the hypotheses of the last step end there, </s> or not
      bool last = t + 1 >= maxLength[size_t(s)];
      // the `keep` best (score, h * V + word), ties to the lower index: a heap whose top is the
      // worst kept, so most of the H x V candidates cost one comparison
      auto better = [](const std::pair<float, size_t>& a, const std::pair<float, size_t>& b) {
        return a.first > b.first || (a.first == b.first && a.second < b.second);
      };
      std::vector<std::pair<float, size_t>> candidates;
      candidates.reserve(keep);
      for(int h = h0; h < h1; ++h) {
        const float* row = lp.data() + size_t(h) * V;
        float score = live[size_t(h)].score;
        for(size_t w = 0; w < V; ++w) {
          if(!options_.allowUnk && int(w) == options_.unkId)
            continue;
          std::pair<float, size_t> c{score + row[w], size_t(h) * V + w};
          if(candidates.size() < keep) {
            candidates.push_back(c);
            std::push_heap(candidates.begin(), candidates.end(), better);
          } else if(keep > 0 && better(c, candidates.front())) {
            std::pop_heap(candidates.begin(), candidates.end(), better);
            candidates.back() = c;
            std::push_heap(candidates.begin(), candidates.end(), better);
          }
        }
      }
      std::sort_heap(candidates.begin(), candidates.end(), better);
      keep = candidates.size();
      for(size_t c = 0; c < keep; ++c) {
        size_t h = candidates[c].second / V;
        int w = int(candidates[c].second % V);
        const Live& from = live[h];
        std::vector<float> wordScores = from.wordScores;
        wordScores.push_back(candidates[c].first - from.score);
        std::vector<float> modelScores = from.modelScores;
        for(size_t m = 0; m < M; ++m)
          modelScores[m] += raw(m)[h * V + size_t(w)];
        int aligned = -1;
        if(!attention.empty()) {  // this token's P(source token), over the sentence's own tokens
          const float* row = attention.data() + h * size_t(S);
          aligned = int(alignments.size());
          alignments.push_back({from.alignment, std::vector<float>(row, row + srcLength[size_t(s)])});
        }
        if(w == options_.eosId || last) {
          Hypothesis done1{from.words, candidates[c].first, candidates[c].first, std::move(wordScores),
                           traceBack(aligned), std::move(modelScores)};
          if(w != options_.eosId)
            done1.words.push_back(w);
          // as Marian's History: the word penalty and the length normalisation on the finished
          // score only (a step's candidates share their length: neither changes their order)
          float length = float(t + 1);  // tokens emitted, </s> included
          done1.normalized = (candidates[c].first - options_.wordPenalty * length) /
                             (options_.normalize > 0 ? std::pow(length, options_.normalize) : 1.f);
          done.push_back(std::move(done1));
        } else {
          Live n{s, from.words, candidates[c].first, std::move(wordScores), from.row, aligned, std::move(modelScores)};
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
