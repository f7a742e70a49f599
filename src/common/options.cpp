#include "common/options.h"

#include <yaml-cpp/yaml.h>

#include <boost/program_options.hpp>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <unistd.h>

#include "common/error.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/marian_only_options.h"

namespace marian {

namespace po = boost::program_options;

// ---------------------------------------------------------------------------------------------
// The options this program knows, with Marian's names, defaults and meanings.

namespace {

enum class Kind { Flag, Int, Float, String, Strings, Ints, Floats };
enum Modes { kTrain = 1, kTranslate = 2, kBoth = 3 };

// An option's kind and, for numbers, the closed range every value must lie in (defaults, config
// files and the command line alike), so a nonsense value stops the program naming the option
// instead of dividing by zero, allocating without bound or training silently on.
struct Type {
  Kind kind;
  double lo = 0, hi = 0;
  bool numeric() const { return kind == Kind::Int || kind == Kind::Ints || kind == Kind::Float || kind == Kind::Floats; }
  bool list() const { return kind == Kind::Strings || kind == Kind::Ints || kind == Kind::Floats; }
};
constexpr Type kFlag{Kind::Flag}, kString{Kind::String}, kStrings{Kind::Strings};
constexpr Type Int(double lo, double hi) { return {Kind::Int, lo, hi}; }
constexpr Type Ints(double lo, double hi) { return {Kind::Ints, lo, hi}; }
constexpr Type Float(double lo, double hi) { return {Kind::Float, lo, hi}; }
constexpr Type Floats(double lo, double hi) { return {Kind::Floats, lo, hi}; }
constexpr double kBelowOne = 0.999999;  // dropout rates and the like: 1 would remove everything
constexpr double kMaxDevices = 1024;

struct Spec {
  const char* name;
  const char* shortName;  // "" when none
  Type type;
  const char* defaultYaml;  // "" = no default (absent unless given)
  int modes;
  const char* help;
  const char* implicitValue = "";  // value when given without one (--exponential-smoothing)
};

const std::vector<Spec>& specs() {
  static const std::vector<Spec> all = {
      // general
      {"config", "c", kStrings, "", kBoth, "YAML configuration files; later ones win"},
      {"dump-config", "", kFlag, "", kBoth, "Print the effective configuration as YAML and exit"},
      {"seed", "", Int(0, 4294967295.0), "0", kBoth, "Random seed; 0 draws one"},
      {"workspace", "w", Int(1, 1 << 20), "2048", kTrain, "Workspace per device in MB (activations)"},
      {"workspace", "w", Int(1, 1 << 20), "512", kTranslate, "Workspace per device in MB (activations)"},
      {"log", "", kString, "\"\"", kBoth, "Also write the log to this file"},
      {"quiet", "", kFlag, "false", kBoth, "Suppress logging to stderr"},
      {"relative-paths", "", kFlag, "false", kBoth, "Paths in a config file are relative to the file's folder"},
      {"log-level", "", kString, "info", kBoth, "Least level logged: trace, debug, info, warn, err, critical, off"},
      {"version", "", kFlag, "false", kBoth, "Print the version and exit"},
      {"devices", "d", kStrings, "[\"0\"]", kBoth, "GPU ids to use"},
      {"cpu-threads", "", Int(0, kMaxDevices), "1", kBoth, "Number of CPU devices (0: use --devices GPUs)"},
      {"tf32", "", kFlag, "false", kBoth,
       "GPU matrix products on TF32 tensor cores (inputs rounded to 10 mantissa bits, FP32 sums): faster, "
       "no longer the CPU's results"},
      {"mini-batch", "", Int(0, 1e7), "64", kTrain, "Sentences per mini-batch"},
      {"mini-batch", "", Int(1, 1e7), "1", kTranslate, "Sentences per mini-batch (Marian's decoder: 1)"},
      {"maxi-batch", "", Int(1, 1e6), "100", kTrain, "Mini-batches read ahead and sorted by length"},
      {"maxi-batch", "", Int(1, 1e6), "1", kTranslate, "Mini-batches read ahead and sorted by length"},
      {"maxi-batch-sort", "", kString, "trg", kTrain, "Sort maxi-batches by: none, src, trg"},
      {"maxi-batch-sort", "", kString, "none", kTranslate, "Sort maxi-batches by: none, src"},
      {"max-length", "", Int(2, 1e6), "50", kTrain, "Skip training sentences longer than this (tokens, </s> included)"},
      {"max-length", "", Int(2, 1e6), "1000", kTranslate, "Crop inputs longer than this (tokens, </s> included)"},
      {"vocabs", "v", kStrings, "", kBoth, "Vocabulary files (.spm, .yml); created if missing"},
      {"dim-vocabs", "", Ints(0, 1e8), "[0, 0]", kBoth, "Vocabulary sizes; 0: all words"},
      {"sentencepiece-options", "", kString, "\"\"", kTrain, "Extra options for training a missing SentencePiece vocabulary (spm_train's)"},
      {"sentencepiece-max-lines", "", Int(1, 2e9), "2000000", kTrain, "Lines sampled to train a missing SentencePiece vocabulary"},
      {"tempdir", "", kString, "/tmp", kTrain, "Folder for temporary files (the lines sampled for SentencePiece, a decompressed copy of a .gz training corpus)"},
      // translation (marian-decoder) and validation by translation
      {"models", "m", kStrings, "", kTranslate, "Model file to translate with (its configuration MODEL.yml beside it)"},
      {"input", "i", kStrings, "[stdin]", kTranslate, "Input file (plain or .gz); stdin by default"},
      {"output", "o", kString, "stdout", kTranslate, "Output file; stdout by default"},
      {"n-best", "", kFlag, "false", kTranslate, "Print the n-best list: id ||| translation ||| F0= score ||| normalized score"},
      {"beam-size", "b", Int(1, 1000), "12", kBoth, "Beam size (1: greedy)"},
      {"normalize", "n", Float(0, 100), "0", kBoth, "Divide scores by length^N", "1"},
      {"word-penalty", "", Float(-1e6, 1e6), "0", kBoth, "Subtract N per word from the score"},
      {"max-length-factor", "", Float(0.01, 1000), "3", kBoth, "Translations are at most N times the longest source of their mini-batch (Marian's rule)"},
      {"max-length-factor-per-sentence", "", kFlag, "false", kBoth, "--max-length-factor times each sentence's own source length instead (a translation then does not depend on its mini-batch)"},
      {"allow-unk", "", kFlag, "false", kBoth, "Let translations contain <unk> (Marian suppresses it by default)"},
      {"no-spm-encode", "", kFlag, "false", kTranslate, "The input is already SentencePiece pieces separated by spaces"},
      {"no-spm-decode", "", kFlag, "false", kTranslate, "Write SentencePiece pieces separated by spaces, not text"},
      {"word-scores", "", kFlag, "false", kTranslate, "Print each token's score (</s> included; not normalized): ||| WordScores= ..."},
      {"alignment", "", kString, "\"\"", kTranslate, "Word alignments (Marian's hard, soft, 0.0-1.0): not supported by this program", "1"},
      {"ignore-model-config", "", kFlag, "false", kTranslate, "Take the architecture from these options, not from the model's embedded configuration"},
      {"mini-batch-words", "", Int(0, 1e9), "0", kTranslate, "Source tokens per mini-batch, padding included (overrides --mini-batch)"},
      // model
      {"model", "m", kString, "model.npz", kTrain, "Path to the model file"},
      {"pretrained-model", "", kString, "\"\"", kTrain, "Start a new training from this model's parameters (those of the same name; the others drawn as usual); a resume ignores it"},
      {"type", "", kString, "transformer", kBoth, "Model type: transformer, s2s"},
      {"dim-emb", "", Int(1, 65536), "512", kBoth, "Embedding size"},
      {"dim-rnn", "", Int(1, 65536), "1024", kBoth, "RNN state size (s2s)"},
      {"enc-depth", "", Int(1, 1000), "1", kBoth, "Encoder layers"},
      {"dec-depth", "", Int(1, 1000), "1", kBoth, "Decoder layers"},
      {"enc-cell", "", kString, "gru", kBoth, "Encoder RNN cell (s2s): gru"},
      {"dec-cell", "", kString, "gru", kBoth, "Decoder RNN cell (s2s): gru"},
      {"enc-type", "", kString, "bidirectional", kBoth, "Encoder type (s2s): bidirectional"},
      {"enc-cell-depth", "", Int(1, 1000), "1", kBoth, "Transitions per encoder RNN layer (s2s): 1"},
      {"dec-cell-base-depth", "", Int(1, 1000), "2", kBoth, "Cells in the decoder's conditional base RNN (s2s): 2"},
      {"dec-cell-high-depth", "", Int(1, 1000), "1", kBoth, "Transitions per higher decoder RNN layer (s2s): 1"},
      {"skip", "", kFlag, "false", kBoth, "Skip connections between RNN layers (s2s): not supported"},
      {"transformer-heads", "", Int(1, 4096), "8", kBoth, "Attention heads"},
      {"transformer-dim-ffn", "", Int(1, 1 << 20), "2048", kBoth, "Feed-forward inner size"},
      {"transformer-ffn-activation", "", kString, "swish", kBoth, "Feed-forward activation: swish, gelu, relu"},
      {"transformer-ffn-depth", "", Int(1, 1000), "2", kBoth, "Dense layers in each feed-forward block"},
      {"transformer-decoder-dim-ffn", "", Int(0, 1 << 20), "0", kBoth, "Decoder's feed-forward inner size; 0: --transformer-dim-ffn"},
      {"transformer-decoder-ffn-depth", "", Int(0, 1000), "0", kBoth, "Decoder's feed-forward depth; 0: --transformer-ffn-depth"},
      {"transformer-tied-layers", "", Ints(1, 1000), "[]", kBoth, "Decoder layer i takes the parameters of layer N_i (one number per decoder layer)"},
      {"transformer-preprocess", "", kString, "\"\"", kBoth, "Ops before each block: d(ropout) a(dd) n(orm)"},
      {"transformer-postprocess", "", kString, "dan", kBoth, "Ops after each block"},
      {"transformer-postprocess-emb", "", kString, "d", kBoth, "Ops after the embeddings"},
      {"transformer-postprocess-top", "", kString, "\"\"", kBoth, "Ops after the last layer of each stack (n: the final norm of pre-norm transformers)"},
      {"transformer-dropout", "", Float(0, kBelowOne), "0", kTrain, "Dropout between transformer blocks"},
      {"transformer-dropout-attention", "", Float(0, kBelowOne), "0", kTrain, "Dropout on attention weights"},
      {"transformer-dropout-ffn", "", Float(0, kBelowOne), "0", kTrain, "Dropout inside the feed-forward block"},
      {"tied-embeddings", "", kFlag, "false", kBoth, "Tie target embeddings and output layer"},
      {"tied-embeddings-src", "", kFlag, "false", kBoth, "Tie source and target embeddings"},
      {"tied-embeddings-all", "", kFlag, "false", kBoth, "Tie all embeddings and the output layer"},
      {"layer-normalization", "", kFlag, "false", kBoth, "Layer normalisation in the RNN (s2s)"},
      {"dropout-rnn", "", Float(0, kBelowOne), "0", kTrain, "Dropout on RNN states (s2s)"},
      {"dropout-src", "", Float(0, kBelowOne), "0", kTrain, "Drop source words (s2s)"},
      {"dropout-trg", "", Float(0, kBelowOne), "0", kTrain, "Drop target words (s2s)"},
      {"label-smoothing", "", Float(0, kBelowOne), "0", kTrain, "Label smoothing epsilon"},
      {"cost-type", "", kString, "ce-sum", kTrain, "Training cost: ce-sum, ce-mean, ce-mean-words"},
      // data
      {"train-sets", "t", kStrings, "", kTrain, "Parallel training corpus (plain text or .gz)"},
      {"mini-batch-words", "", Int(0, 1e9), "0", kTrain, "Target words per mini-batch (overrides --mini-batch)"},
      {"mini-batch-fit", "", kFlag, "false", kTrain,
       "Mini-batches as large as fit --workspace at their sentences' length (overrides --mini-batch and --mini-batch-words)"},
      {"mini-batch-fit-step", "", Int(1, 1e4), "10", kTrain, "Length steps of --mini-batch-fit's statistics"},
      {"shuffle", "", kString, "data", kTrain, "Shuffle: data, batches, none"},
      {"no-shuffle", "", kFlag, "false", kTrain, "Do not shuffle (same as --shuffle none)"},
      {"shuffle-within-maxi-batch", "", kFlag, "true", kTrain,
       "Shuffle the mini-batches within each maxi-batch, cut from its longest sentence down, as Marian orders an epoch; =false: over the whole epoch (streamed: over the window)"},
      {"shuffle-in-ram", "", kFlag, "false", kTrain, "Hold the whole training corpus in memory and shuffle it whole (as a corpus that fits --shuffle-window always is)"},
      {"shuffle-window", "", Int(1, 1e9), "100000", kTrain,
       "Sentence pairs in memory at once when the corpus is streamed from disk (over all ranks): chunks of the corpus in random order, mixed and batched in windows this large; a corpus of at most this many pairs is held in memory whole"},
      {"data-threads", "", Int(1, 256), "8", kTrain, "Threads that read and encode the training corpus, in the background of training"},
      {"tsv", "", kFlag, "false", kTrain, "The training corpus is one file with a source and a target per line, separated by a TAB"},
      {"tsv-fields", "", Int(0, 2), "0", kTrain, "Fields of each --tsv line: 2 (0: as many as vocabularies)"},
      {"no-restore-corpus", "", kFlag, "false", kTrain, "On resume, start the epoch's corpus from its beginning"},
      {"max-length-crop", "", kFlag, "false", kBoth, "Crop sentences longer than --max-length instead of skipping them (decoding always crops)"},
      // optimizer
      {"optimizer", "o", kString, "adam", kTrain, "Optimizer: sgd, adagrad, adam"},
      {"optimizer-params", "", Floats(-1e6, 1e6), "[]", kTrain, "adam: beta1 beta2 eps; adagrad: eps"},
      {"optimizer-delay", "", Float(1, 1e6), "1", kTrain, "Mini-batches per update (gradients summed; Marian's meaning); whole numbers >= 1"},
      {"learn-rate", "l", Float(0, 1e6), "0.0001", kTrain, "Learning rate"},
      {"lr-warmup", "", kString, "0", kTrain, "Linear warm-up over this many updates (u), labels (t) or epochs (e: the epoch's number over N)"},
      {"lr-warmup-start-rate", "", Float(0, 1e6), "0", kTrain, "The rate the warm-up starts from (it rises linearly to --learn-rate)"},
      {"lr-decay-inv-sqrt", "", kStrings, "[\"0\"]", kTrain, "Decay by sqrt(N / (progress - START + N)) after START (the second value; N if absent), in u, t or e"},
      {"lr-report", "", kFlag, "false", kTrain, "Report the learning rate (always shown)"},
      {"clip-norm", "", Float(0, 1e30), "1", kTrain, "Clip the gradient to this L2 norm; 0: off"},
      {"normalize-gradient", "", kFlag, "false", kTrain, "Divide the gradient by the update's target labels (with sync-SGD across ranks, all ranks' labels, as Marian); off, as in Marian: the summed cross-entropy's gradient whatever --cost-type shows"},
      {"exponential-smoothing", "", Float(0, 1), "0", kTrain, "Keep an exponential moving average of the parameters", "0.0001"},
      {"sync-sgd", "", kFlag, "false", kTrain, "Synchronous SGD across devices (and, under mpirun, across ranks by allreduce)"},
      // synchronous SGD across MPI ranks (seeds 000-003)
      {"sparse-allreduce", "", kString, "dense", kTrain, "Allreduce across ranks: dense, ring, tree, topka, ssar-recdbl, ssar-split, dsar-split, gtopk, oktopk"},
      {"compression-density", "", Float(1e-9, 1), "1", kTrain, "Send this fraction of each rank's gradient (top-k with residuals); 1: all"},
      {"topk-selection", "", kString, "sampled", kTrain, "How the top-k threshold is found: exact, sampled, reuse"},
      {"topk-reuse-every", "", Int(1, 1e9), "32", kTrain, "reuse (and oktopk's global threshold): recompute the exact threshold every N updates"},
      {"bucket-size", "", Float(0, 1e6), "25", kTrain, "MB of gradients per allreduce bucket at most (parameters in the order backward finishes them), started while backward goes on; 0: one allreduce after backward"},
      {"oktopk-repartition-every", "", Int(1, 1e9), "64", kTrain, "oktopk: recompute the balanced region boundaries every N updates"},
      {"powersgd-rank", "", Int(0, 1e6), "0", kTrain, "PowerSGD (Vogels et al. 2019): send each gradient matrix as rank-r factors with error feedback, through --sparse-allreduce's dense sum; 0: off"},
      {"powersgd-start", "", Int(0, 2e9), "100", kTrain, "PowerSGD: dense sums for the first N updates"},
      {"adam-freeze-variance-after", "", Int(0, 2e9), "0", kTrain, "Adam's second moment stops changing after N steps (1-bit Adam's frozen variance, Tang et al. 2021); 0: never"},
      {"adam-variance-update-scaler", "", Int(0, 1e6), "0", kTrain, "0/1 Adam's variance schedule (Lu et al. 2023): Adam's second moment changes on kappa steps 1 apart, then kappa 2 apart, kappa 4 apart, ... until --adam-freeze-variance-after; 0: every step"},
      {"onebit-adam", "", kFlag, "false", kTrain, "1-bit Adam (Tang et al. 2021): after --adam-freeze-variance-after N dense updates the ranks average Adam's momentum as sign bits and a scale per parameter (or block), with error feedback on workers and servers"},
      {"zero-one-adam", "", kFlag, "false", kTrain, "0/1 Adam (Lu et al. 2023): until --adam-freeze-variance-after the ranks sum the gradient densely on the variance's steps (--adam-variance-update-scaler) and in 1 bit on the others, then average the momentum as --onebit-adam does"},
      {"onebit-block-size", "", Int(0, 2e9), "0", kTrain, "1-bit Adam: one scale per N values of a parameter; 0: one per parameter (DeepSpeed's)"},
      {"onebit-scale", "", kString, "rms", kTrain, "1-bit Adam: each segment's scale, rms (|x|_2/sqrt(n), DeepSpeed's) or mean-abs (|x|_1/n, EF-SignSGD's least-squares scale, robust to spikes)"},
      {"onebit-update-direction", "", kFlag, "false", kTrain, "1-bit Adam after the freeze: each momentum value sent in units of its frozen sqrt(v) (the sign and scale are the update direction m/sqrt(v)'s, not m's)"},
      // multi-node parameter server (seed 004)
      {"multi-node", "", kFlag, "false", kTrain, "Sharded parameter server across MPI ranks (mpirun -np N)"},
      {"multi-node-overlap", "", kFlag, "false", kTrain, "Overlap communication with computation (double buffers)"},
      {"multi-node-max-delay", "", Int(0, 1e9), "0", kTrain, "With overlap: at most this many compute steps between synchronisations; 0: unbounded"},
      {"multi-node-apply-summed", "", kFlag, "false", kTrain, "With overlap: apply the locally summed gradients (SGD step) to swapped-in parameters"},
      {"multi-node-single-client", "", kFlag, "false", kTrain, "One client of a node communicates at a time"},
      {"multi-node-local-optimizer", "", kFlag, "false", kTrain, "Clients also update their own parameters between synchronisations"},
      {"multi-node-timeout", "", Int(1, 1e6), "60", kTrain, "Seconds a wait on a silent rank (stopped, dead, unreachable) lasts before the job stops, in every mode"},
      {"grad-dropping-rate", "", Float(0, kBelowOne), "0", kTrain, "Drop this fraction of gradients (and deltas), keeping residuals; 0: dense"},
      {"grad-dropping-warmup", "", Int(0, 1e9), "0", kTrain, "Steps (client exchanges; sync-SGD updates) over which the sent fraction falls exponentially from 1 to its target"},
      // what makes compressed training converge (src/comm/compression.h)
      {"grad-dropping-momentum", "", Float(0, kBelowOne), "0", kTrain, "DGC momentum correction with factor masking for dropping and compressed allreduce; 0: off"},
      {"compression-clip-norm", "", Float(0, 1e30), "0", kTrain, "DGC local clipping: each rank's gradient clipped to this L2 norm / sqrt(ranks) before compression; 0: off"},
      {"local-gradients", "", kString, "off", kTrain, "Apply the own gradient's unsent part locally (Aji et al. 2019): off, partial, sum", "partial"},
      {"local-average-state", "", kString, "parameters", kTrain, "What --local-average-freq averages: parameters (and moving average) or all (also the optimizer moments)"},
      {"local-average-freq", "", Int(0, 1e9), "10", kTrain, "With --local-gradients: average the ranks' copies every N updates (parameter server: full replies every N exchanges); 0: never"},
      // schedule
      {"after-epochs", "e", Int(0, 1e9), "0", kTrain, "Stop after this many epochs; 0: no limit"},
      {"after-batches", "", Int(0, 2e9), "0", kTrain, "Stop after this many updates; 0: no limit"},
      {"sigterm", "", kString, "save-and-exit", kTrain, "On SIGTERM: save-and-exit (finish the update, save, stop) or exit-immediately"},
      {"after", "a", kString, "0e", kTrain, "Stop after this many epochs (e), updates (u) or labels (t)"},
      {"disp-freq", "", kString, "1000u", kTrain, "Display training statistics every N updates (u), labels (t) or epochs (e)"},
      {"disp-first", "", Int(0, 2e9), "0", kTrain, "Also display the first N updates"},
      {"disp-label-counts", "", kFlag, "true", kTrain, "Show the ce-sum Cost per label with the label counts (Cost X * labels @ last update's after all)"},
      {"save-freq", "", kString, "10000u", kTrain, "Save a checkpoint every N updates (u/t/e)"},
      {"valid-freq", "", kString, "10000u", kTrain, "Validate every N updates (u/t/e)"},
      {"valid-sets", "", kStrings, "", kTrain, "Parallel validation corpus"},
      {"valid-metrics", "", kStrings, "[cross-entropy]", kTrain, "cross-entropy, ce-mean-words, perplexity, bleu, bleu-detok, chrf, translation (scored by --valid-script-path), valid-script"},
      {"valid-script-path", "", kString, "\"\"", kTrain, "Command that prints a score: of the translation file (metric translation, file as its last argument) or of MODEL.dev.npz (metric valid-script)"},
      {"valid-script-args", "", kStrings, "[]", kTrain, "Arguments put between --valid-script-path and the translation file"},
      {"valid-translation-output", "", kString, "\"\"", kTrain, "Write the validation translations to this file; {E} {B} {U} {T}: epoch, batch in epoch, update, labels"},
      {"valid-log", "", kString, "\"\"", kTrain, "Also write the validation lines to this file"},
      {"quiet-translation", "", kFlag, "false", kBoth, "Do not log translations (none are logged: validation logs only scores)"},
      {"valid-mini-batch", "", Int(1, 1e7), "32", kTrain, "Sentences per validation batch"},
      {"valid-max-length", "", Int(2, 1e6), "1000", kTrain, "Longer validation sentences are cropped (tokens, </s> included)"},
      {"early-stopping", "", Int(0, 1e9), "10", kTrain, "Stop when the first metric stalled this many times; 0: never"},
      {"early-stopping-on", "", kString, "first", kTrain, "Which metrics must have stalled: first, all, any"},
      {"keep-best", "", kFlag, "false", kTrain, "Keep the best model per metric (model.npz.best-METRIC.npz)"},
      {"overwrite", "", kFlag, "false", kTrain, "Do not keep model.iter{N}.npz checkpoints"},
      {"overwrite-checkpoint", "", kFlag, "true", kTrain, "false: each model.iter{N}.npz also keeps its full checkpoint (.optimizer.npz, .progress.yml) to resume from"},
      {"timeline", "", kString, "\"\"", kTrain, "Write a Chrome trace of forward, backward, sync, update, send and receive per thread (ranks > 0: FILE.rankN)"},
  };
  return all;
}

// This program's options that Marian v1.12 lacks. A configuration written here (model.npz.yml,
// --dump-config) leaves them out while they have their defaults, so that real Marian's -c reads
// it (Marian refuses a key it does not know); one that asks for something stays, and Marian's
// refusal names it.
const std::set<std::string> kOptionsMarianLacks = {
    "adam-freeze-variance-after", "adam-variance-update-scaler", "bucket-size", "compression-clip-norm",
    "compression-density", "grad-dropping-momentum", "grad-dropping-rate", "grad-dropping-warmup",
    "local-average-freq", "local-average-state", "local-gradients", "max-length-factor-per-sentence", "multi-node",
    "multi-node-apply-summed", "multi-node-local-optimizer", "multi-node-max-delay", "multi-node-overlap",
    "multi-node-single-client", "multi-node-timeout", "oktopk-repartition-every", "onebit-adam",
    "onebit-block-size", "onebit-scale", "onebit-update-direction", "powersgd-rank", "powersgd-start",
    "shuffle-window", "shuffle-within-maxi-batch", "sparse-allreduce", "tf32", "timeline", "topk-reuse-every",
    "topk-selection", "zero-one-adam"};

// The option of that name in this program (marian, marian-decoder); an option of the other
// program otherwise, so that the caller can say it does not belong here.
// The options that name files or folders (--relative-paths resolves them).
const char* const kPathOptions[] = {"models", "vocabs", "input", "output", "model", "pretrained-model", "train-sets", "valid-sets",
                                    "valid-translation-output", "valid-log", "log", "timeline", "tempdir"};

const Spec* findSpec(const std::string& name, int modeBit) {
  const Spec* other = nullptr;
  for(const Spec& s : specs())
    if(name == s.name) {
      if(s.modes & modeBit)
        return &s;
      other = &s;
    }
  return other;
}

// This program's option of that name for this mode, or nullptr.
const Spec* ownSpec(const std::string& name, int modeBit) {
  const Spec* s = findSpec(name, modeBit);
  return s && (s->modes & modeBit) ? s : nullptr;
}

const char* kindName(Kind k) {
  switch(k) {
    case Kind::Flag: return "a boolean";
    case Kind::Int: return "an integer";
    case Kind::Float: return "a number";
    case Kind::String: return "a string";
    case Kind::Strings: return "a list of strings";
    case Kind::Ints: return "a list of integers";
    case Kind::Floats: return "a list of numbers";
  }
  return "";
}

bool scalarConverts(const YAML::Node& v, Kind k) {
  if(!v.IsScalar())
    return false;
  try {
    switch(k) {
      case Kind::Flag: v.as<bool>(); break;
      case Kind::Int: case Kind::Ints: v.as<long long>(); break;
      case Kind::Float: case Kind::Floats: v.as<double>(); break;
      default: break;
    }
  } catch(const YAML::Exception&) {
    return false;
  }
  return true;
}

std::string rangeText(const Type& t) {
  auto bound = [&](double v) { return t.kind == Kind::Int || t.kind == Kind::Ints ? std::to_string((long long)v) : format("{}", v); };
  return "between " + bound(t.lo) + " and " + bound(t.hi);
}

// Checks a value against its option's kind and range; a scalar given for a list becomes a
// 1-element list.
YAML::Node typed(const Spec& spec, const YAML::Node& value, const std::string& where) {
  const Type& type = spec.type;
  auto fail = [&](const std::string& shown) {
    ABORT("Option '{}'{}: value '{}' is not {}", spec.name, where, shown, kindName(type.kind));
  };
  auto checkRange = [&](const YAML::Node& v) {
    if(!type.numeric())
      return;
    double x = v.as<double>();
    ABORT_IF(!(x >= type.lo && x <= type.hi), "--{} {}{} is out of range: it must be {}", spec.name, v.Scalar(),
             where.empty() ? "" : " (" + where.substr(1) + ")", rangeText(type));
  };
  if(type.list()) {
    YAML::Node seq(YAML::NodeType::Sequence);
    if(value.IsNull())
      return seq;
    if(value.IsScalar()) {
      seq.push_back(value);
    } else if(value.IsSequence()) {
      seq = YAML::Clone(value);
    } else {
      fail(YAML::Dump(value));
    }
    for(const YAML::Node& item : seq) {
      if(!scalarConverts(item, type.kind))
        fail(YAML::Dump(value));
      checkRange(item);
    }
    return seq;
  }
  if(!scalarConverts(value, type.kind))
    fail(value.IsScalar() ? value.Scalar() : YAML::Dump(value));
  checkRange(value);
  return YAML::Clone(value);
}

YAML::Node fromCommandLine(const Spec& spec, const std::vector<std::string>& values) {
  if(spec.type.list()) {
    YAML::Node seq(YAML::NodeType::Sequence);
    for(const std::string& s : values)
      seq.push_back(YAML::Node(s));
    return typed(spec, seq, " on the command line");
  }
  // given without a value: a flag is true, an option with an implicit value takes it
  std::string value = !values.empty() ? values.back() : *spec.implicitValue ? spec.implicitValue : "true";
  return typed(spec, YAML::Node(value), " on the command line");
}

// One YAML configuration (a --config file, or the one embedded in a model) over what is already
// merged. Keys given twice are an error (YAML leaves the winner to the parser), as are wrong
// values and unknown keys; Marian's options this program lacks are accepted while they ask for
// nothing (common/marian_only_options.h). A model's own configuration (modelFile) may also hold
// its writer's "version" and options of other Marian versions, ignored; `file` names where it
// came from.
void mergeConfig(const std::string& text, const std::string& file, int modeBit, YAML::Node& config,
                 bool modelFile = false, std::map<std::string, std::string>* origin = nullptr) {
  YAML::Node loaded;
  try {
    loaded = YAML::Load(text);
  } catch(const YAML::Exception& e) {
    ABORT("Config file '{}' is not valid YAML: {}", file, e.what());
  }
  if(loaded.IsNull())
    return;
  ABORT_IF(!loaded.IsMap(), "Config file '{}' must be a YAML map of option: value", file);
  std::map<std::string, int> lineOf;
  std::string ignored;
  for(auto it = loaded.begin(); it != loaded.end(); ++it) {
    int line = it->first.Mark().line + 1;
    ABORT_IF(!it->first.IsScalar(), "Config file '{}', line {}: a key must be an option name, not '{}'", file, line,
             YAML::Dump(it->first));
    std::string key = it->first.Scalar();
    ABORT_IF(lineOf.count(key), "Config file '{}': option '{}' is given twice (lines {} and {})", file, key,
             lineOf[key], line);
    lineOf[key] = line;
    const Spec* spec = ownSpec(key, modeBit);
    std::string where = " in config file '" + file + "', line " + std::to_string(line);
    bool ours = spec != nullptr;
    // a model's "version" is the program that wrote it, not the --version flag
    if(modelFile && key == "version")
      continue;
    if(!ours && acceptMarianOnlyOption(key, it->second, where)) {
      ignored += (ignored.empty() ? "" : ", ") + key;
      continue;
    }
    if(!ours && modelFile) {  // an option of another Marian version, or of the other program
      ignored += (ignored.empty() ? "" : ", ") + key;
      continue;
    }
    ABORT_IF(!ours, "Unknown option '{}' in config file '{}', line {}", key, file, line);
    if(key == "config" || key == "dump-config")
      continue;
    config[key] = typed(*spec, it->second, where);
    if(origin)
      (*origin)[key] = file;
  }
  if(!ignored.empty())
    LOG(debug, "[config] {}: options of Marian's that ask for nothing here, ignored: {}", file, ignored);
}

// Marian's own model.npz.yml carries "version: v1.12.0 65bf82ff 2023-02-21" (its program's
// version, where a user's config could only hold the --version flag) and all of its 220 options:
// such a file is read like a model's configuration.
bool writtenByMarian(const std::string& text) {
  try {
    YAML::Node n = YAML::Load(text);
    if(!n.IsMap() || !n["version"] || !n["version"].IsScalar())
      return false;
    std::string v = n["version"].Scalar();
    return v.size() > 1 && v[0] == 'v' && std::isdigit(static_cast<unsigned char>(v[1]));
  } catch(const YAML::Exception&) {
    return false;  // mergeConfig names the error
  }
}

std::string helpText(const po::options_description& desc, ProgramMode mode) {
  std::ostringstream out;
  out << (mode == ProgramMode::translation ? "Usage: marian-decoder [options]\n" : "Usage: marian [options]\n") << desc;
  return out.str();
}

}  // namespace

// ---------------------------------------------------------------------------------------------

Options::Options() : node_(std::make_shared<YAML::Node>(YAML::NodeType::Map)) {}
Options::Options(const YAML::Node& node) : node_(std::make_shared<YAML::Node>(YAML::Clone(node))) {}

bool Options::has(const std::string& key) const { return (*node_)[key].IsDefined() && !(*node_)[key].IsNull(); }

namespace {
// The spec table's default of a known option that has one, as YAML; null otherwise.
// An option whose default differs between programs (--workspace) has none here.
YAML::Node specDefault(const std::string& key) {
  const char* found = nullptr;
  for(const Spec& s : specs())
    if(key == s.name) {
      if(found && std::string(found) != s.defaultYaml)
        return YAML::Node(YAML::NodeType::Null);
      found = s.defaultYaml;
    }
  return found && *found ? YAML::Load(found) : YAML::Node(YAML::NodeType::Null);
}
}  // namespace

template <class T>
T Options::get(const std::string& key) const {
  YAML::Node v = (*node_)[key];
  if(!v.IsDefined() || v.IsNull())  // options built in code (tests, a model's YAML) omit defaults
    v = specDefault(key);
  ABORT_IF(!v.IsDefined() || v.IsNull(), "Option '{}' is required but not set", key);
  try {
    return v.as<T>();
  } catch(const YAML::Exception&) {
    ABORT("Option '{}' has value '{}' of the wrong type", key, YAML::Dump(v));
  }
}

template <class T>
void Options::set(const std::string& key, const T& value) {
  node_ = std::make_shared<YAML::Node>(YAML::Clone(*node_));
  (*node_)[key] = value;
}

#define MARIAN_OPTION_TYPE(T)                                   \
  template T Options::get<T>(const std::string&) const;         \
  template void Options::set<T>(const std::string&, const T&);
MARIAN_OPTION_TYPE(bool)
MARIAN_OPTION_TYPE(int)
MARIAN_OPTION_TYPE(size_t)
MARIAN_OPTION_TYPE(float)
MARIAN_OPTION_TYPE(double)
MARIAN_OPTION_TYPE(std::string)
MARIAN_OPTION_TYPE(std::vector<int>)
MARIAN_OPTION_TYPE(std::vector<float>)
MARIAN_OPTION_TYPE(std::vector<std::string>)
#undef MARIAN_OPTION_TYPE

namespace {
// Whether `value` is the default of this program's option `key` (numbers compared as numbers).
bool hasDefault(const std::string& key, const YAML::Node& value) {
  const Spec* spec = findSpec(key, kBoth);
  if(!spec || !*spec->defaultYaml)
    return false;
  YAML::Node given = typed(*spec, value, ""), fallback = typed(*spec, YAML::Load(spec->defaultYaml), "");
  if(spec->type.numeric() && !spec->type.list())
    return given.as<double>() == fallback.as<double>();
  return YAML::Dump(given) == YAML::Dump(fallback);
}
}  // namespace

std::string Options::asYaml() const {
  std::map<std::string, YAML::Node> sorted;
  for(auto it = node_->begin(); it != node_->end(); ++it)
    sorted[it->first.as<std::string>()] = it->second;
  YAML::Emitter out;
  out << YAML::BeginMap;
  for(auto& [key, value] : sorted) {
    if(kOptionsMarianLacks.count(key) && hasDefault(key, value))
      continue;
    out << YAML::Key << key << YAML::Value;
    if(value.IsSequence())
      out << YAML::Flow;
    out << value;
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

ParsedOptions parseOptions(int argc, const char* const* argv, ProgramMode mode) {
  int modeBit = mode == ProgramMode::translation ? kTranslate : kTrain;
  po::options_description desc("Options");
  desc.add_options()("help,h", "Print this help and exit");
  std::set<std::string> implicitOptions;
  for(const Spec& s : specs()) {
    if(!(s.modes & modeBit))
      continue;
    std::string names = std::string(s.name) + (*s.shortName ? std::string(",") + s.shortName : "");
    std::string help = s.help + std::string(*s.defaultYaml ? " (default: " + std::string(s.defaultYaml) + ")" : "");
    if(s.type.kind == Kind::Flag) {
      desc.add_options()(names.c_str(), po::value<std::string>()->implicit_value("true")->zero_tokens(), help.c_str());
    } else if(s.type.list()) {
      desc.add_options()(names.c_str(), po::value<std::vector<std::string>>()->multitoken(), help.c_str());
    } else if(*s.implicitValue) {
      desc.add_options()(names.c_str(), po::value<std::string>()->implicit_value(s.implicitValue), help.c_str());
      implicitOptions.insert(std::string("--") + s.name);
    } else {
      desc.add_options()(names.c_str(), po::value<std::string>(), help.c_str());
    }
  }

  // Marian's options this program lacks parse too, out of --help: a bare flag, a value or a list
  po::options_description hidden;
  for(const std::string& name : marianOnlyOptionNames())
    if(!ownSpec(name, modeBit))  // Marian's --no-spm-encode is the decoder's here, inert in training
      hidden.add_options()(name.c_str(), po::value<std::vector<std::string>>()->multitoken()->zero_tokens(), "");
  po::options_description parseable;
  parseable.add(desc).add(hidden);

  // "--exponential-smoothing 0.001" as Marian accepts it: join an optional value to its option.
  // "--overwrite-checkpoint=false" as Marian's flags take it: boost's zero-token flags take no
  // value, so the value is kept aside and the flag passed bare.
  std::set<std::string> flagOptions;
  for(const Spec& s : specs())
    if((s.modes & modeBit) && s.type.kind == Kind::Flag)
      flagOptions.insert(std::string("--") + s.name);
  std::map<std::string, std::string> flagValues;
  std::vector<std::string> args;
  for(int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    size_t eq = a.find('=');
    if(eq != std::string::npos && flagOptions.count(a.substr(0, eq))) {
      flagValues[a.substr(2, eq - 2)] = a.substr(eq + 1);
      args.push_back(a.substr(0, eq));
      continue;
    }
    if(flagOptions.count(a))  // a bare flag after "--flag=false": the last one wins
      flagValues.erase(a.substr(2));
    auto isValue = [](const char* next) {  // not an option: a word, or a number such as -1
      return next[0] != '-' || std::isdigit(static_cast<unsigned char>(next[1])) || next[1] == '.';
    };
    if(implicitOptions.count(a) && i + 1 < argc && isValue(argv[i + 1]))
      a += std::string("=") + argv[++i];
    args.push_back(a);
  }

  // The last occurrence of an option on the command line wins, as with config files.
  std::map<std::string, std::vector<std::string>> given;
  try {
    po::parsed_options parsed = po::command_line_parser(args)
                                   .options(parseable)
                                   // full names only, as Marian: "--lr-decay" must not become --lr-decay-inv-sqrt
                                   .style(po::command_line_style::default_style & ~po::command_line_style::allow_guessing)
                                   .run();
    for(const po::option& opt : parsed.options) {
      if(opt.unregistered || opt.position_key >= 0)
        ABORT("Unexpected argument '{}' on the command line (see --help)",
              opt.original_tokens.empty() ? opt.string_key : opt.original_tokens[0]);
      // "-c a.yml -c b.yml" means both files, in order, as "-c a.yml b.yml" does
      if(opt.string_key == "config" && given.count("config"))
        given["config"].insert(given["config"].end(), opt.value.begin(), opt.value.end());
      else if(flagValues.count(opt.string_key))
        given[opt.string_key] = {flagValues[opt.string_key]};
      else
        given[opt.string_key] = opt.value;
    }
  } catch(const po::unknown_option& e) {
    ABORT("Unknown option '{}' (see --help)", e.get_option_name());
  } catch(const po::too_many_positional_options_error&) {
    ABORT("Unexpected argument on the command line; options start with '--' (see --help)");
  } catch(const po::error& e) {
    ABORT("Command line: {}", e.what());
  }

  ParsedOptions result;
  if(given.count("help")) {
    result.exitNow = true;
    result.print = helpText(desc, mode);
    return result;
  }
  if(given.count("version")) {
    result.exitNow = true;
    result.print = std::string(MARIAN_VERSION) + "\n";
    return result;
  }

  // 1. defaults
  YAML::Node config(YAML::NodeType::Map);
  for(const Spec& s : specs())
    if((s.modes & modeBit) && *s.defaultYaml)
      config[s.name] = typed(s, YAML::Load(s.defaultYaml), " (default)");

  // 2. config files, in order
  std::vector<std::string> configFiles;
  if(given.count("config"))
    configFiles = given["config"];
  std::map<std::string, std::string> origin;  // option -> the config file that set it last
  for(const std::string& file : configFiles) {
    ABORT_IF(!fileExists(file), "Config file '{}' (--config) does not exist", file);
    ABORT_IF(isDirectory(file), "Config file '{}' (--config) is a directory, not a YAML file", file);
    std::ifstream in(file);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ABORT_IF(in.bad(), "Config file '{}' could not be read", file);
    mergeConfig(text, file, modeBit, config, writtenByMarian(text), &origin);
  }

  // 3. the command line
  for(const std::string& name : marianOnlyOptionNames()) {
    if(!given.count(name) || ownSpec(name, modeBit))
      continue;
    const std::vector<std::string>& values = given[name];
    YAML::Node value(values.empty() ? YAML::Node("true") : YAML::Node(values[0]));
    if(values.size() > 1) {
      value = YAML::Node(YAML::NodeType::Sequence);
      for(const std::string& v : values)
        value.push_back(v);
    }
    acceptMarianOnlyOption(name, value, " on the command line");
  }
  for(const Spec& s : specs()) {
    if(!(s.modes & modeBit) || !given.count(s.name) || std::string(s.name) == "config")
      continue;
    config[s.name] = fromCommandLine(s, given[s.name]);
  }
  // --relative-paths (Marian's): paths set in a config file are relative to that file's folder
  if(config["relative-paths"].IsDefined() && config["relative-paths"].as<bool>()) {
    for(const char* key : kPathOptions) {
      if(!origin.count(key) || given.count(key) || !config[key].IsDefined())
        continue;
      std::filesystem::path base = std::filesystem::path(origin[key]).parent_path();
      auto resolve = [&](const YAML::Node& v) {
        std::string p = v.as<std::string>();
        return p.empty() || p == "stdin" || p == "stdout" || std::filesystem::path(p).is_absolute()
                   ? p : (base / p).lexically_normal().string();
      };
      if(config[key].IsSequence()) {
        YAML::Node seq(YAML::NodeType::Sequence);
        for(const YAML::Node& v : config[key])
          seq.push_back(resolve(v));
        config[key] = seq;
      } else {
        config[key] = resolve(config[key]);
      }
    }
  }

  bool dump = config["dump-config"].IsDefined() && config["dump-config"].as<bool>();
  config.remove("dump-config");
  config.remove("config");

  result.options = Options(config);
  Options& opt = result.options;
  if(dump) {
    result.exitNow = true;
    result.print = opt.asYaml();
    return result;
  }

  // Files that must exist now (vocabularies may be created).
  if(mode == ProgramMode::training) {
    auto train = opt.get<std::vector<std::string>>("train-sets", {});
    if(opt.get<bool>("tsv", false))
      ABORT_IF(train.size() != 1, "--tsv: --train-sets needs one file (source TAB target on each line), got {}",
               train.size());
    else
      ABORT_IF(train.size() != 2, "--train-sets needs a source and a target file (or one with --tsv), got {}",
               train.size());
    for(const std::string& f : train)
      ABORT_IF(!fileExists(f), "Training file '{}' (--train-sets) does not exist", f);
    for(const std::string& f : opt.get<std::vector<std::string>>("valid-sets", {}))
      ABORT_IF(!fileExists(f), "Validation file '{}' (--valid-sets) does not exist", f);
  }
  return result;
}

std::string modelConfigYaml(const Options& options, const std::vector<size_t>& vocabSizes) {
  static const char* const kModelKeys[] = {
      "type", "dim-emb", "dim-rnn", "enc-cell", "enc-type", "enc-cell-depth", "enc-depth", "dec-depth", "dec-cell",
      "dec-cell-base-depth", "dec-cell-high-depth", "skip", "layer-normalization",
      "tied-embeddings", "tied-embeddings-src", "tied-embeddings-all", "transformer-heads", "transformer-dim-ffn",
      "transformer-decoder-dim-ffn", "transformer-ffn-depth", "transformer-decoder-ffn-depth", "transformer-tied-layers",
      "transformer-ffn-activation", "transformer-preprocess", "transformer-postprocess", "transformer-postprocess-emb",
      "transformer-postprocess-top"};
  YAML::Emitter out;
  out << YAML::BeginMap;
  for(const char* key : kModelKeys) {
    ABORT_IF(!options.yaml()[key].IsDefined(), "Model option '{}' is not set", key);
    out << YAML::Key << key << YAML::Value << options.yaml()[key];
  }
  out << YAML::Key << "dim-vocabs" << YAML::Value << YAML::Flow << vocabSizes;
  out << YAML::Key << "version" << YAML::Value << MARIAN_VERSION << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

Options modelOptions(std::string yaml, const std::string& source) {
  while(!yaml.empty() && yaml.back() == '\0')  // Marian's special:model.yml ends with a NUL byte
    yaml.pop_back();
  YAML::Node config(YAML::NodeType::Map);
  for(const Spec& s : specs())
    if((s.modes & kTrain) && *s.defaultYaml)
      config[s.name] = typed(s, YAML::Load(s.defaultYaml), " (default)");
  mergeConfig(yaml, source, kTrain, config, /*modelFile=*/true);
  // Earlier versions of this program (no "version" key, no postprocess-top) ended every pre-norm
  // stack with a norm; Marian does so only with --transformer-postprocess-top n.
  YAML::Node given = YAML::Load(yaml);
  if(given.IsMap() && !given["version"] && !given["transformer-postprocess-top"] &&
     config["transformer-preprocess"].as<std::string>().find('n') != std::string::npos)
    config["transformer-postprocess-top"] = "n";
  return Options(config);
}

void logProgramStart(int argc, const char* const* argv, const Options& options) {
  char host[256] = "";
  gethostname(host, sizeof(host) - 1);
  std::string command = argv[0];
  for(int i = 1; i < argc; ++i)
    command += std::string(" ") + argv[i];
  LOG(info, "[marian] {}", MARIAN_VERSION);
  LOG(info, "[marian] Running on {} as process {} with command line:", host, int(getpid()));
  LOG(info, "[marian] {}", command);
  std::istringstream config(options.asYaml());
  for(std::string line; std::getline(config, line);)
    LOG(info, "[config] {}", line);
}

std::optional<Options> startProgram(int argc, const char* const* argv, ProgramMode mode) {
  ParsedOptions parsed = parseOptions(argc, argv, mode);
  if(parsed.exitNow) {
    std::fputs(parsed.print.c_str(), stdout);
    return std::nullopt;
  }
  const Options& o = parsed.options;
  logging::configure(o.get<std::string>("log", ""), o.get<bool>("quiet"), o.get<std::string>("log-level", "info"),
                     o.get<std::string>("valid-log", ""));
  return parsed.options;
}

}  // namespace marian
