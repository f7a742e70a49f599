#include "training/loop/trainer.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include <yaml-cpp/yaml.h>

#include "comm/transport.h"
#include "common/fault_point.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/timeline.h"
#include "common/scheduling_parameter.h"
#include "data/corpus_chunks.h"
#include "optimizers/lr_schedule.h"
#include "common/float_mode.h"
#include "training/loop/batch_fit.h"
#include "training/graph_groups/graph_group.h"
#include "training/loop/training_state.h"
#include "training/loop/checkpoint.h"
#include "training/loop/epoch_data.h"
#include "training/loop/stop_signal.h"
#include "tensors/devices_from_options.h"
#include "training/validation/validator.h"

namespace marian {

namespace {

// "32,000"
std::string grouped(uint64_t n) {
  std::string s = std::to_string(n);
  for(int i = int(s.size()) - 3; i > 0; i -= 3)
    s.insert(size_t(i), ",");
  return s;
}

// --optimizer-delay: Marian also takes fractions of a batch; here whole batches only.
size_t optimizerDelay(const Options& o) {
  float delay = o.get<float>("optimizer-delay");
  ABORT_IF(!(delay >= 1.f) || delay != std::floor(delay) || delay > 1e6f,
           "--optimizer-delay must be a whole number of mini-batches >= 1, not {}", delay);
  return size_t(delay);
}

// What --normalize-gradient makes the back-propagated gradient (TrainingState::gradient).
std::string gradientOf(const Options& o) {
  return o.get<bool>("normalize-gradient") ? TrainingState::kPerLabelGradient : TrainingState::kSummedGradient;
}

// A checkpoint's optimizer state (Adam's moments, residuals) is in the units of the gradient it
// was trained on; resumed with another, the steps would be off by about the labels per update.
// Returns whether its residuals are an earlier --normalize-gradient's ranks' own means
// (ModelState::residualsOfRankMeans), which resume with it once scaled.
bool checkResumedGradient(const TrainingState& saved, const Options& o, const std::string& checkpoint) {
  std::string was = saved.gradient, cost = o.get<std::string>("cost-type");
  if(was.empty())  // saved before the field, when --cost-type decided the gradient
    was = cost == "ce-sum"          ? TrainingState::kSummedGradient
          : cost == "ce-mean-words" ? TrainingState::kPerLabelOfEachRank
                                    : "per-sentence";
  std::string why = saved.gradient.empty() ? " (saved by a version in which --cost-type " + cost + " decided it)" : "";
  ABORT_IF(was == "per-sentence",
           "The checkpoint '{}' was trained on the cross-entropy's mean per sentence{}, which this version no longer "
           "back-propagates (the summed cross-entropy's gradient, as in Marian, or per label with "
           "--normalize-gradient): finish it with the version that wrote it, or start afresh",
           checkpoint, why);
  bool rankMeans = was == TrainingState::kPerLabelOfEachRank;
  bool perLabel = rankMeans || was == TrainingState::kPerLabelGradient, normalize = o.get<bool>("normalize-gradient");
  ABORT_IF(perLabel != normalize,
           "The checkpoint '{}' was trained on the {} gradient{} and this run would back-propagate the {} one, which "
           "its optimizer state is not in the units of: resume {} --normalize-gradient",
           checkpoint, perLabel ? "per-label" : "summed", why, normalize ? "per-label" : "summed",
           perLabel ? "with" : "without");
  return rankMeans;
}

class Trainer {
public:
  Trainer(const Options& o, Transport* ranks)
      : options_(o), transport_(ranks), modelPath_(o.get<std::string>("model")),
        dispFreq_(SchedulingParameter::parse(o.get<std::string>("disp-freq"), "disp-freq")),
        validFreq_(SchedulingParameter::parse(o.get<std::string>("valid-freq"), "valid-freq")),
        saveFreq_(SchedulingParameter::parse(o.get<std::string>("save-freq"), "save-freq")),
        after_(SchedulingParameter::parse(o.get<std::string>("after"), "after")),
        delay_(optimizerDelay(o)),
        schedule_(o.get<float>("learn-rate"), o.get<std::string>("lr-warmup"),
                  o.get<std::vector<std::string>>("lr-decay-inv-sqrt"), o.get<float>("lr-warmup-start-rate")) {
    std::string cost = o.get<std::string>("cost-type");  // what the log shows; the gradient is the sum's
    ABORT_IF(cost != "ce-sum" && cost != "ce-mean" && cost != "ce-mean-words",
             "--cost-type must be ce-sum, ce-mean or ce-mean-words, not '{}'", cost);
  }

  void run() {
    // the model's folder is created, as a user who names a new one expects
    std::filesystem::path folder = std::filesystem::path(modelPath_).parent_path();
    for(auto f = folder; !f.empty() && !std::filesystem::exists(f); f = f.parent_path())
      createdFolders_.push_back(f.string());  // the innermost first
    if(!folder.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(folder, ec);
      ABORT_IF(ec, "Cannot create the model folder '{}': {}", folder.string(), ec.message());
    }
    ABORT_IF(isDirectory(modelPath_), "--model '{}' is a directory: give the model's file, e.g. {}/model.npz", modelPath_,
             modelPath_);
    loadData();
    bool resume = fileExists(checkpointPath());
    ABORT_IF(!resume && fileExists(progressPath()),
             "Cannot resume: '{}' exists but the checkpoint '{}' does not (remove the model folder to start afresh)",
             progressPath(), checkpointPath());
    // a trained model without its checkpoint (copied, or the checkpoint removed): starting afresh
    // would overwrite it at the first save
    ABORT_IF(!resume && fileExists(modelPath_),
             "The model '{}' exists but its checkpoint '{}' does not, so training cannot resume it, and starting "
             "afresh would overwrite it: move it away or give another --model",
             modelPath_, checkpointPath());
    if(resume) {
      checkpoint_ = std::make_unique<Checkpoint>(readCheckpoint(checkpointPath()));
      state_ = checkpoint_->progress;
      checkpoint_->model.residualsOfRankMeans = checkResumedGradient(state_, options_, checkpointPath());
      if(fileExists(progressPath()) && TrainingState::fromYaml(progressPath()).batches != state_.batches)
        LOG(warn, "[training] '{}' says update {}, the checkpoint '{}' update {}: a save was interrupted; resuming "
                  "from the checkpoint",
            progressPath(), TrainingState::fromYaml(progressPath()).batches, checkpointPath(), state_.batches);
    } else {
      state_.seed = drawSeed();
    }
    state_.gradient = gradientOf(options_);
    if(transport_) {  // ranks must shuffle and initialise alike
      state_.seed = transport_->broadcastFromRoot(state_.seed, transport_->peerTimeout(), "the random seed");
      bool rootResumes = transport_->broadcastFromRoot(resume ? 1 : 0, transport_->peerTimeout(), "whether to resume") != 0;
      ABORT_IF(rootResumes != resume,
               "Rank {} {} {} but rank 0 {}: every rank must see the same model folder (a shared file system)",
               transport_->rank(), resume ? "finds a checkpoint in" : "finds no checkpoint in", modelPath_,
               rootResumes ? "resumes" : "starts afresh");
    }
    if(!options_.get<std::string>("timeline").empty()) {  // before the graph group starts its threads
      timeline::start(options_.get<std::string>("timeline"), transport_ ? transport_->rank() : 0);
      timeline::nameThisThread("main (device 0)");
    }
    Options groupOptions = options_;
    if(resume && !options_.get<std::string>("pretrained-model").empty()) {  // the checkpoint's weights win
      LOG(info, "[training] Resuming: --pretrained-model {} is not read", options_.get<std::string>("pretrained-model"));
      groupOptions.set<std::string>("pretrained-model", "");
    }
    graphGroup_ = createGraphGroup(groupOptions, vocabs_[0]->size(), vocabs_[1]->size(), state_.seed, transport_);
    graphGroup_->initialize(sampleBatch());
    std::vector<Device> devices = devicesFromOptions(options_);
    std::string deviceNames;
    for(const Device& d : devices)
      deviceNames += (deviceNames.empty() ? "" : " ") + d.toString();
    LOG(info, "[training] {} model with {} parameters on {} device(s) ({}){}",
        options_.get<std::string>("type"), grouped(graphGroup_->layout().totalSize()), devices.size(),
        deviceNames, options_.get<bool>("sync-sgd") ? ", sync-SGD" : "");
    rank_ = graphGroup_->rank();
    ranks_ = graphGroup_->ranks();

    if(rank_ == 0)
      removeStaleTemporaryFiles(modelPath_);
    if(resume)
      restore();
    if(resume && options_.get<bool>("no-restore-corpus")) {  // the epoch's corpus from its start
      state_.corpusBatchesEpoch = state_.corpusSentencesEpoch = state_.batchesEpoch = state_.samplesEpoch = 0;
      state_.stream = StreamState();
      LOG(info, "[training] --no-restore-corpus: epoch {} starts again from the first sentence", state_.epochs);
    }
    else if(rank_ == 0)
      writeFileAtomic(modelPath_ + ".yml", options_.asYaml());

    EpochDataOptions d;
    BatchingOptions& b = d.batching;
    b.miniBatch = size_t(options_.get<int>("mini-batch"));
    b.miniBatchWords = size_t(options_.get<int>("mini-batch-words"));
    b.maxiBatch = size_t(options_.get<int>("maxi-batch"));
    if(options_.get<bool>("mini-batch-fit")) {
      b.fitStep = size_t(options_.get<int>("mini-batch-fit-step"));
      // sync-SGD splits a batch over this rank's devices; the other modes give each device its own
      size_t split = options_.get<bool>("sync-sgd") ? devices.size() : 1;
      b.fitSentences = fitBatchSentences(options_, vocabs_[0]->size(), vocabs_[1]->size(), b.fitStep, split);
    }
    b.sortBy = options_.get<std::string>("maxi-batch-sort");
    std::string shuffle = options_.get<bool>("no-shuffle") ? "none" : options_.get<std::string>("shuffle");
    ABORT_IF(shuffle != "data" && shuffle != "batches" && shuffle != "none",
             "--shuffle must be data, batches or none, not '{}'", shuffle);
    b.shuffleData = shuffle == "data";
    b.shuffleBatches = shuffle != "none";
    b.withinMaxiBatch = options_.get<bool>("shuffle-within-maxi-batch");
    b.seed = state_.seed;
    d.windowPairs = size_t(options_.get<int>("shuffle-window"));
    d.threads = size_t(options_.get<int>("data-threads"));
    d.delay = delay_;
    bool lockstep = ranks_ > 1 && graphGroup_->ranksInLockstep();
    d.lockstep = lockstep;
    EpochData data(std::move(corpus_), chunks_.get(), encoder_, d, rank_, ranks_, transport_);

    lastDisplay_ = std::chrono::steady_clock::now();
    bool stop = stopByEpochs(state_.epochs - 1) || stopByUpdates() || earlyStopped();  // a resume may be there
    uint64_t firstUpdate = state_.batches;
    while(!stop) {
      data.startEpoch(state_);
      while(!stop) {
        std::vector<Batch> group = data.nextGroup();  // --optimizer-delay N: N batches make one update
        if(group.empty())
          break;
        Batch batch = Batch::merge(group);
        float lr = schedule_.at(state_.batches, state_.labelsTotal, state_.epochs);
        StepStats s = graphGroup_->update(batch, state_.batches, lr);
        uint64_t labelsBefore = state_.labelsTotal;
        state_.batches += 1;
        faultPoint("update-" + std::to_string(state_.batches), rank_);
        state_.batchesEpoch += 1;
        state_.corpusBatchesEpoch += uint64_t(group.size()) * uint64_t(ranks_);
        state_.samplesEpoch += uint64_t(batch.sentences);
        state_.labelsTotal += batch.trgWords;
        costSum_ += s.ceSum;
        costLabels_ += s.labels;
        costSentences_ += uint64_t(batch.sentences);
        costUpdates_ += 1;
        wordsSinceDisplay_ += batch.trgWords;
        ABORT_IF(!std::isfinite(s.ceSum),
                 "Cost is {} at update {}: training diverged; the last saved checkpoint is kept (try a "
                 "lower --learn-rate or --clip-norm)",
                 s.ceSum, state_.batches);
        // Marian's log shows the rate of the next update
        if(due(dispFreq_, labelsBefore) || state_.batches <= uint64_t(options_.get<int>("disp-first")))
          display(schedule_.at(state_.batches, state_.labelsTotal, state_.epochs), batch.trgWords);
        bool validateNow = due(validFreq_, labelsBefore);
        if(lockstep && validFreq_.unit == SchedulingUnit::labels)  // validation may be collective
          validateNow = agreeOnStop(validateNow);
        if(validateNow)
          stop = validate() || stop;
        bool saveNow = due(saveFreq_, labelsBefore);
        if(lockstep && saveFreq_.unit == SchedulingUnit::labels)  // ranks count their own labels
          saveNow = agreeOnStop(saveNow);
        if(saveNow)
          save(data);
        stop = stop || stopByUpdates() || signalled() || rankZeroEnded();
        if(lockstep)
          stop = agreeOnStop(stop);
      }
      // an epoch too small to give every rank a whole update would repeat without end
      ABORT_IF(!stop && state_.batchesEpoch == 0,
               "Epoch {} gave this rank no update: the corpus makes fewer mini-batches than the {} one update of "
               "every rank needs ({} rank(s) x --optimizer-delay {}); lower --mini-batch or --mini-batch-words",
               state_.epochs, delay_ * size_t(ranks_), ranks_, delay_);
      if(!stop) {
        LOG(info, "Seen {} samples", grouped(state_.samplesEpoch));
        if(data.streamed())
          LOG(info, "[data] Epoch {} on this rank: {} pairs longer than --max-length {} skipped, {} empty skipped{}",
              state_.epochs, data.skippedLong(), options_.get<int>("max-length"), data.skippedEmpty(),
              data.droppedBatches() ? format(", its last {} mini-batch(es) not trained (another rank had no update left)",
                                             data.droppedBatches())
                                    : std::string());
        size_t finished = state_.epochs;
        if(validFreq_.unit == SchedulingUnit::epochs && validFreq_ && finished % validFreq_.n == 0)
          stop = validate() || stop;
        if(saveFreq_.unit == SchedulingUnit::epochs && saveFreq_ && finished % saveFreq_.n == 0)
          save(data);
        // the last epoch keeps its number (and a complete position) in the final log and files
        stop = stop || stopByEpochs(finished) || rankZeroEnded();
        if(lockstep)
          stop = agreeOnStop(stop);
        if(!stop) {
          state_.newEpoch();
          LOG(info, "Starting data epoch {} in logical epoch {}", state_.epochs, state_.epochs);  // Marian's line
        }
      }
    }
    LOG(info, "[data] This rank held at most {} MB of encoded corpus at once ({})",
        formatNumber("%.1f", double(data.peakBytes()) / 1e6),
        data.streamed() ? "windows of --shuffle-window " + grouped(d.windowPairs) + " pairs over " +
                              std::to_string(ranks_) + " rank(s)"
                        : std::string("the whole corpus in memory"));
    faultPoint("end", rank_);
    // what only rank 0 knows (its validations, its signal) ends the others after their current
    // update; the ends every rank reaches by itself (--after-epochs, --after-batches) they keep
    if(ranks_ > 1 && !lockstep && rank_ == 0 && (earlyStopped() || signalled()))
      graphGroup_->announceEnd();
    graphGroup_->finish();
    timeline::write();
    if(resume && state_.batches == firstUpdate && !signalled()) {
      // restarting a finished run changes nothing: no update, no validation, no save
      LOG(info, "Training had already finished at update {} (epoch {}); nothing to do", state_.batches,
          state_.epochs);
      return;
    }
    if(signalled()) {
      LOG(info, "Training stops on SIGTERM (--sigterm save-and-exit) at update {}", state_.batches);
    } else {
      LOG(info, "Training finished");
      if(validator_ && state_.lastValidated != state_.batches)
        validate();
    }
    if(lastSaved_ != state_.batches)
      save(data);
  }

private:
  std::string progressPath() const { return modelPath_ + ".progress.yml"; }
  std::string checkpointPath() const { return modelPath_ + ".optimizer.npz"; }

  // Rank 0 decides (early stopping, label counts: only it validates, and ranks see different
  // words): ranks in lockstep must stop at the same update or the others would wait for it.
  bool agreeOnStop(bool stop) const {
    return transport_->broadcastFromRoot(stop ? 1 : 0, transport_->peerTimeout(), "the decision to stop") != 0;
  }

  // Ranks not in lockstep end when rank 0 has ended early (GraphGroup::announceEnd), said once.
  bool rankZeroEnded() {
    if(rank_ == 0 || ranks_ == 1 || graphGroup_->ranksInLockstep() || !graphGroup_->endAnnounced())
      return false;
    if(!heardRankZeroEnd_)
      LOG(info, "[training] Rank 0 has ended training: this rank ends at update {}", state_.batches);
    heardRankZeroEnd_ = true;
    return true;
  }

  uint64_t drawSeed() const {
    uint64_t seed = uint64_t(options_.get<size_t>("seed"));
    return seed ? seed : std::random_device()();
  }

  void loadData() {
    auto trainSets = options_.get<std::vector<std::string>>("train-sets");
    auto vocabPaths = options_.get<std::vector<std::string>>("vocabs", {});
    ABORT_IF(vocabPaths.size() != 2, "--vocabs needs a source and a target vocabulary, got {}", vocabPaths.size());
    auto dims = options_.get<std::vector<int>>("dim-vocabs");
    dims.resize(2, 0);
    for(int d : dims)
      ABORT_IF(d != 0 && d < 3, "--dim-vocabs {}: a vocabulary needs </s>, <unk> and at least one word (0: all words)", d);
    bool joint = vocabPaths[0] == vocabPaths[1];
    bool tsv = options_.get<bool>("tsv");
    int tsvFields = options_.get<int>("tsv-fields");
    ABORT_IF(tsv && tsvFields != 0 && tsvFields != 2, "--tsv-fields {}: a parallel corpus has 2 fields per line", tsvFields);
    for(const std::string& v : vocabPaths)
      ABORT_IF(tsv && !fileExists(v), "--tsv: the vocabulary '{}' does not exist; create it first (marian-vocab, or a "
                                      "run on the corpus as two files)", v);
    // Vocabularies this run creates go again if the corpus turns out unusable: a later run on
    // good data must not silently load them.
    std::vector<std::string> created;
    try {
      for(size_t i = 0; i < 2; ++i) {
        if(joint && i == 1) {
          vocabs_.push_back(vocabs_[0]);
          continue;
        }
        // (--tsv: the vocabularies exist, checked above)
        std::vector<std::string> from = joint || tsv ? trainSets : std::vector<std::string>{trainSets.at(i)};
        if(!fileExists(vocabPaths[i]))
          created.push_back(vocabPaths[i]);
        VocabTraining training{size_t(options_.get<int>("sentencepiece-max-lines")),
                               options_.get<std::string>("sentencepiece-options"), options_.get<std::string>("tempdir")};
        vocabs_.push_back(loadOrCreateVocab(vocabPaths[i], from, size_t(dims[i]), training));
      }
      size_t maxLength = size_t(options_.get<int>("max-length"));
      encoder_ = PairEncoder{vocabs_, maxLength, options_.get<bool>("max-length-crop")};
      size_t window = size_t(options_.get<int>("shuffle-window"));
      chunks_ = std::make_unique<CorpusChunks>(trainSets, options_.get<bool>("tsv"), EpochData::chunkLines(window),
                                               options_.get<std::string>("tempdir"));
      if(options_.get<bool>("shuffle-in-ram") || chunks_->lines() <= window) {
        std::vector<size_t> all(chunks_->chunks());
        for(size_t c = 0; c < all.size(); ++c)
          all[c] = c;
        corpus_ = std::make_unique<Corpus>(*chunks_, all, encoder_, size_t(options_.get<int>("data-threads")));
        chunks_.reset();
        LOG(info, "[data] Training corpus: {} sentence pairs in memory ({} longer than --max-length {} skipped, {} empty "
                  "skipped)",
            grouped(corpus_->size()), corpus_->skippedLong(), maxLength, corpus_->skippedEmpty());
        ABORT_IF(corpus_->size() == 0, "The training corpus has no usable sentence pairs");
      } else {
        LOG(info, "[data] Training corpus: {} sentence pairs ({} MB of text) streamed from disk in windows of {} "
                  "pairs (--shuffle-window), chunks of {} line(s)",
            grouped(chunks_->lines()), formatNumber("%.1f", double(chunks_->bytes()) / 1e6), grouped(window), chunks_->chunkLines());
      }
    } catch(const std::exception&) {
      for(const std::string& path : created)
        if(std::remove(path.c_str()) == 0)
          LOG(info, "[data] Removed the vocabulary '{}' this failed run created", path);
      throw;
    }
    // the sizes trained with, as Marian records them in model.npz.yml
    options_.set("dim-vocabs", std::vector<int>{int(vocabs_[0]->size()), int(vocabs_[1]->size())});
    if(options_.has("valid-sets") && !options_.get<std::vector<std::string>>("valid-sets").empty())
      validator_ = std::make_unique<Validator>(
          options_, vocabs_, [this](const std::string& path, const std::vector<float>& values) { writeModel(path, values); });
  }

  // A batch of one training pair, from which the graph group learns the shapes.
  Batch sampleBatch() const {
    if(corpus_)
      return Batch::fromPairs(*corpus_, {0});
    for(size_t c = 0; c < chunks_->chunks(); ++c) {
      Corpus chunk(*chunks_, {c}, encoder_, 1);
      if(chunk.size())
        return Batch::fromPairs(chunk, {0});
    }
    ABORT("The training corpus has no usable sentence pairs (every pair is empty or longer than --max-length {})",
          options_.get<int>("max-length"));
  }

  // Whether a frequency in updates or labels fell due with the update just done.
  bool due(const SchedulingParameter& f, uint64_t labelsBefore) const {
    if(!f)
      return false;
    if(f.unit == SchedulingUnit::updates)
      return state_.batches % f.n == 0;
    if(f.unit == SchedulingUnit::labels)
      return labelsBefore / f.n != state_.labelsTotal / f.n;
    return false;  // epochs: at the end of an epoch
  }

  bool stopByUpdates() const {
    uint64_t afterBatches = uint64_t(options_.get<int>("after-batches"));
    if(afterBatches && state_.batches >= afterBatches)
      return true;
    if(after_ && after_.unit == SchedulingUnit::updates && state_.batches >= after_.n)
      return true;
    if(after_ && after_.unit == SchedulingUnit::labels && state_.labelsTotal >= after_.n)
      return true;
    return false;
  }

  bool stopByEpochs(size_t finished) const {
    size_t afterEpochs = size_t(options_.get<int>("after-epochs"));
    if(afterEpochs && finished >= afterEpochs)
      return true;
    return after_ && after_.unit == SchedulingUnit::epochs && finished >= after_.n;
  }

  // The Cost as Marian's scheduler shows it for each --cost-type: per label (ce-mean-words; ce-sum
  // with --disp-label-counts adds "* labels since the last display @ labels of the last update
  // after labels in all"), per update (ce-sum without label counts) or per sentence (ce-mean).
  std::string costText(size_t lastUpdateLabels) const {
    std::string type = options_.get<std::string>("cost-type");
    auto fixed8 = [](double v) { return formatNumber("%.8f", v); };
    if(type == "ce-mean")
      return fixed8(costSentences_ ? costSum_ / double(costSentences_) : 0.0);
    if(type == "ce-sum" && !options_.get<bool>("disp-label-counts"))
      return fixed8(costUpdates_ ? costSum_ / double(costUpdates_) : 0.0);
    std::string perLabel = fixed8(costLabels_ ? costSum_ / double(costLabels_) : 0.0);
    if(type != "ce-sum")
      return perLabel;
    return perLabel + " * " + grouped(costLabels_) + " @ " + grouped(lastUpdateLabels) + " after " +
           grouped(state_.labelsTotal);
  }

  void display(float lr, size_t lastUpdateLabels) {
    auto now = std::chrono::steady_clock::now();
    double seconds = std::chrono::duration<double>(now - lastDisplay_).count();
    LOG(info, "Ep. {} : Up. {} : Sen. {} : Cost {} : Time {}s : {} words/s : L.r. {}", state_.epochs,
        state_.batches, grouped(state_.samplesEpoch), costText(lastUpdateLabels), formatNumber("%.2f", seconds),
        formatNumber("%.2f", double(wordsSinceDisplay_) / std::max(seconds, 1e-9)),
        formatNumber("%.4e", lr) + graphGroup_->statusLine());
    lastDisplay_ = now;
    costSum_ = 0;
    costLabels_ = costSentences_ = costUpdates_ = 0;
    wordsSinceDisplay_ = 0;
  }

  // Validates and updates the stall counters; returns whether early stopping triggers. Only
  // rank 0 validates (and saves), with the parameters gathered from every shard.
  bool validate() {
    if(!validator_)
      return false;
    if(ranks_ > 1 && graphGroup_->ranksInLockstep())
      graphGroup_->prepareValidation();  // collective: every rank takes part in rank 0's validation
    if(rank_ != 0) {
      state_.lastValidated = state_.batches;
      return false;
    }
    std::vector<float> values = graphGroup_->values(/*smoothed=*/true);
    std::vector<double> scores = validator_->validate(values, graphGroup_->layout().totalSize(), state_);
    state_.lastValidated = state_.batches;
    const auto& metrics = validator_->metrics();
    for(size_t i = 0; i < metrics.size(); ++i) {
      ValidatorState& v = state_.validators[metrics[i]];
      bool better = !v.hasBest || (Validator::higherIsBetter(metrics[i]) ? scores[i] > v.lastBest : scores[i] < v.lastBest);
      std::string verdict;
      if(better) {
        v.lastBest = scores[i];
        v.hasBest = true;
        v.stalled = 0;
        verdict = "new best";
        if(options_.get<bool>("keep-best"))
          writeModel(modelPath_ + ".best-" + metrics[i] + ".npz", values);
      } else {
        ++v.stalled;
        verdict = "stalled " + std::to_string(v.stalled) + " times (last best: " + formatNumber("%g", v.lastBest) + ")";
      }
      LOG(info, "[valid] Ep. {} : Up. {} : {} : {} : {}", state_.epochs, state_.batches, metrics[i],
          formatNumber("%g", scores[i]), verdict);
    }
    if(earlyStopped()) {
      std::string stalled;
      for(const std::string& m : metrics)
        if(state_.stalled(m) >= size_t(options_.get<int>("early-stopping")))
          stalled += (stalled.empty() ? "" : ", ") + m;
      LOG(info, "Training stops: {} stalled {} times (--early-stopping-on {})", stalled,
          options_.get<int>("early-stopping"), options_.get<std::string>("early-stopping-on"));
      return true;
    }
    return false;
  }

  // --early-stopping N --early-stopping-on first|all|any: the first, every or some validation
  // metric stalled N times in a row
  bool earlyStopped() const {
    auto metrics = options_.get<std::vector<std::string>>("valid-metrics");
    size_t patience = size_t(options_.get<int>("early-stopping"));
    std::string on = options_.get<std::string>("early-stopping-on");
    ABORT_IF(on != "first" && on != "all" && on != "any", "--early-stopping-on must be first, all or any, not '{}'", on);
    if(!validator_ || !patience || metrics.empty())
      return false;
    if(on == "first")
      return state_.stalled(metrics[0]) >= patience;
    bool all = true, any = false;
    for(const std::string& m : metrics) {
      bool stalled = state_.stalled(m) >= patience;
      all = all && stalled;
      any = any || stalled;
    }
    return on == "all" ? all : any;
  }

  // What marian-decoder -c needs, as Marian writes it beside the model.
  std::string decoderConfig() const {
    YAML::Emitter out;  // quotes paths such as "a: b #c.npz" or "[x].npz"
    out.SetDoublePrecision(6);
    out << YAML::BeginMap;
    out << YAML::Key << "models" << YAML::Value << std::vector<std::string>{modelPath_};
    out << YAML::Key << "vocabs" << YAML::Value << options_.get<std::vector<std::string>>("vocabs");
    out << YAML::Key << "beam-size" << YAML::Value << 6 << YAML::Key << "normalize" << YAML::Value << 0.6;
    out << YAML::Key << "word-penalty" << YAML::Value << 0 << YAML::Key << "mini-batch" << YAML::Value << 16;
    out << YAML::Key << "maxi-batch" << YAML::Value << 100 << YAML::Key << "maxi-batch-sort" << YAML::Value << "src";
    out << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
  }

  // model.npz with the model options embedded as special:model.yml, as Marian writes it: the
  // model keys only, bytes of type <i1 ending in a NUL
  void writeModel(const std::string& path, const std::vector<float>& values) {
    std::vector<NpzItem> items = graphGroup_->layout().toNpzItems(values);
    std::string yml = modelConfigYaml(options_, {vocabs_[0]->size(), vocabs_[1]->size()});
    std::vector<char> bytes(yml.begin(), yml.end());
    bytes.push_back('\0');
    items.push_back(NpzItem{"special:model.yml", {bytes.size()}, "<i1", std::move(bytes)});
    writeNpz(path, items);
  }

  // Groups in lockstep gather their state collectively, so every rank comes here at the same
  // update; rank 0 writes. The exports (model.npz, its iteration copy, the YAML files) go first,
  // the checkpoint is the commit, progress.yml is written last for readers.
  void save(const EpochData& data) {
    bool collective = ranks_ > 1 && graphGroup_->ranksInLockstep();
    if(rank_ != 0 && !collective)
      return;
    data.recordPosition(state_);
    ModelState model = graphGroup_->saveState();
    model.parameterLayout = graphGroup_->layout().layoutFingerprint();
    lastSaved_ = state_.batches;  // on every rank: the final save must be collective too
    if(rank_ != 0)
      return;
    const std::vector<float>& exported = model.smoothed.empty() ? model.values : model.smoothed;
    writeModel(modelPath_, exported);
    faultPoint("save-" + std::to_string(state_.batches), rank_);  // the model written, the checkpoint not yet
    if(!options_.get<bool>("overwrite")) {
      std::string iter = modelPath_;
      size_t dot = iter.rfind(".npz");
      iter = (dot == std::string::npos ? iter : iter.substr(0, dot)) + ".iter" + std::to_string(state_.batches) + ".npz";
      writeModel(iter, exported);
      // --overwrite-checkpoint false (Marian's): each iteration keeps a full checkpoint too, so
      // training can go on from it (--model model.iterN.npz)
      if(!options_.get<bool>("overwrite-checkpoint")) {
        writeCheckpoint(iter + ".optimizer.npz", model, state_);
        writeFileAtomic(iter + ".progress.yml", state_.toYaml());
      }
    }
    writeFileAtomic(modelPath_ + ".yml", options_.asYaml());
    writeFileAtomic(modelPath_ + ".decoder.yml", decoderConfig());
    writeCheckpoint(checkpointPath(), model, state_);
    writeFileAtomic(progressPath(), state_.toYaml());
    LOG(info, "Saved model to {} (update {})", modelPath_, state_.batches);
  }

  // Every rank installs the checkpoint read at the start (it was saved in the global layout, so
  // another number of ranks or devices re-shards it).
  void restore() {
    ModelState& model = checkpoint_->model;
    ABORT_IF(model.n != graphGroup_->layout().totalSize(),
             "Checkpoint '{}' holds {} parameters but the model configured has {}: were the model options changed?",
             checkpointPath(), model.n, graphGroup_->layout().totalSize());
    ABORT_IF(model.parameterLayout.empty(),
             "Checkpoint '{}' was saved by an earlier version of this program, before its parameters took Marian's "
             "names: its arrays are in another order and cannot be resumed; resume it with that version, or start "
             "afresh (its model.npz still decodes)",
             checkpointPath());
    ABORT_IF(model.parameterLayout != graphGroup_->layout().layoutFingerprint(),
             "Checkpoint '{}' was saved with another parameter layout (names and shapes) than the model configured: "
             "were the model options changed?",
             checkpointPath());
    graphGroup_->restoreState(model);
    LOG(info, "[training] Resuming from {}: epoch {}, update {}, {} sentences into the epoch (saved on {} rank(s) x {} "
              "device(s))",
        checkpointPath(), state_.epochs, state_.batches, grouped(state_.samplesEpoch), model.ranks, model.devices);
    checkpoint_.reset();
  }

public:
  // A failed run leaves no empty model folder of its own making behind.
  void removeFolderIfEmpty() const {
    for(const std::string& f : createdFolders_) {
      std::error_code ec;
      if(!std::filesystem::is_empty(f, ec) || ec || !std::filesystem::remove(f, ec))
        return;
    }
  }

private:
  Options options_;
  Transport* transport_;  // the job's ranks, or null
  std::string modelPath_;
  std::vector<std::string> createdFolders_;  // by this run, the innermost first
  SchedulingParameter dispFreq_, validFreq_, saveFreq_, after_;
  size_t delay_;  // mini-batches per update
  LearningRateSchedule schedule_;
  std::vector<std::shared_ptr<Vocab>> vocabs_;
  PairEncoder encoder_;
  std::unique_ptr<Corpus> corpus_;       // the training corpus in memory, until EpochData takes it
  std::unique_ptr<CorpusChunks> chunks_;  // or streamed from disk
  std::unique_ptr<Validator> validator_;
  std::unique_ptr<GraphGroup> graphGroup_;
  TrainingState state_;
  std::unique_ptr<Checkpoint> checkpoint_;  // read at the start, installed after the graph group
  std::chrono::steady_clock::time_point lastDisplay_;
  double costSum_ = 0;
  uint64_t costLabels_ = 0, costSentences_ = 0, costUpdates_ = 0, wordsSinceDisplay_ = 0;
  uint64_t lastSaved_ = uint64_t(-1);
  bool heardRankZeroEnd_ = false;
  int rank_ = 0, ranks_ = 1;
};

}  // namespace

void train(const Options& options, Transport* ranks) {
  flushDenormalsToZero();
  installStopSignal(options.get<std::string>("sigterm"));
  Trainer trainer(options, ranks);
  try {
    trainer.run();
  } catch(const std::exception& e) {
    // Print the error and end every rank now: unwinding would first wait in the graph group's
    // destructor for ranks that train on, and they would never hear of it.
    if(ranks && ranks->size() > 1)
      ranks->abort(e.what());
    trainer.removeFolderIfEmpty();
    throw;
  }
}

}  // namespace marian
