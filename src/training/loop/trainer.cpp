#include "training/loop/trainer.h"

#include <malloc.h>

#include <cmath>
#include <random>

#include "comm/slow_rank_judge.h"
#include "comm/transport.h"
#include "common/content_hash.h"
#include "common/fault_point.h"
#include "common/file_util.h"
#include "common/float_mode.h"
#include "common/format.h"
#include "common/logging.h"
#include "common/not_finite.h"
#include "common/timeline.h"
#include "tensors/devices_from_options.h"
#include "training/graph_groups/graph_group.h"
#include "training/loop/learning_rate.h"
#include "training/loop/lockstep_agreement.h"
#include "training/loop/model_export.h"
#include "training/loop/model_folder.h"
#include "training/loop/progress_display.h"
#include "training/loop/rank_agreement.h"
#include "training/loop/stop_signal.h"
#include "training/loop/training_data.h"
#include "training/loop/training_schedule.h"
#include "training/validation/early_stopping.h"
#include "training/validation/validator.h"

namespace marian {

namespace {

class Trainer {
public:
  Trainer(const Options& o, Transport* ranks, const TrainingData* loaded)
      : options_(o), transport_(ranks), loaded_(loaded), schedule_(o), lr_(o), display_(o), earlyStopping_(o) {}

  // A failed run that saved nothing leaves neither the vocabularies it created (a later run would
  // load them without a word) nor an empty model folder of its own making behind. Rank 0 only:
  // the ranks share the files, and only rank 0 knows what it saved.
  void removeWhatAFailedStartCreated() const {
    if((transport_ ? transport_->rank() : 0) == 0 && lastSaved_ == uint64_t(-1))
      removeCreatedVocabs(data_.createdVocabs);
    if(folder_)
      folder_->removeIfEmpty();
  }

  void run() {
    folder_ = std::make_unique<ModelFolder>(options_.get<std::string>("model"));
    bool validates = Validator::configured(options_);
    if(validates)  // before the corpus is read, which can take long
      Validator::checkMetrics(options_);
    data_ = loaded_ ? *loaded_ : TrainingData::load(options_);
    std::vector<Device> devices = devicesFromOptions(options_);
    // how the epochs are cut (with the batches --mini-batch-fit finds for --workspace); the seed
    // and whether the ranks go in lockstep are set once known
    // (sync-SGD splits a batch over this rank's devices; the other modes give each device its own)
    EpochDataOptions epochOptions = epochDataOptions(options_, data_, /*seed=*/0, schedule_.delay(),
                                                     options_.get<bool>("sync-sgd") ? devices.size() : 1,
                                                     /*lockstep=*/false);
    if(transport_) {  // before a resume's checks: a node's own copy that differs is named as such
      std::string pretrained = options_.get<std::string>("pretrained-model");
      std::string corpus = data_.corpusIdentity + (data_.extrasIdentity.empty() ? "" : "; " + data_.extrasIdentity);
      checkRanksAgree(*transport_, {corpus, data_.vocabIdentity,
                                    pretrained.empty() ? "" : hashFile(pretrained).str(),
                                    EpochData::epochCut(epochOptions.batching, data_.encoder), devices.size(),
                                    gpusOf(devices), options_.sharedByRanks()});
    }
    // the sizes trained with, as Marian records them in model.npz.yml
    options_.set("dim-vocabs", std::vector<int>{int(data_.vocabs[0]->size()), int(data_.vocabs[1]->size())});
    if(validates)
      validator_ = std::make_unique<Validator>(
          options_, data_.vocabs, [this](const std::string& path, const std::vector<float>& v) { export_->writeModel(path, v); });
    checkpoint_ = folder_->openCheckpoint(options_);
    bool resume = checkpoint_ != nullptr;
    if(resume) {
      state_ = checkpoint_->progress;
      folder_->checkTrainedOn(state_, data_.vocabIdentity, data_.corpusIdentity,
                              !options_.get<bool>("no-restore-corpus"));
      folder_->checkArchitecture(checkpoint_->architecture, options_);
      lr_.checkResumed(state_);
      earlyStopping_.resume(state_);
    } else {  // --seed 0 draws one
      state_.seed = options_.get<size_t>("seed") ? uint64_t(options_.get<size_t>("seed")) : std::random_device()();
    }
    state_.vocabularies = data_.vocabIdentity;
    state_.corpus = data_.corpusIdentity;
    state_.gradient = gradientOf(options_);
    if(transport_) {  // ranks must shuffle and initialise alike
      state_.seed = transport_->broadcastFromRoot(state_.seed, transport_->peerTimeout(), "the random seed");
      bool rootResumes = transport_->broadcastFromRoot(resume ? 1 : 0, transport_->peerTimeout(), "whether to resume") != 0;
      ABORT_IF(rootResumes != resume,
               "Rank {} {} {} but rank 0 {}: every rank must see the same model folder (a shared file system)",
               transport_->rank(), resume ? "finds a checkpoint in" : "finds no checkpoint in", folder_->model(),
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
    graphGroup_ = createGraphGroup(groupOptions, data_.vocabs[0]->size(), data_.vocabs[1]->size(), state_.seed, transport_);
    graphGroup_->initialize(data_.sampleBatch());
    export_ = std::make_unique<ModelExport>(options_, graphGroup_->layout(),
                                            std::vector<size_t>{data_.vocabs[0]->size(), data_.vocabs[1]->size()});
    std::string deviceNames;
    for(const Device& d : devices)
      deviceNames += (deviceNames.empty() ? "" : " ") + d.toString();
    LOG(info, "[training] {} model with {} parameters on {} device(s) ({}){}", options_.get<std::string>("type"),
        grouped(graphGroup_->layout().totalSize()), devices.size(), deviceNames,
        options_.get<bool>("sync-sgd") ? ", sync-SGD" : "");
    rank_ = graphGroup_->rank();
    ranks_ = graphGroup_->ranks();
    // Marian's synchronous training (one device, or --sync-sgd) reads one batch per update and
    // splits it into --optimizer-delay pieces unless --mini-batch-fit scales its batches; here
    // every mode sums N batches, so a Marian configuration with both trains larger updates
    bool marianSplits =
        (devices.size() == 1 || options_.get<bool>("sync-sgd")) && !options_.get<bool>("multi-node");
    if(rank_ == 0 && marianSplits && schedule_.delay() > 1 && !options_.get<bool>("mini-batch-fit"))
      LOG(warn, "[training] --optimizer-delay {} without --mini-batch-fit: an update here sums {} batches of --mini-batch "
                "(--mini-batch-words); Marian's synchronous training splits one batch into {} pieces instead (the "
                "update of --optimizer-delay 1 in less memory): for Marian's updates, leave --optimizer-delay out",
          schedule_.delay(), schedule_.delay(), schedule_.delay());

    bool freshOptimizer = resume && options_.get<bool>("no-optimizer-reload");
    ABORT_IF((lr_.resetsOptimizer() || freshOptimizer) && !graphGroup_->resetsOptimizer(),
             "{} resets the optimizer's statistics, which needs synchronous training (one device, or --sync-sgd) "
             "without --onebit-adam, --zero-one-adam, --adam-freeze-variance-after, --adam-variance-update-scaler, "
             "--local-steps or --local-gradients", freshOptimizer ? "--no-optimizer-reload" : "--lr-decay-reset-optimizer");
    if(rank_ == 0)
      folder_->removeStaleTemporaryFiles();
    if(resume) {  // every rank installs it (saved in the global layout: another rank or device count re-shards it)
      folder_->checkFits(checkpoint_->model, graphGroup_->layout());
      if(freshOptimizer) {
        LOG(info, "--no-optimizer-reload is specified, we are skipping optimizer state restoration");  // Marian's
        checkpoint_->model.startOptimizerAfresh();
      }
      graphGroup_->restoreState(checkpoint_->model);
      LOG(info, "[training] Resuming from {}: epoch {}, update {}, {} sentences into the epoch (saved on {} rank(s) x "
                "{} device(s))", folder_->checkpoint(), state_.epochs, state_.batches, grouped(state_.samplesEpoch),
          checkpoint_->model.ranks, checkpoint_->model.devices);
      checkpoint_.reset();
      lastSaved_ = state_.batches;  // what a save here would write is on disk
    }
    if(resume && options_.get<bool>("no-restore-corpus")) {  // the epoch's corpus from its start
      state_.restartEpoch();
      LOG(info, "[training] --no-restore-corpus: epoch {} starts again from the first sentence", state_.epochs);
    }
    else if(rank_ == 0)
      export_->writeOptions();

    bool lockstep = ranks_ > 1 && graphGroup_->ranksInLockstep();
    ABORT_IF(ranks_ > 1 && !lockstep && validator_ && lr_.followsValidation(),
             "--lr-decay-strategy {} decays when validation stalls, which rank 0 alone runs: across ranks it needs "
             "synchronous training (--sync-sgd), where every rank takes rank 0's rate",
             options_.get<std::string>("lr-decay-strategy"));
    epochOptions.batching.seed = state_.seed;
    epochOptions.lockstep = lockstep;
    EpochData data(data_.corpus, data_.chunks.get(), data_.encoder, epochOptions, rank_, ranks_, transport_);
    agreement_ = std::make_unique<LockstepAgreement>(transport_, lockstep, graphGroup_->updatesPerAgreement());
    {  // a checkpoint saved mid-round: its counts are agreed at the next meeting, or now
      LockstepAgreement::Counts unagreed{state_.samplesUnagreed, state_.labelsUnagreed};
      if(agreement_->onceARound())
        agreement_->resume(unagreed, rank_);
      else
        state_.countAgreed(unagreed.sentences, unagreed.labels);
      state_.samplesUnagreed = state_.labelsUnagreed = 0;
    }

    display_.restartClock();
    bool stop = schedule_.stopsAfterEpoch(state_.epochs - 1) || schedule_.stopsAfterUpdate(state_) || earlyStopped();  // a resume may be there
    uint64_t firstUpdate = state_.batches;
    uint64_t labelsBefore = state_.labelsTotal;  // as the schedule's checks last saw them
    uint64_t lastTrgWords = 0;                    // the last update's, for a display at an epoch's end
    while(!stop) {
      data.startEpoch(state_);
      while(!stop && !state_.epochOver) {  // (a resume may start where the ranks agreed it was over)
        std::vector<Batch> group = data.nextGroup();  // --optimizer-delay N: N batches make one update
        LockstepAgreement::Outcome agreed;
        if(agreement_->everyUpdate()) {
          agreed = agreement_->beforeUpdate(group, schedule_.delay(), signalled());
          if(agreed.epochEnded) {  // a signal sent now counts at the next agreement
            data.endEpochWithout(group);
            break;
          }
        } else if(group.size() < schedule_.delay() && !agreement_->hasRunOut()) {
          data.endEpochWithout(group);
          if(!data.streamed())  // in memory every rank's epoch ends at this update
            break;
          LOG(info, "[data] Epoch {} ran out on this rank at update {}: it idles until the ranks meet after update {}",
              state_.epochs, state_.batches + 1, agreement_->nextMeetingAfter(state_.batches));
          agreement_->ranOut();  // streamed: this rank idles until the ranks meet
          group.clear();
        }
        uint64_t trgWords = 0;
        if(group.empty()) {
          graphGroup_->idleUpdate(state_.batches);
          state_.countUpdate(0, 0, 0);
        } else {
          Batch batch = Batch::merge(group);
          trgWords = batch.trgWords;
          float lr = lr_.at(state_);
          StepStats s = graphGroup_->update(batch, state_.batches, lr, agreed.job.labels);
          if(agreement_->everyUpdate()) {
            state_.countUpdate(uint64_t(group.size()) * uint64_t(ranks_), agreed.job.sentences, agreed.job.labels);
          } else {
            state_.countUpdate(uint64_t(group.size()) * uint64_t(ranks_), 0, 0);
            agreement_->trained(group);
          }
          state_.noteGradientNorm(float(s.gradientNorm));
          bool overflowSkipped = s.skipped && !std::isfinite(s.ceSum);  // cost scaling: a float16 forward overflowed
          display_.add(overflowSkipped ? 0.0 : s.ceSum, overflowSkipped ? 0 : s.labels,
                       overflowSkipped ? 0 : s.alignmentPoints, uint64_t(batch.sentences), batch.trgWords);
          ABORT_IF(!std::isfinite(s.ceSum) && !s.skipped,
                   "Cost is {} at update {}: training diverged; the last saved checkpoint is kept (try a "
                   "lower --learn-rate or --clip-norm)",
                   s.ceSum, state_.batches);
        }
        if(agreement_->onceARound())
          meetIfDue(data);
        resetOptimizerIf(lr_.afterUpdate(state_, labelsBefore, state_.batches == firstUpdate + 1));
        faultPoint("update-" + std::to_string(state_.batches), rank_);
        // Marian's log shows the rate of the next update
        lastTrgWords = trgWords;
        if(schedule_.displayDue(state_, labelsBefore)) {
          display_.show(state_, lr_.at(state_), trgWords,
                        graphGroup_->statusLine());
          nameSlowRank();
        }
        // every rank in lockstep finds the same due (they count the same), as collectives need;
        // only rank 0's validation can end training early
        if(schedule_.validationDue(state_, labelsBefore)) {
          bool early = validate();
          stop = (lockstep ? rankZerosDecision(early, "the decision to stop after a validation") : early) || stop;
        }
        if(schedule_.saveDue(state_, labelsBefore))
          save(data);
        labelsBefore = state_.labelsTotal;
        if(agreement_->everyUpdate())
          stoppedBySignal_ = lockstep ? agreed.signalled : signalled();  // a rank alone: after the update in flight
        stop = stop || schedule_.stopsAfterUpdate(state_) || stoppedBySignal_ || rankZeroEnded();
      }
      // an epoch too small to give every rank a whole update would repeat without end (with
      // local steps the ranks idle to the round's end: nothing trained then)
      ABORT_IF(!stop && (state_.batchesEpoch == 0 || state_.samplesEpoch == 0),
               "Epoch {} gave this rank no update: the corpus makes fewer mini-batches than the {} one update of "
               "every rank needs ({} rank(s) x --optimizer-delay {}); lower --mini-batch or --mini-batch-words",
               state_.epochs, schedule_.delay() * size_t(ranks_), ranks_, schedule_.delay());
      if(!stop) {
        if(schedule_.displayDueAtEpoch(state_.epochs))  // --disp-freq Ne
          display_.show(state_, lr_.at(state_), lastTrgWords,
                        graphGroup_->statusLine());
        LOG(info, "Seen {} samples", grouped(state_.samplesEpoch));
        data.logEpochEnd(state_.epochs);
        size_t finished = state_.epochs;
        // not again for the same parameters: a validation due at the epoch's last update (or before
        // the checkpoint this run resumed from, saved at the epoch's end) would count a stall
        if(schedule_.validationDueAtEpoch(finished) && state_.lastValidated != state_.batches)
          stop = validate() || stop;
        if(schedule_.saveDueAtEpoch(finished) && !savedHere())
          save(data);
        // the last epoch keeps its number (and a complete position) in the final log and files
        stop = stop || schedule_.stopsAfterEpoch(finished) || rankZeroEnded();
        if(lockstep)
          stop = rankZerosDecision(stop, "the decision to stop");
        if(!stop) {
          state_.newEpoch();
          resetOptimizerIf(lr_.afterEpoch(state_));
          LOG(info, "Starting data epoch {} in logical epoch {}", state_.epochs, state_.epochs);  // Marian's line
        }
      }
    }
    data.logPeakBytes();
    faultPoint("end", rank_);
    // what only rank 0 knows (its validations, its signal) ends the others after their current
    // update; the ends every rank reaches by itself (--after-epochs, --after-batches) they keep
    if(ranks_ > 1 && !lockstep && rank_ == 0 && (earlyStopped() || stoppedBySignal_))
      graphGroup_->announceEnd();
    graphGroup_->finish();
    timeline::write();
    if(resume && state_.batches == firstUpdate && !stoppedBySignal_) {
      // restarting a finished run changes nothing: no update, no validation, no save
      LOG(info, "Training had already finished at update {} (epoch {}); nothing to do", state_.batches,
          state_.epochs);
      return;
    }
    if(stoppedBySignal_) {
      LOG(info, "Training stops on SIGTERM (--sigterm save-and-exit) at update {}", state_.batches);
    } else {
      LOG(info, "Training finished");
      if(validator_ && state_.lastValidated != state_.batches)
        validate();
    }
    if(!savedHere())
      save(data, /*final=*/true);
  }

private:
  // Rank 0 names the rank (or the link) the others waited for since the last display line, in
  // the log and on the timeline.
  void nameSlowRank() {
    if(!transport_ || ranks_ < 2 || rank_ != 0)
      return;
    std::string verdict = slowRanks_.judge(transport_->peerView());
    if(verdict.empty())
      return;
    LOG(warn, "[comm] Up. {}: {}", state_.batches, verdict);
    timeline::instant("slow rank", verdict);
  }

  // Local steps: the ranks meet at a round's end and after an epoch's last update in memory
  // (every rank knows it), on what they trained since they last met, before that update's
  // display, validation, save and stop; where they agree the epoch is over (a streamed epoch ran
  // out on some rank during the round), it ends after this update on every rank, and a checkpoint
  // saved here says so.
  void meetIfDue(EpochData& data) {
    bool lastOfEpoch = !data.streamed() && data.endsAfterThisUpdate();
    if(!lastOfEpoch && !agreement_->meetsAfter(state_.batches))
      return;
    LockstepAgreement::Outcome met = agreement_->meet(state_.batches, signalled());
    state_.countAgreed(met.job.sentences, met.job.labels);
    stoppedBySignal_ = met.signalled;
    if(lastOfEpoch || met.epochEnded) {
      data.endEpochWithout({});
      state_.epochOver = true;
    }
  }

  // Rank 0 decides whether to stop after a validation (early stopping: only it validates) and at
  // an epoch's end: ranks in lockstep must stop at the same update or the others would wait for
  // it (the schedule's own decisions need no agreement: they count the same labels).
  bool rankZerosDecision(bool mine, const char* what) const {
    bool agreed = false;
    transport_->waitingForRanks([&] { agreed = transport_->broadcastFromRoot(mine ? 1 : 0, transport_->peerTimeout(), what) != 0; });
    return agreed;
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

  // Validates and updates the stall counters; returns whether early stopping triggers. Only
  // rank 0 validates (and saves), with the parameters gathered from every shard.
  bool validate() {
    if(!validator_)
      return false;
    if(ranks_ > 1 && graphGroup_->ranksInLockstep())
      graphGroup_->prepareValidation();  // collective: every rank takes part in rank 0's validation
    ++validations_;
    if(rank_ != 0) {
      state_.lastValidated = state_.batches;
      afterValidation(0, 0);  // (rank 0's counts, where the rate follows them)
      return false;
    }
    releaseIdleMemory();
    std::vector<float> values = graphGroup_->values(/*smoothed=*/true);
    refuseDiverged(firstNotFinite(values, options_.get<float>("exponential-smoothing") > 0.f ? "smoothed_parameters"
                                                                                             : "master_parameters"),
                   state_.batches, "nothing is validated or saved");
    std::vector<double> scores = validator_->validate(values, graphGroup_->layout().totalSize(), state_);
    state_.lastValidated = state_.batches;
    size_t stalledBefore = earlyStopping_.stalled(state_);
    for(const std::string& metric : earlyStopping_.record(scores, state_))
      if(options_.get<bool>("keep-best"))
        export_->writeModel(folder_->model() + ".best-" + metric + ".npz", values);
    afterValidation(stalledBefore, earlyStopping_.stalled(state_));
    if(earlyStopped()) {
      LOG(info, "Training stops: {}", earlyStopping_.reason(state_));
      return true;
    }
    return false;
  }

  // --lr-decay-reset-optimizer: a decay resets the optimizers' statistics.
  void resetOptimizerIf(bool decayed) {
    if(decayed && lr_.resetsOptimizer())
      graphGroup_->resetOptimizerStatistics();
  }

  // The learning rate's event after a validation that left the metrics stalled `stalled` times in a
  // row, `before` before it. Only rank 0 validates: ranks in lockstep whose rate follows the stalls
  // (--lr-decay-strategy stalled) take rank 0's counts and so decay (and reset) as it does.
  void afterValidation(size_t before, size_t stalled) {
    if(ranks_ > 1 && graphGroup_->ranksInLockstep() && lr_.followsValidation())
      transport_->waitingForRanks([&] {
        before = transport_->broadcastFromRoot(before, transport_->peerTimeout(), "the stalls of validation");
        stalled = transport_->broadcastFromRoot(stalled, transport_->peerTimeout(), "the stalls of validation");
      });
    resetOptimizerIf(lr_.afterValidation(state_, before, stalled));
  }

  // Whether the files hold this update's state: saved at it (or resumed from it), no validation since.
  bool savedHere() const { return lastSaved_ == state_.batches && validationsSaved_ == validations_; }

  bool earlyStopped() const { return validator_ && earlyStopping_.stops(state_); }

  // Before validation or a save, which take memory of their own: the devices' workspaces, and the
  // host heap's free blocks (the libraries' per-product buffers, oneDNN's packing, that malloc
  // keeps in its arenas), go back to the system, so that the process's peak is training's.
  void releaseIdleMemory() {
    graphGroup_->releaseWorkspaces();
    malloc_trim(0);
  }

  // Groups in lockstep gather their state collectively, so every rank comes here at the same
  // update; rank 0 writes. The exports (model.npz, its iteration copy, the YAML files) go first,
  // the checkpoint is the commit, progress.yml is written last for readers.
  // final: the save at the end of training, which writes no model.iterN.npz (as Marian's)
  void save(const EpochData& data, bool final = false) {
    bool collective = ranks_ > 1 && graphGroup_->ranksInLockstep();
    if(rank_ != 0 && !collective)
      return;
    data.recordPosition(state_);
    TrainingState saved = state_;
    LockstepAgreement::Counts unagreed = agreement_->unagreed(state_.batches);  // (collective mid-round)
    saved.samplesUnagreed = unagreed.sentences;
    saved.labelsUnagreed = unagreed.labels;
    releaseIdleMemory();
    ModelState model = graphGroup_->saveState();
    model.parameterLayout = graphGroup_->layout().layoutFingerprint();
    lastSaved_ = state_.batches;  // on every rank: the final save must be collective too
    validationsSaved_ = validations_;
    if(rank_ != 0)
      return;
    export_->save(model, saved, final);
  }

  Options options_;
  Transport* transport_;  // the job's ranks, or null
  const TrainingData* loaded_;  // shared with the other ranks of this process, or null
  SlowRankJudge slowRanks_;
  std::unique_ptr<ModelFolder> folder_;
  TrainingSchedule schedule_;
  LearningRate lr_;
  TrainingData data_;
  std::unique_ptr<Validator> validator_;
  std::unique_ptr<GraphGroup> graphGroup_;
  std::unique_ptr<ModelExport> export_;  // once the graph group knows the layout
  ProgressDisplay display_;
  EarlyStopping earlyStopping_;
  TrainingState state_;
  std::unique_ptr<LockstepAgreement> agreement_;  // once the graph group says how often the ranks meet
  std::unique_ptr<Checkpoint> checkpoint_;  // read at the start, installed after the graph group
  uint64_t lastSaved_ = uint64_t(-1);
  uint64_t validations_ = 0, validationsSaved_ = 0;  // validate()'s runs: one since the last save changed the state
  bool heardRankZeroEnd_ = false;
  bool stoppedBySignal_ = false;  // what the ranks agreed on (lockstep), or this rank's own
  int rank_ = 0, ranks_ = 1;
};

}  // namespace

void train(const Options& options, Transport* ranks, const TrainingData* loaded) {
  flushDenormalsToZero();
  installStopSignal(options.get<std::string>("sigterm"));
  Trainer trainer(options, ranks, loaded);
  try {
    trainer.run();
  } catch(const std::exception& e) {
    trainer.removeWhatAFailedStartCreated();
    // End every rank now: unwinding would first wait in the graph group's destructor for ranks
    // that train on, and they would never hear of it.
    if(ranks && ranks->size() > 1)
      ranks->abort(e.what());
    throw;
  }
}

}  // namespace marian
