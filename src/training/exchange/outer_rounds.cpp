#include "training/exchange/outer_rounds.h"

#include <algorithm>

#include "common/error.h"
#include "common/logging.h"
#include "common/timeline.h"

namespace marian {

namespace {

OuterSettings outerSettings(const Options& o) {
  OuterSettings s;
  s.nesterov = o.get<std::string>("outer-optimizer") == "nesterov";
  s.learnRate = o.get<float>("outer-learn-rate");
  s.momentum = o.get<float>("outer-momentum");
  return s;
}

const char* kStart = "outer-start";
const char* kMomentum = "outer-momentum";
const char* kInFlight = "outer-in-flight";  // the ranks' mean pseudo-gradient of each fragment in flight
// the schedule and position a checkpoint's fragments in flight belong to
const char* kSavedSteps = "outer-local-steps";
const char* kSavedFragments = "outer-fragments";
const char* kSavedDelay = "outer-delay";
const char* kSavedUpdates = "outer-updates";
const std::string kMergeAfter = "outer-merge-after.";  // + the fragment: the update count it merges after

// (checks --outer-fragments and --outer-delay against --local-steps)
FragmentSchedule scheduleOf(const Options& o) {
  return FragmentSchedule(uint64_t(o.get<int>("local-steps")), uint64_t(o.get<int>("outer-fragments")),
                          uint64_t(o.get<int>("outer-delay")));
}

uint64_t savedCounter(const ModelState& state, const char* name) {
  auto c = state.counters.find(name);
  ABORT_IF(c == state.counters.end(), "The checkpoint has fragments in flight but no counter '{}'", name);
  return c->second;
}

// the schedule of a checkpoint with fragments in flight
FragmentSchedule savedSchedule(const ModelState& state) {
  return FragmentSchedule(savedCounter(state, kSavedSteps), savedCounter(state, kSavedFragments),
                          savedCounter(state, kSavedDelay));
}

// what resuming a checkpoint with fragments in flight needs
std::string inFlightNeeds(const ModelState& state) {
  FragmentSchedule was = savedSchedule(state);
  return format("The checkpoint was saved after update {} with fragments in flight under --local-steps {} "
                "--outer-fragments {} --outer-delay {}: resume it with the same three",
                savedCounter(state, kSavedUpdates), was.steps(), was.fragments(), was.delay());
}

}  // namespace

uint64_t OuterRounds::localSteps(const Options& o) {
  validateOuterExchangeOptions(o);
  uint64_t steps = uint64_t(o.get<int>("local-steps"));
  bool streamed = o.get<int>("outer-fragments") != 1 || o.get<int>("outer-delay") != 0;
  ABORT_IF(steps == 0 && streamed, "--outer-fragments and --outer-delay stream the exchanges of --local-steps, which is off");
  if(steps == 0)
    return 0;
  ABORT_IF(o.get<bool>("multi-node"), "--local-steps trains synchronously across ranks (--sync-sgd), not with the "
                                      "parameter server (--multi-node)");
  ABORT_IF(o.get<float>("compression-density") < 1.f || o.get<int>("powersgd-rank") > 0 || o.get<bool>("onebit-adam") ||
               o.get<bool>("zero-one-adam") || o.get<std::string>("local-gradients") != "off",
           "--local-steps exchanges the ranks' parameters once a round, not their gradients: it takes no gradient "
           "compression (--compression-density, --powersgd-rank, --onebit-adam, --zero-one-adam, --local-gradients)");
  scheduleOf(o);
  return steps;
}

OuterRounds::OuterRounds(const Options& options, Transport& transport, const std::vector<float>& start,
                         const std::vector<size_t>& parameterStarts)
    : transport_(transport), schedule_(scheduleOf(options)), mergeAlpha_(options.get<float>("outer-merge-alpha")),
      n_(start.size()), taken_(transport.bytes(Channel::outer)) {
  ABORT_IF(localSteps(options) == 0, "OuterRounds without --local-steps");
  ABORT_IF(schedule_.fragments() > n_ && n_ > 0, "--outer-fragments {} for a model of {} parameters",
           schedule_.fragments(), n_);
  OuterSettings settings = outerSettings(options);
  for(size_t p = 0; p < schedule_.fragments(); ++p) {
    fragments_.push_back(schedule_.fragment(p, n_));
    outer_.emplace_back(settings, rangeOf(start, fragments_.back()));
    exchanges_.push_back(createOuterExchange(options, transport, fragments_.back(), parameterStarts));
  }
  if(schedule_.delay() > 0)
    worker_ = std::make_unique<SerialWorker>("outer exchange");
}

OuterRounds::~OuterRounds() = default;

bool OuterRounds::afterUpdate(uint64_t update, const ParameterAccess& parameters) {
  updates_ = update + 1;
  bool wrote = false;
  for(size_t p = 0; p < fragments_.size(); ++p) {
    if(!schedule_.sends(p, updates_))
      continue;
    const std::vector<float>& start = outer_[p].start();
    auto delta = std::make_shared<std::vector<float>>(parameters.read(fragments_[p]));
    for(size_t i = 0; i < start.size(); ++i)
      (*delta)[i] = start[i] - (*delta)[i];
    if(!worker_) {  // no delay: wait for it here, the fragment has not moved since
      {
        timeline::Span span("outer exchange", "comm");
        exchanges_[p]->average(*delta);
      }
      merge(p, *delta, /*mix=*/false, parameters);
      wrote = true;
      continue;
    }
    OuterExchange* exchange = exchanges_[p].get();
    InFlight f{p, updates_ + schedule_.delay(), delta};
    f.ticket = worker_->post([exchange, delta] {
      timeline::Span span("outer exchange", "comm");
      exchange->average(*delta);
    });
    inFlight_.push_back(std::move(f));
  }
  // (a resume continues from the update it was saved after: no merge is ever skipped)
  ABORT_IF(!inFlight_.empty() && inFlight_.front().mergeAfter < updates_,
           "Fragment {} was due to merge after update {}, but training went on to update {}", inFlight_.front().fragment,
           inFlight_.front().mergeAfter, updates_);
  while(!inFlight_.empty() && inFlight_.front().mergeAfter == updates_) {  // in the order sent: one delay for all
    InFlight& f = inFlight_.front();
    if(!f.done) {
      timeline::Span span("wait for outer exchange", "comm");
      worker_->wait(f.ticket);
    }
    merge(f.fragment, *f.delta, /*mix=*/true, parameters);
    inFlight_.pop_front();
    wrote = true;
  }
  return wrote;
}

void OuterRounds::merge(size_t p, const std::vector<float>& mean, bool mix, const ParameterAccess& parameters) {
  timeline::Span span("outer step", "comm");
  const std::vector<float>& outer = outer_[p].step(mean);
  if(!mix || mergeAlpha_ == 0.f) {
    parameters.write(fragments_[p], outer);
    return;
  }
  std::vector<float> local = parameters.read(fragments_[p]);
  for(size_t i = 0; i < local.size(); ++i)
    local[i] = mergeAlpha_ * local[i] + (1.f - mergeAlpha_) * outer[i];
  parameters.write(fragments_[p], local);
}

AllreduceBytes OuterRounds::takeBytes() {
  ChannelBytes now = transport_.bytes(Channel::outer);
  AllreduceBytes b;
  b.sent = now.sent - taken_.sent;
  b.received = now.received - taken_.received;
  taken_ = now;
  return b;
}

void OuterRounds::saveTo(ModelState& state) {
  for(InFlight& f : inFlight_)
    if(!f.done) {
      worker_->wait(f.ticket);
      f.done = true;
    }
  saveHeldBack(transport_, exchanges_, fragments_, state);  // collective: before rank 0's own arrays
  std::vector<float>& start = state.extras[kStart];
  std::vector<float>& momentum = state.extras[kMomentum];
  start.resize(n_);
  momentum.resize(n_);
  for(size_t p = 0; p < fragments_.size(); ++p) {
    placeRange(start, fragments_[p], outer_[p].start());
    placeRange(momentum, fragments_[p], outer_[p].momentum());
  }
  if(!inFlight_.empty()) {
    std::vector<float>& means = state.extras[kInFlight];
    means.assign(n_, 0.f);
    for(const InFlight& f : inFlight_) {
      placeRange(means, fragments_[f.fragment], *f.delta);
      state.counters[kMergeAfter + std::to_string(f.fragment)] = f.mergeAfter;
    }
  }
  state.counters[kSavedSteps] = schedule_.steps();
  state.counters[kSavedFragments] = schedule_.fragments();
  state.counters[kSavedDelay] = schedule_.delay();
  state.counters[kSavedUpdates] = updates_;
}

void OuterRounds::refuseFragmentsInFlight(const ModelState& state) {
  ABORT_IF(state.extras.count(kInFlight), "{} on 2 ranks or more (this run takes no local steps)", inFlightNeeds(state));
}

void OuterRounds::restoreFrom(const ModelState& state) {
  if(worker_)  // nothing of this run's may still write the exchanges' state
    worker_->waitAll();
  ABORT_IF(state.n != n_, "A checkpoint of {} parameters for local steps over {}", state.n, n_);
  restoreHeldBack(state, transport_, exchanges_, fragments_);
  auto start = state.extras.find(kStart), momentum = state.extras.find(kMomentum);
  bool saved = start != state.extras.end();
  ABORT_IF(saved != (momentum != state.extras.end()), "The checkpoint holds one of '{}' and '{}' without the other",
           kStart, kMomentum);
  if(!saved && transport_.rank() == 0)
    LOG(info, "[training] The checkpoint has no outer state (saved without --local-steps): the first round starts "
              "from its parameters");
  if(saved)
    ABORT_IF(start->second.size() != n_ || momentum->second.size() != n_,
             "The checkpoint's outer state has {} and {} values for {} parameters", start->second.size(),
             momentum->second.size(), n_);
  // without an outer state, every rank from the saved parameters (the ranks' mean where they differ)
  const std::vector<float>& from = saved ? start->second : state.values;
  for(size_t p = 0; p < fragments_.size(); ++p) {
    outer_[p].start() = rangeOf(from, fragments_[p]);
    if(saved)
      outer_[p].momentum() = rangeOf(momentum->second, fragments_[p]);
    else
      std::fill(outer_[p].momentum().begin(), outer_[p].momentum().end(), 0.f);
  }

  // the fragments in flight when it was saved, merged after the same updates as they would have been
  inFlight_.clear();
  auto means = state.extras.find(kInFlight);
  if(means == state.extras.end())
    return;
  FragmentSchedule was = savedSchedule(state);
  uint64_t updates = savedCounter(state, kSavedUpdates);
  ABORT_IF(!(was == schedule_), "{} (this run has {}, {}, {})", inFlightNeeds(state), schedule_.steps(),
           schedule_.fragments(), schedule_.delay());
  ABORT_IF(means->second.size() != n_, "The checkpoint's '{}' has {} values for {} parameters", kInFlight,
           means->second.size(), n_);
  for(size_t p = 0; p < fragments_.size(); ++p) {
    auto merge = state.counters.find(kMergeAfter + std::to_string(p));
    if(merge == state.counters.end())
      continue;
    InFlight f{p, merge->second, std::make_shared<std::vector<float>>(rangeOf(means->second, fragments_[p]))};
    f.done = true;
    inFlight_.push_back(std::move(f));
  }
  std::sort(inFlight_.begin(), inFlight_.end(),
            [](const InFlight& a, const InFlight& b) { return a.mergeAfter < b.mergeAfter; });
  updates_ = updates;
}

}  // namespace marian
