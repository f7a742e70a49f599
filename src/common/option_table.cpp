#include "common/option_table.h"

namespace marian {
namespace option_table {

namespace {
constexpr Type kFlag{Kind::Flag}, kString{Kind::String}, kStrings{Kind::Strings};
constexpr Type Int(double lo, double hi) { return {Kind::Int, lo, hi}; }
constexpr Type Ints(double lo, double hi) { return {Kind::Ints, lo, hi}; }
constexpr Type Float(double lo, double hi) { return {Kind::Float, lo, hi}; }
constexpr Type Floats(double lo, double hi) { return {Kind::Floats, lo, hi}; }
constexpr Type Choice(const char* choices) { return {Kind::String, 0, 0, choices}; }
constexpr Type Choices(const char* choices) { return {Kind::Strings, 0, 0, choices}; }
constexpr double kBelowOne = 0.999999;  // dropout rates and the like: 1 would remove everything
constexpr double kMaxDevices = 1024;

}  // namespace

const std::vector<Spec>& specs() {
  static const std::vector<Spec> all = {
      // general
      {"config", "c", kStrings, "", kAnyProgram | kNode, "YAML configuration files; later ones win"},
      {"dump-config", "", Choice("full|minimal|expand|false"), "", kAnyProgram | kNode,
       "Print the effective configuration as YAML and exit (Marian's): full, every option; minimal, those the "
       "config files and the command line set; expand, those and what --task set", "full"},
      {"task", "", Choices("transformer-base|transformer-big|transformer-base-prenorm|transformer-big-prenorm"), "",
       kTrain, "Marian's presets of options (Vaswani et al. 2017 with Marian's training settings): transformer-base, "
       "transformer-big, transformer-base-prenorm, transformer-big-prenorm; the options given on the command line, "
       "and in config files where the preset is given in one, win over it"},
      {"seed", "", Int(0, 4294967295.0), "0", kBoth, "Random seed; 0 draws one"},
      {"workspace", "w", Int(1, 1 << 20), "2048", kTrain | kScore | kNode, "Workspace per device in MB (activations; a batch that needs more grows it, as Marian)"},
      {"workspace", "w", Int(1, 1 << 20), "512", kTranslate, "Workspace per device in MB (activations; a batch that needs more grows it, as Marian)"},
      {"log", "", kString, "\"\"", kAnyProgram | kNode, "Also write the log to this file"},
      {"quiet", "", kFlag, "false", kAnyProgram | kNode, "Suppress logging to stderr"},
      {"relative-paths", "", kFlag, "false", kAnyProgram | kNode,
       "In a config file: its paths are relative to the file's folder (made absolute as it is read, as Marian). "
       "Given otherwise: MODEL.decoder.yml names the model and vocabularies relative to the model's folder"},
      {"log-level", "", Choice("trace|debug|info|warn|err|critical|off"), "info", kAnyProgram | kNode, "Least level logged: trace, debug, info, warn, err, critical, off"},
      {"version", "", kFlag, "false", kAnyProgram | kNode, "Print the version and exit"},
      {"devices", "d", kStrings, "[\"0\"]", kAnyProgram | kNode, "GPU ids to use"},
      {"cpu-threads", "", Int(0, kMaxDevices), "1", kAnyProgram | kNode, "Number of CPU devices (0: use --devices GPUs)"},
      {"tf32", "", kFlag, "false", kAnyProgram | kOurs,
       "GPU matrix products on TF32 tensor cores (inputs rounded to 10 mantissa bits, FP32 sums): faster, "
       "no longer the CPU's results"},
      {"precision", "", kStrings, "[float32, float32]", kTrain,
       "Types of the forward/backward pass's matrix products and of optimization (Marian's option): "
       "float32 float32; bfloat16 float32 (not Marian's: products read bfloat16 and sum in float32, on CPUs "
       "with AVX512-BF16 or AMX and on GPUs); float16 float32 (GPUs). Optimization, the parameters and the "
       "gradients stay float32"},
      {"fp16", "", kFlag, "false", kTrain | kOurs,
       "Shortcut for --precision float16 float32 --cost-scaling 8 10000 1 8 (Marian's; GPUs)"},
      {"cost-scaling", "", kStrings, "[]", kTrain,
       "Dynamic cost scaling (Marian's): factor, frequency, multiplier, minimum factor. The cost is multiplied by "
       "the factor before backward and the gradient divided by it; an update whose gradient is not finite is "
       "skipped and the factor divided by the multiplier (not below the minimum; Marian applies such an update "
       "with its NaNs zeroed at the minimum), and multiplied by it after FREQUENCY finite updates. Synchronous "
       "training with the dense exchange", "8 10000 1 8"},
      {"mini-batch", "", Int(0, 1e7), "64", kTrain, "Sentences per mini-batch"},
      {"mini-batch", "", Int(1, 1e7), "1", kTranslate, "Sentences per mini-batch (Marian's decoder: 1)"},
      {"maxi-batch", "", Int(1, 1e6), "100", kTrain | kScore, "Mini-batches read ahead and sorted by length"},
      {"maxi-batch", "", Int(1, 1e6), "1", kTranslate, "Mini-batches read ahead and sorted by length"},
      {"maxi-batch-sort", "", Choice("none|src|trg"), "trg", kTrain | kScore, "Sort maxi-batches by: none, src, trg"},
      {"maxi-batch-sort", "", Choice("none|src"), "none", kTranslate, "Sort maxi-batches by: none, src"},
      {"max-length", "", Int(2, 1e6), "50", kTrain, "Skip training sentences longer than this (tokens, </s> included)"},
      {"max-length", "", Int(2, 1e6), "1000", kTranslate, "Crop inputs longer than this (tokens, </s> included)"},
      {"vocabs", "v", kStrings, "", kAnyProgram | kNode, "Vocabulary files: .spm SentencePiece, .yml/.yaml/.json a YAML map word: id, any other name a word a line; created if missing. Not given: TRAIN.yml beside each training file"},
      {"dim-vocabs", "", Ints(0, 1e8), "[0, 0]", kBoth, "Vocabulary sizes; 0: all words (a word vocabulary cut to its first N, or the model given N rows, as Marian)"},
      {"sentencepiece-options", "", kString, "\"\"", kTrain, "Extra options for training a missing SentencePiece vocabulary (spm_train's)"},
      {"sentencepiece-max-lines", "", Int(1, 2e9), "2000000", kTrain, "Lines sampled to train a missing SentencePiece vocabulary"},
      {"tempdir", "", kString, "/tmp", kTrain | kNode, "Folder for temporary files (the lines sampled for SentencePiece, a decompressed copy of a .gz training corpus)"},
      // translation (marian-decoder) and validation by translation
      {"models", "m", kStrings, "", kTranslate, "Model file to translate with (its configuration MODEL.yml beside it); several: an ensemble, each step's log-probabilities summed"},
      {"weights", "", Floats(-1e6, 1e6), "[]", kTranslate, "An ensemble's weights, one a model (default: 1 each): each model's log-probabilities count this much (Marian's)"},
      {"input", "i", kStrings, "[stdin]", kTranslate, "Input file (plain or .gz); stdin by default"},
      {"output", "o", kString, "stdout", kTranslate | kScore, "Output file; stdout by default"},
      {"n-best", "", kFlag, "false", kTranslate, "Print the n-best list: id ||| translation ||| F0= score ||| normalized score"},
      {"beam-size", "b", Int(1, 1000), "12", kBoth, "Beam size (1: greedy)"},
      {"normalize", "n", Float(0, 100), "0", kAnyProgram,
       "Divide scores by length^N (marian-scorer: each score by its target's tokens, </s> included, as Marian's bare -n)", "1"},
      {"word-penalty", "", Float(-1e6, 1e6), "0", kBoth, "Subtract N per word from the score"},
      {"max-length-factor", "", Float(0.01, 1000), "3", kBoth, "Translations are at most N times the longest source of their mini-batch (Marian's rule)"},
      {"max-length-factor-per-sentence", "", kFlag, "false", kBoth | kOurs, "--max-length-factor times each sentence's own source length instead (a translation then does not depend on its mini-batch)"},
      {"allow-unk", "", kFlag, "false", kBoth, "Let translations contain <unk> (Marian suppresses it by default)"},
      {"no-spm-encode", "", kFlag, "false", kTranslate, "The input is already SentencePiece pieces separated by spaces"},
      {"no-spm-decode", "", kFlag, "false", kTranslate, "Write SentencePiece pieces separated by spaces, not text"},
      {"output-sampling", "", kStrings, "[]", kTranslate,
       "Sample translations (Marian's): full [T], topk [K [T]], nucleus [P [T]], epsilon [E [T]], each step's "
       "distribution pruned, at temperature T, with Gumbel noise (beam 1: a sample; more: stochastic beam search); "
       "--seed fixes the samples (0: drawn)", "full 1.0"},
      {"word-scores", "", kFlag, "false", kTranslate | kScore, "Print each token's score (</s> included; not normalized): ||| WordScores= ..."},
      {"alignment", "", kString, "\"\"", kTranslate | kScore,
       "Print word alignments after each translation (score), from the attention --guided-alignment guides: hard "
       "(each target token's most likely source token), soft (every probability), or a threshold in (0, 1] (the "
       "points above it); bare: 1, hard (Marian's). Tokens are the vocabulary's, </s> included", "1"},
      {"ignore-model-config", "", kFlag, "false", kTranslate, "Take the architecture from these options, not from the model's embedded configuration"},
      {"mini-batch-words", "", Int(0, 1e9), "0", kTranslate, "Source words per mini-batch, as Marian: a batch ends with the sentence that passes them (instead of --mini-batch sentences; --mini-batch x --maxi-batch are still the sentences read ahead)"},
      // scoring (marian-scorer): Marian's scorer options
      {"model", "m", kString, "model.npz", kScore, "Model file to score with (its architecture from the configuration it holds)"},
      {"train-sets", "t", kStrings, "", kScore, "Sentence pairs to score: a source and a target file (plain or .gz); with --tsv one file; with --n-best the source and an n-best list"},
      {"tsv", "", kFlag, "false", kScore, "The pairs are one file with a source and a target per line, separated by a TAB"},
      {"mini-batch", "", Int(1, 1e7), "64", kScore, "Sentence pairs per mini-batch"},
      {"max-length", "", Int(2, 1e6), "1000", kScore, "A pair with a side longer than this (tokens, </s> included) is an error naming its line, unless --max-length-crop crops it (Marian's scorer writes no score from that pair on)"},
      {"n-best", "", kFlag, "false", kScore, "Score an n-best list (the last --train-sets: id ||| translation ||| features ||| score, the id its source's line): each line gets the feature FEATURE= score"},
      {"n-best-feature", "", kString, "Score", kScore, "Name of the feature --n-best adds"},
      {"summary", "", Choice("cross-entropy|ce-mean|ce-mean-words|ce-sum|perplexity"), "", kScore,
       "Print one figure for the whole set instead of a score a pair: cross-entropy (ce-mean, per pair), "
       "ce-mean-words (per target token), ce-sum, perplexity (exp of ce-mean-words)", "cross-entropy"},
      // model
      {"model", "m", kString, "model.npz", kTrain, "Path to the model file"},
      {"pretrained-model", "", kString, "\"\"", kTrain | kNode, "Start a new training from this model's parameters (those of the same name; the others drawn as usual); a resume ignores it"},
      {"type", "", kString, "transformer", kBoth | kModel, "Model type: transformer, s2s"},
      {"right-left", "", kFlag, "false", kAnyProgram | kModel,
       "A right-to-left model (Marian's): every sentence's words reversed, source and target, </s> last; "
       "translations come out in reading order, word scores in the model's (marian-scorer: the model's own "
       "setting wins)"},
      {"dim-emb", "", Int(1, 65536), "512", kBoth | kModel, "Embedding size"},
      {"dim-rnn", "", Int(1, 65536), "1024", kBoth | kModel, "RNN state size (s2s)"},
      {"enc-depth", "", Int(1, 1000), "1", kBoth | kModel, "Encoder layers"},
      {"dec-depth", "", Int(1, 1000), "1", kBoth | kModel, "Decoder layers"},
      {"enc-cell", "", kString, "gru", kBoth | kModel, "Encoder RNN cell (s2s): gru"},
      {"dec-cell", "", kString, "gru", kBoth | kModel, "Decoder RNN cell (s2s): gru"},
      {"enc-type", "", kString, "bidirectional", kBoth | kModel, "Encoder type (s2s): bidirectional"},
      {"enc-cell-depth", "", Int(1, 1000), "1", kBoth | kModel, "Transitions per encoder RNN layer (s2s): 1"},
      {"dec-cell-base-depth", "", Int(1, 1000), "2", kBoth | kModel, "Cells in the decoder's conditional base RNN (s2s): 2"},
      {"dec-cell-high-depth", "", Int(1, 1000), "1", kBoth | kModel, "Transitions per higher decoder RNN layer (s2s): 1"},
      {"skip", "", kFlag, "false", kBoth | kModel, "Skip connections between RNN layers (s2s): not supported"},
      {"transformer-heads", "", Int(1, 4096), "8", kBoth | kModel, "Attention heads"},
      {"transformer-dim-ffn", "", Int(1, 1 << 20), "2048", kBoth | kModel, "Feed-forward inner size"},
      {"transformer-ffn-activation", "", Choice("swish|gelu|relu"), "swish", kBoth | kModel, "Feed-forward activation: swish, gelu, relu"},
      {"transformer-ffn-depth", "", Int(1, 1000), "2", kBoth | kModel, "Dense layers in each feed-forward block"},
      {"transformer-decoder-dim-ffn", "", Int(0, 1 << 20), "0", kBoth | kModel, "Decoder's feed-forward inner size; 0: --transformer-dim-ffn"},
      {"transformer-decoder-ffn-depth", "", Int(0, 1000), "0", kBoth | kModel, "Decoder's feed-forward depth; 0: --transformer-ffn-depth"},
      {"transformer-guided-alignment-layer", "", kString, "last", kBoth | kModel,
       "The decoder layer (1-based, or last) whose context attention's first head --guided-alignment guides"},
      {"transformer-tied-layers", "", Ints(1, 1000), "[]", kBoth | kModel, "Decoder layer i takes the parameters of layer N_i (one number per decoder layer)"},
      {"transformer-preprocess", "", kString, "\"\"", kBoth | kModel, "Ops before each block: d(ropout) a(dd) n(orm)"},
      {"transformer-postprocess", "", kString, "dan", kBoth | kModel, "Ops after each block"},
      {"transformer-postprocess-emb", "", kString, "d", kBoth | kModel, "Ops after the embeddings"},
      {"transformer-postprocess-top", "", kString, "\"\"", kBoth | kModel, "Ops after the last layer of each stack (n: the final norm of pre-norm transformers)"},
      {"transformer-dropout", "", Float(0, kBelowOne), "0", kTrain, "Dropout between transformer blocks"},
      {"transformer-dropout-attention", "", Float(0, kBelowOne), "0", kTrain, "Dropout on attention weights"},
      {"transformer-dropout-ffn", "", Float(0, kBelowOne), "0", kTrain, "Dropout inside the feed-forward block"},
      {"tied-embeddings", "", kFlag, "false", kBoth | kModel, "Tie target embeddings and output layer"},
      {"tied-embeddings-src", "", kFlag, "false", kBoth | kModel, "Tie source and target embeddings"},
      {"tied-embeddings-all", "", kFlag, "false", kBoth | kModel, "Tie all embeddings and the output layer"},
      {"layer-normalization", "", kFlag, "false", kBoth | kModel, "Layer normalisation in the RNN (s2s)"},
      {"dropout-rnn", "", Float(0, kBelowOne), "0", kTrain, "Dropout on RNN states (s2s)"},
      {"dropout-src", "", Float(0, kBelowOne), "0", kTrain, "Drop source words (whole words, one mask value per position, as Marian)"},
      {"dropout-trg", "", Float(0, kBelowOne), "0", kTrain, "Drop target words (whole words, one mask value per position, as Marian)"},
      {"label-smoothing", "", Float(0, kBelowOne), "0", kTrain, "Label smoothing epsilon"},
      {"cost-type", "", Choice("ce-sum|ce-mean|ce-mean-words"), "ce-sum", kTrain, "Training cost: ce-sum, ce-mean, ce-mean-words"},
      // data
      {"train-sets", "t", kStrings, "", kTrain | kNode, "Parallel training corpus (plain text or .gz)"},
      {"mini-batch-words", "", Int(0, 1e9), "0", kTrain | kScore, "Source words per mini-batch, as Marian: a batch ends with the sentence that passes them (instead of --mini-batch sentences; --mini-batch x --maxi-batch are still the sentences read ahead)"},
      {"mini-batch-fit", "", kFlag, "false", kTrain,
       "Mini-batches as large as fit --workspace at their sentences' length (overrides --mini-batch and --mini-batch-words)"},
      {"mini-batch-fit-step", "", Int(1, 1e4), "10", kTrain, "Length steps of --mini-batch-fit's statistics"},
      {"shuffle", "", Choice("data|batches|none"), "data", kTrain, "Shuffle: data, batches, none"},
      {"no-shuffle", "", kFlag, "false", kTrain, "Do not shuffle (same as --shuffle none)"},
      {"shuffle-within-maxi-batch", "", kFlag, "true", kTrain | kOurs,
       "Shuffle the mini-batches within each maxi-batch, cut from its longest sentence down, as Marian orders an epoch; =false: over the whole epoch (streamed: over the window)"},
      {"shuffle-in-ram", "", kFlag, "false", kTrain, "Hold the whole training corpus in memory and shuffle it whole (as a corpus that fits --shuffle-window always is)"},
      {"shuffle-window", "", Int(1, 1e9), "100000", kTrain | kOurs,
       "Sentence pairs in memory at once when the corpus is streamed from disk (over all ranks): chunks of the corpus in random order, mixed and batched in windows this large; a corpus of at most this many pairs is held in memory whole"},
      {"data-threads", "", Int(1, 256), "8", kTrain | kNode, "Threads that read and encode the training corpus, in the background of training"},
      {"tsv", "", kFlag, "false", kTrain, "The training corpus is one file with a source and a target per line, separated by a TAB"},
      {"tsv-fields", "", Int(0, 4), "0", kTrain | kScore, "Fields of each --tsv line: 2 (in training one more for each of --data-weighting's and --guided-alignment's fields; 0: as many as needed)"},
      {"data-weighting", "", kString, "\"\"", kTrain | kNode,
       "A file of weights, a line per training pair: each label's cross-entropy is multiplied by its weight (Marian's). "
       "With --tsv, the index (0-based) of the TSV field that holds them"},
      {"data-weighting-type", "", Choice("sentence|word"), "sentence", kTrain,
       "--data-weighting's lines: sentence, one weight a pair; word, one a target token (</s>'s may be left out: 1)"},
      {"guided-alignment", "", kString, "none", kTrain | kNode,
       "A file of word alignments, a line per training pair ('0-0 1-2': source-target token positions, 0-based, "
       "in the vocabulary's tokens): training guides one attention head towards them (Marian's). With --tsv, the "
       "index (0-based) of the TSV field that holds them; none: off"},
      {"guided-alignment-cost", "", Choice("ce"), "ce", kTrain,
       "Guided alignment's cost: ce, the cross-entropy of the attention at the aligned source positions (Marian "
       "v1.12 has dropped mse and mult too)"},
      {"guided-alignment-weight", "", Float(0, 1e6), "0.1", kTrain,
       "Guided alignment's weight: its cost and its points (as labels) count this much beside the translation's"},
      {"no-restore-corpus", "", kFlag, "false", kTrain, "On resume, start the epoch's corpus from its beginning"},
      {"max-length-crop", "", kFlag, "false", kAnyProgram, "Crop sentences longer than --max-length instead of skipping them (decoding always crops)"},
      // optimizer
      {"optimizer", "o", kString, "adam", kTrain, "Optimizer: sgd, adagrad, adam"},
      {"optimizer-params", "", Floats(-1e6, 1e6), "[]", kTrain, "adam: beta1 beta2 eps [weight decay, as Marian's]; adagrad: eps"},
      {"optimizer-delay", "", Float(1, 1e6), "1", kTrain, "Mini-batches per update (gradients summed; Marian's meaning); whole numbers >= 1"},
      {"learn-rate", "l", Float(0, 1e6), "0.0001", kTrain, "Learning rate"},
      {"lr-warmup", "", kString, "0", kTrain, "Linear warm-up over this many updates (u), labels (t) or epochs (e: the epoch's number over N)"},
      {"lr-warmup-start-rate", "", Float(0, 1e6), "0", kTrain, "The rate the warm-up starts from (it rises linearly to --learn-rate)"},
      {"lr-decay-inv-sqrt", "", kStrings, "[\"0\"]", kTrain, "Decay by sqrt(N / (progress - START + N)) after START (the second value; N if absent), in u, t or e"},
      {"lr-decay", "", Float(0, 1e6), "0", kTrain, "Multiply the learning rate by this at each event of --lr-decay-strategy (0: never), as Marian"},
      {"lr-decay-strategy", "", Choice("epoch|batches|stalled|epoch+batches|epoch+stalled"), "epoch+stalled", kTrain,
       "When --lr-decay decays (Marian's): epoch, at each epoch's start from epoch START1; batches, after update START1 "
       "and every --lr-decay-freq updates after it; stalled, each time validation has stalled a multiple of START1 times "
       "in a row; epoch+batches and epoch+stalled, at each epoch's start once the epoch is START1 or the updates START2 "
       "or the most stalls in a row START2"},
      {"lr-decay-start", "", Ints(0, 2147483647.0), "[10, 1]", kTrain, "START1 [START2] of --lr-decay-strategy (0: never)"},
      {"lr-decay-freq", "", Int(0, 1e15), "50000", kTrain, "Updates between decays of --lr-decay-strategy batches"},
      {"lr-decay-repeat-warmup", "", kFlag, "false", kTrain, "Start --lr-warmup again at each decay"},
      {"lr-decay-reset-optimizer", "", kFlag, "false", kTrain, "Reset the optimizer's statistics (Adam's moments and their bias correction) at each decay, as Marian"},
      {"lr-warmup-cycle", "", kFlag, "false", kTrain, "Start --lr-warmup again at the end of each warm-up period (u or t)"},
      {"lr-warmup-at-reload", "", kFlag, "false", kTrain, "Start --lr-warmup again after the first update of each run (a resume warms up again), as Marian"},
      {"lr-report", "", kFlag, "false", kTrain, "Add the learning rate to the display line, as Marian"},
      {"clip-norm", "", Float(0, 1e30), "1", kTrain, "Clip the gradient to this L2 norm; 0: off"},
      {"normalize-gradient", "", kFlag, "false", kTrain, "Divide the gradient by the update's target labels (with sync-SGD across ranks, all ranks' labels, as Marian); off, as in Marian: the summed cross-entropy's gradient whatever --cost-type shows"},
      {"exponential-smoothing", "", Float(0, 1), "0", kTrain, "Keep an exponential moving average of the parameters", "0.0001"},
      {"sync-sgd", "", kFlag, "false", kTrain, "Synchronous SGD across devices (and, under mpirun, across ranks by allreduce)"},
      // synchronous SGD across MPI ranks (seeds 000-003)
      {"sparse-allreduce", "", kString, "dense", kTrain | kOurs, "Allreduce across ranks: dense, ring, tree, topka, ssar-recdbl, ssar-split, dsar-split, gtopk, oktopk"},
      {"compression-density", "", Float(1e-9, 1), "1", kTrain | kOurs, "Send this fraction of each rank's gradient (top-k with residuals); 1: all"},
      {"topk-selection", "", Choice("exact|sampled|reuse"), "sampled", kTrain | kOurs, "How the top-k threshold is found: exact, sampled, reuse"},
      {"topk-reuse-every", "", Int(1, 1e9), "32", kTrain | kOurs, "reuse (and oktopk's global threshold): recompute the exact threshold every N updates"},
      {"bucket-size", "", Float(0, 1e6), "25", kTrain | kOurs, "MB of gradients per allreduce bucket at most (parameters in the order backward finishes them), started while backward goes on; 0: one allreduce after backward"},
      {"oktopk-repartition-every", "", Int(1, 1e9), "64", kTrain | kOurs, "oktopk: recompute the balanced region boundaries every N updates"},
      {"powersgd-rank", "", Int(0, 1e6), "0", kTrain | kOurs, "PowerSGD (Vogels et al. 2019): send each gradient matrix as rank-r factors with error feedback, through --sparse-allreduce's dense sum; 0: off"},
      {"powersgd-start", "", Int(0, 2e9), "100", kTrain | kOurs, "PowerSGD: dense sums for the first N updates"},
      {"adam-freeze-variance-after", "", Int(0, 2e9), "0", kTrain | kOurs, "Adam's second moment stops changing after N steps (1-bit Adam's frozen variance, Tang et al. 2021); 0: never"},
      {"adam-variance-update-scaler", "", Int(0, 1e6), "0", kTrain | kOurs, "0/1 Adam's variance schedule (Lu et al. 2023): Adam's second moment changes on kappa steps 1 apart, then kappa 2 apart, kappa 4 apart, ... until --adam-freeze-variance-after; 0: every step"},
      {"onebit-adam", "", kFlag, "false", kTrain | kOurs, "1-bit Adam (Tang et al. 2021): after --adam-freeze-variance-after N dense updates the ranks average Adam's momentum as sign bits and a scale per parameter (or block), with error feedback on workers and servers"},
      {"zero-one-adam", "", kFlag, "false", kTrain | kOurs, "0/1 Adam (Lu et al. 2023): until --adam-freeze-variance-after the ranks sum the gradient densely on the variance's steps (--adam-variance-update-scaler) and in 1 bit on the others, then average the momentum as --onebit-adam does"},
      {"onebit-block-size", "", Int(0, 2e9), "0", kTrain | kOurs, "1-bit Adam: one scale per N values of a parameter; 0: one per parameter (DeepSpeed's)"},
      {"onebit-scale", "", Choice("rms|mean-abs"), "rms", kTrain | kOurs, "1-bit Adam: each segment's scale, rms (|x|_2/sqrt(n), DeepSpeed's) or mean-abs (|x|_1/n, EF-SignSGD's least-squares scale, robust to spikes)"},
      {"onebit-update-direction", "", kFlag, "false", kTrain | kOurs, "1-bit Adam after the freeze: each momentum value sent in units of its frozen sqrt(v) (the sign and scale are the update direction m/sqrt(v)'s, not m's)"},
      // multi-node parameter server (seed 004)
      {"multi-node", "", kFlag, "false", kTrain | kOurs, "Sharded parameter server across MPI ranks (mpirun -np N)"},
      {"multi-node-overlap", "", kFlag, "false", kTrain | kOurs, "Overlap communication with computation (double buffers); off by default here, on in Marian's multi-node fork"},
      {"multi-node-max-delay", "", Int(0, 1e9), "0", kTrain | kOurs, "With overlap: at most this many compute steps between synchronisations; 0: unbounded"},
      {"multi-node-apply-summed", "", kFlag, "false", kTrain | kOurs, "With overlap: apply the locally summed gradients (SGD step) to swapped-in parameters"},
      {"multi-node-single-client", "", kFlag, "false", kTrain | kOurs, "One client of a node communicates at a time"},
      {"multi-node-local-optimizer", "", kFlag, "false", kTrain | kOurs, "Clients also update their own parameters between synchronisations (with --multi-node-overlap: the next batch is computed on them while the exchange is under way)"},
      {"ranks-in-process", "", Int(0, 1024), "0", kTrain | kOurs, "Train as N ranks that are threads of this one process, with the batches, updates and Costs of mpirun -np N (the corpus and vocabularies loaded once and shared, the cores shared by every rank's devices): words to a quality at many ranks on one machine; 0: off"},
      {"multi-node-timeout", "", Int(1, 1e6), "60", kTrain | kOurs, "Seconds a wait on a silent rank (stopped, dead, unreachable) lasts before the job stops, in every mode"},
      {"grad-dropping-rate", "", Float(0, kBelowOne), "0", kTrain | kOurs, "Drop this fraction of gradients (and deltas), keeping residuals; 0: dense"},
      {"grad-dropping-warmup", "", Int(0, 1e9), "0", kTrain | kOurs, "Steps (client exchanges; sync-SGD updates) over which the sent fraction falls exponentially from 1 to its target"},
      // what makes compressed training converge (src/comm/compression.h)
      {"grad-dropping-momentum", "", Float(0, kBelowOne), "0", kTrain | kOurs, "DGC momentum correction with factor masking for dropping and compressed allreduce; 0: off"},
      {"compression-clip-norm", "", Float(0, 1e30), "0", kTrain | kOurs, "DGC local clipping: each rank's gradient clipped to this L2 norm / sqrt(ranks) before compression; 0: off"},
      {"local-gradients", "", Choice("off|partial|sum"), "off", kTrain | kOurs, "Apply the own gradient's unsent part locally (Aji et al. 2019): off, partial, sum", "partial"},
      {"local-average-state", "", Choice("parameters|all"), "parameters", kTrain | kOurs, "What --local-average-freq averages: parameters (and moving average) or all (also the optimizer moments)"},
      {"local-average-freq", "", Int(0, 1e9), "10", kTrain | kOurs, "With --local-gradients: average the ranks' copies every N updates (parameter server: full replies every N exchanges); 0: never"},
      // local steps across ranks (the DiLoCo family, training/exchange/outer_rounds.h)
      {"local-steps", "", Int(0, 1e9), "0", kTrain | kOurs, "With --sync-sgd across ranks: each rank takes N updates on its own batches, then the ranks average their pseudo-gradients (round start minus parameters) into one outer step (DiLoCo, Douillard et al. 2023); 0: off, the gradients are summed every update"},
      {"outer-optimizer", "", Choice("nesterov|sgd"), "nesterov", kTrain | kOurs, "--local-steps' outer step: nesterov (DiLoCo's) or sgd (with momentum; --outer-learn-rate 1 --outer-momentum 0 gives the ranks' mean, model averaging)"},
      {"outer-learn-rate", "", Float(0, 1e6), "0.7", kTrain | kOurs, "--local-steps: the outer step's learning rate (DiLoCo's 0.7)"},
      {"outer-momentum", "", Float(0, kBelowOne), "0.9", kTrain | kOurs, "--local-steps: the outer step's momentum (DiLoCo's 0.9)"},
      {"outer-fragments", "", Int(1, 1e9), "1", kTrain | kOurs, "--local-steps: the parameters in this many fragments of equal size, each exchanged once a round after its own update, spread over the round (Streaming DiLoCo, Douillard et al. 2025); 1: the whole model at the end of each round (DiLoCo)"},
      {"outer-delay", "", Int(0, 1e9), "0", kTrain | kOurs, "--local-steps: a fragment's exchange runs on a thread of its own beside the next N updates and is merged after them (Streaming DiLoCo's tau, torchft's fragment_sync_delay); less than --local-steps; 0: each exchange is waited for at once"},
      {"outer-merge-alpha", "", Float(0, kBelowOne), "0.5", kTrain | kOurs, "--outer-delay > 0: a fragment's parameters after the merge are this share of the rank's own (its --outer-delay later updates kept) and the rest the outer step's result (Streaming DiLoCo's mixing factor alpha; 0: the outer step's result alone, as torchft; below 1, or the ranks would never take the outer step); not used without a delay"},
      {"local-adam-variance", "", Choice("own|mean"), "own", kTrain | kOurs, "--local-steps with --optimizer adam: own (DiLoCo's): each rank's Adam divides by the second moment of its own gradients; mean: by an estimate of the second moment of the mean of the ranks' gradients, m^2 + (v - m^2) / ranks, what dense sync-SGD's Adam would divide by (averaging steps each divided by its own, noisier v moves up to sqrt(ranks) times less)"},
      {"outer-quantize-bits", "", Int(0, 8), "0", kTrain | kOurs, "--local-steps: send the pseudo-gradients in 8 or 4 bits a value (a scale per 256 values), 2 (four levels: Lloyd-Max's for a normal distribution, a scale per 256 values), or 1 (a sign a value, the mean magnitude of each parameter's blocks of 256); error feedback on each rank and each chunk's owner; with --outer-density: 2 or 1 bits for each value kept (SparseLoCo's); 0: fp32"},
      {"outer-density", "", Float(1e-9, 1), "1", kTrain | kOurs, "--local-steps: each rank sends this fraction of its pseudo-gradient, the largest in magnitude with what it held back in earlier rounds (error feedback): whole, summed by --sparse-allreduce's sparse algorithm (dsar-split where it names a dense one); with --outer-quantize-bits 2 or 1, the fraction of every chunk of 4096 values within a parameter, each value in that many bits and a 12-bit offset, all-gathered (SparseLoCo, Sarfi et al. 2025); 1: all"},
      {"outer-error-decay", "", Float(0, 1), "1", kTrain | kOurs, "--outer-density with --outer-quantize-bits 2 or 1: what each rank held back is multiplied by this before the next round's pseudo-gradient is added (SparseLoCo's beta: the decayed accumulator stands in for the outer momentum, so pair it with --outer-optimizer sgd --outer-momentum 0); 1: kept whole"},
      // schedule
      {"after-epochs", "e", Int(0, 1e9), "0", kTrain, "Stop after this many epochs; 0: no limit"},
      {"after-batches", "", Int(0, 2e9), "0", kTrain, "Stop after this many updates; 0: no limit"},
      {"sigterm", "", Choice("save-and-exit|exit-immediately"), "save-and-exit", kTrain, "On SIGTERM: save-and-exit (finish the update, save, stop) or exit-immediately"},
      {"after", "a", kString, "0e", kTrain, "Stop after this many epochs (e), updates (u) or labels (t)"},
      {"disp-freq", "", kString, "1000u", kTrain, "Display training statistics every N updates (u), labels (t) or epochs (e)"},
      {"disp-first", "", Int(0, 2e9), "0", kTrain, "Also display the first N updates"},
      {"disp-label-counts", "", kFlag, "true", kTrain, "Show the ce-sum Cost per label with the label counts (Cost X * labels @ last update's after all)"},
      {"save-freq", "", kString, "10000u", kTrain, "Save a checkpoint every N updates (u/t/e)"},
      {"valid-freq", "", kString, "10000u", kTrain, "Validate every N updates (u/t/e)"},
      {"valid-sets", "", kStrings, "", kTrain | kNode, "Parallel validation corpus"},
      {"valid-metrics", "", Choices("cross-entropy|ce-mean-words|perplexity|bleu|bleu-detok|chrf|translation|valid-script"), "[cross-entropy]", kTrain, "cross-entropy, ce-mean-words, perplexity, bleu, bleu-detok, chrf, translation (scored by --valid-script-path), valid-script"},
      {"valid-script-path", "", kString, "\"\"", kTrain, "Command that prints a score: of the translation file (metric translation, file as its last argument) or of MODEL.dev.npz (metric valid-script)"},
      {"valid-script-args", "", kStrings, "[]", kTrain, "Arguments put between --valid-script-path and the translation file"},
      {"valid-translation-output", "", kString, "\"\"", kTrain | kNode, "Write the validation translations to this file; {E} {B} {U} {T}: epoch, batch in epoch, update, labels"},
      {"valid-log", "", kString, "\"\"", kTrain | kNode, "Also write the validation lines to this file"},
      {"quiet-translation", "", kFlag, "false", kBoth, "Do not log translations (none are logged: validation logs only scores)"},
      {"valid-mini-batch", "", Int(1, 1e7), "32", kTrain, "Sentences per validation batch"},
      {"valid-max-length", "", Int(2, 1e6), "1000", kTrain, "Longer validation sentences are cropped (tokens, </s> included)"},
      {"early-stopping", "", Int(0, 1e9), "10", kTrain, "Stop when the first metric stalled this many times; 0: never"},
      {"early-stopping-on", "", Choice("first|all|any"), "first", kTrain, "Which metrics must have stalled: first, all, any"},
      {"early-stopping-epsilon", "", Floats(0, 1e30), "[0]", kTrain,
       "A metric's new best by less than this counts as a stall too (one value per --valid-metrics, the last for the rest), as Marian"},
      {"valid-reset-stalled", "", kFlag, "false", kTrain, "A resume starts the stall counts of validation from 0"},
      {"valid-reset-all", "", kFlag, "false", kTrain, "A resume forgets the metrics' stall counts and best values (another validation set)"},
      {"keep-best", "", kFlag, "false", kTrain, "Keep the best model per metric (model.npz.best-METRIC.npz)"},
      {"overwrite", "", kFlag, "false", kTrain, "Do not keep model.iter{N}.npz checkpoints"},
      {"no-reload", "", kFlag, "false", kTrain, "Start afresh where --model exists, without reading it (its saves overwrite it), as Marian"},
      {"no-optimizer-reload", "", kFlag, "false", kTrain, "Resume from the model (its moving average, where there is one) and the progress, with new optimizer statistics, as Marian"},
      {"overwrite-checkpoint", "", kFlag, "true", kTrain, "false: each model.iter{N}.npz also keeps its full checkpoint (.optimizer.npz, .progress.yml) to resume from"},
      {"timeline", "", kString, "\"\"", kTrain | kOurs | kNode, "Write a Chrome trace of forward, backward, sync, update, send and receive per thread (ranks > 0: FILE.rankN)"},
  };
  return all;
}

const std::vector<std::string>& pathOptions() {
  static const std::vector<std::string> paths = {"models", "vocabs", "input", "output", "model", "pretrained-model",
                                                 "data-weighting", "guided-alignment",
                                                 "train-sets", "valid-sets", "valid-translation-output", "valid-log",
                                                 "valid-script-path", "log", "timeline", "tempdir"};
  return paths;
}

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

const Spec* ownSpec(const std::string& name, int modeBit) {
  const Spec* s = findSpec(name, modeBit);
  return s && (s->modes & modeBit) ? s : nullptr;
}

}  // namespace option_table
}  // namespace marian
