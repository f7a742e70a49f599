// marian and marian-decoder end to end on toy tasks a small model learns exactly: reversing
// sequences of distinct symbols (transformer and s2s) decodes exactly with beam 1 and beam 4;
// the n-best format; BLEU validation during training writes its translations; a model used with
// another vocabulary or another architecture is refused with a message naming the problem.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>

#include "e2e_helpers.h"

namespace {

using e2e::readFile;

std::string dir() {
  static std::string d = [] {
    std::string path = testpaths::processPath("marian_translate_");
    std::system(("rm -rf " + path + " && mkdir -p " + path).c_str());
    std::mt19937 rng(3);
    std::vector<std::string> symbols = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p"};
    auto write = [&](const std::string& name, int n) {
      std::ofstream src(path + "/" + name + ".src"), trg(path + "/" + name + ".trg");
      for(int i = 0; i < n; ++i) {
        std::vector<std::string> s = symbols;
        std::shuffle(s.begin(), s.end(), rng);
        s.resize(3 + rng() % 4);
        for(size_t t = 0; t < s.size(); ++t)
          src << (t ? " " : "") << s[t];
        for(size_t t = s.size(); t-- > 0;)
          trg << s[t] << (t ? " " : "");
        src << "\n";
        trg << "\n";
      }
    };
    write("train", 4000);
    write("test", 40);
    return path;
  }();
  return d;
}

int sh(const std::string& cmd) { return std::system(cmd.c_str()); }

// Trains `name` (a model folder) on the reversal task.
void train(const std::string& name, const std::string& extra) {
  std::string d = dir(), m = d + "/" + name;
  sh("rm -rf " + m + " && mkdir -p " + m);
  std::string cmd = std::string(MARIAN_BIN_DIR) + "/marian --train-sets " + d + "/train.src " + d +
                    "/train.trg --vocabs " + d + "/vocab.yml " + d + "/vocab.yml --model " + m +
                    "/model.npz --mini-batch 32 --learn-rate 0.005 --seed 3 --disp-freq 500 --overwrite " + extra +
                    " > " + m + "/train.log 2>&1";
  ASSERT_EQ(sh(cmd), 0) << readFile(m + "/train.log");
}

std::string decoder(const std::string& name, const std::string& extra, const std::string& out) {
  std::string d = dir(), m = d + "/" + name;
  return std::string(MARIAN_BIN_DIR) + "/marian-decoder -m " + m + "/model.npz -v " + d + "/vocab.yml " + d +
         "/vocab.yml " + extra + " < " + d + "/test.src > " + out + " 2> " + out + ".log";
}

void decodesExactly(const std::string& name) {
  std::string d = dir();
  for(std::string beam : {"1", "4"}) {
    SCOPED_TRACE(name + " beam " + beam);
    std::string out = d + "/" + name + "/test.beam" + beam;
    ASSERT_EQ(sh(decoder(name, "-b " + beam + " --normalize 0.6", out)), 0) << readFile(out + ".log");
    EXPECT_EQ(readFile(out), readFile(d + "/test.trg")) << readFile(out + ".log");
  }
}

const std::string kArchitecture = "--dim-emb 32 --transformer-dim-ffn 64 --transformer-heads 2 --enc-depth 1 ";
const std::string kTransformer =
    kArchitecture + "--dec-depth 1 --lr-warmup 100 --learn-rate 0.003 --lr-decay-inv-sqrt 1000 --after-batches 4000";

TEST(Translate, TransformerReversesExactly) {
  train("transformer", kTransformer);
  decodesExactly("transformer");
}

TEST(Translate, S2SReversesExactly) {
  // 1000 updates left 2 of 40 sentences with a doubled word on an AMD EPYC (Zen 3) while an
  // Intel Xeon's rounding decoded all; 1500 decode all on both
  train("s2s", "--type s2s --dim-emb 32 --dim-rnn 64 --after-batches 1500");
  decodesExactly("s2s");
}

TEST(Translate, NBestListFormat) {
  train("nbest", kTransformer + " --after-batches 300");
  std::string out = dir() + "/nbest/out";
  ASSERT_EQ(sh(decoder("nbest", "-b 3 --n-best", out)), 0) << readFile(out + ".log");
  std::istringstream lines(readFile(out));
  std::regex entry("^(\\d+) \\|\\|\\| [a-p ]* \\|\\|\\| F0= -?[0-9.e-]+ \\|\\|\\| -?[0-9.e-]+$");
  std::map<int, int> perSentence;
  for(std::string l; std::getline(lines, l);) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(l, m, entry)) << l;
    ++perSentence[std::stoi(m[1])];
  }
  EXPECT_EQ(perSentence.size(), 40u);
  for(auto [sentence, n] : perSentence)
    EXPECT_LE(n, 3) << sentence;
  EXPECT_NE(readFile(out + ".log").find("sentences/s"), std::string::npos);
}

// --output-sampling with beam 1: the same --seed gives the same samples on one thread and on two;
// another seed other samples; top-1 sampling is greedy decoding.
TEST(Translate, OutputSamplingDrawsReproducibleSamples) {
  train("nbest", kTransformer + " --after-batches 300");
  std::string out = dir() + "/nbest/sampled";
  auto sampled = [&](const std::string& args) {
    EXPECT_EQ(sh(decoder("nbest", "-b 1 --mini-batch 8 " + args, out)), 0) << readFile(out + ".log");
    return readFile(out);
  };
  std::string seven = sampled("--output-sampling --seed 7");
  EXPECT_NE(readFile(out + ".log").find("Output sampling from the full distribution with temperature 1"),
            std::string::npos) << readFile(out + ".log");
  EXPECT_EQ(sampled("--output-sampling full 1 --seed 7 --cpu-threads 2"), seven);
  std::string eight = sampled("--output-sampling --seed 8");
  EXPECT_NE(eight, seven);
  std::string greedy = sampled("");
  EXPECT_NE(seven, greedy);  // the model after 300 updates is not that sure
  EXPECT_EQ(sampled("--output-sampling topk 1 --seed 9"), greedy);
  EXPECT_NE(sh(decoder("nbest", "--output-sampling beam", out)), 0);
  EXPECT_NE(readFile(out + ".log").find("Unknown --output-sampling method 'beam'"), std::string::npos);
}

// The s2s computes Marian v1.12's function: the F0 scores of marian-decoder's n-best lists equal
// the log-probabilities that an independent numpy implementation of Marian's s2s (written from
// marian-dev's rnn/cells.h GRU and gruOps with the "final" flag of decoder_cell2, rnn/attention.h
// GlobalAttention, models/s2s.h EncoderS2S/DecoderS2S, layers/generic.h mlp::Dense, layers/output.cpp
// mlp::Output and layerNorm's eps 1e-9; time-major, one sentence at a time) gives the same
// hypotheses, for a one-layer untied model and a two-layer one with layer normalisation and all
// embeddings tied. The decoder batches sentences of different lengths, so padding is covered.
TEST(Translate, S2SComputesMariansFunction) {
  std::string d = dir();
  std::ofstream(d + "/marian_s2s.py") << R"py(import sys, re, numpy as np
model, vocab, src, nbest = sys.argv[1:5]
a = np.load(model)
P = {k: a[k].astype(np.float64) for k in a.files if not k.startswith('special:')}
yml = bytes(a['special:model.yml'].tobytes()).decode(errors='ignore')
def opt(k):
    m = re.search(r'^%s: (.*)$' % k, yml, re.M)
    return m.group(1).strip() if m else None
LN = opt('layer-normalization') == 'true'
depth = int(opt('enc-depth'))
tied = opt('tied-embeddings') == 'true' or opt('tied-embeddings-all') == 'true'
tsrc = opt('tied-embeddings-src') == 'true' or opt('tied-embeddings-all') == 'true'
voc = {}
for l in open(vocab):
    w, i = l.rsplit(':', 1)
    voc[w.strip().strip('"')] = int(i)
def ln(x, g, b=None):
    m = x.mean(-1, keepdims=True)
    y = g * (x - m) / np.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + 1e-9)
    return y if b is None else y + b
sig = lambda x: 1 / (1 + np.exp(-x))
def gru(p, x, h, final):
    W = np.concatenate([P[p + '_W'], P[p + '_Wx']], -1)
    U = np.concatenate([P[p + '_U'], P[p + '_Ux']], -1)
    b = np.concatenate([P[p + '_b'], P[p + '_bx']], -1)[0]
    xW, sU, H = x @ W, h @ U, h.shape[-1]
    if LN:
        xW, sU = ln(xW, P[p + '_gamma1'][0]), ln(sU, P[p + '_gamma2'][0])
    r = sig(xW[:H] + sU[:H] + b[:H])
    z = sig(xW[H:2*H] + sU[H:2*H] + b[H:2*H])
    hh = np.tanh(xW[2*H:] + (sU[2*H:] + b[2*H:]) * r) if final else np.tanh(xW[2*H:] + sU[2*H:] * r + b[2*H:])
    return (1 - z) * hh + z * h
def rnn(p, X, reverse):
    h, out = np.zeros(P[p + '_U'].shape[0]), [None] * len(X)
    for t in (range(len(X) - 1, -1, -1) if reverse else range(len(X))):
        h = gru(p, X[t], h, False)
        out[t] = h
    return np.array(out)
def dense(p, x, num=''):
    if LN:
        return ln(x @ P[p + '_W' + num], P[p + '_gamma' + num][0], P[p + '_b' + num][0])
    return x @ P[p + '_W' + num] + P[p + '_b' + num][0]
Esrc, Etrg = P['Wemb' if tsrc else 'encoder_Wemb'], P['Wemb' if tsrc else 'decoder_Wemb']
Wout = Etrg if tied else P['decoder_ff_logit_l2_Wt']
def score(srcIds, trgIds):
    X = Esrc[srcIds]
    F, R = rnn('encoder_bi', X, False), rnn('encoder_bi_r', X, True)
    for l in range(2, depth + 1):
        F, R = rnn('encoder_bi_l%d_cell1' % l, F, False), rnn('encoder_bi_r_l%d_cell1' % l, R, True)
    C = np.concatenate([F, R], -1)
    s = np.tanh(dense('decoder_ff_state', C.mean(0)))
    MC = C @ P['decoder_Wc_att']
    MC = ln(MC, P['decoder_att_gamma1'][0], P['decoder_b_att'][0]) if LN else MC + P['decoder_b_att'][0]
    total, y = 0.0, np.zeros(Etrg.shape[1])
    for w in trgIds:
        h1 = gru('decoder_cell1', y, s, False)
        q = h1 @ P['decoder_W_comb_att']
        if LN:
            q = ln(q, P['decoder_att_gamma2'][0])
        e = np.tanh(MC + q) @ P['decoder_U_att'][:, 0]
        al = np.exp(e - e.max())
        c = (al / al.sum()) @ C
        s = gru('decoder_cell2', c, h1, True)
        o = np.tanh(dense('decoder_ff_logit_l1', y, '0') + dense('decoder_ff_logit_l1', s, '1') +
                    dense('decoder_ff_logit_l1', c, '2'))
        logits = o @ Wout.T + P['decoder_ff_logit_l2_b'][0]
        m = logits.max()
        total += logits[w] - m - np.log(np.exp(logits - m).sum())
        y = Etrg[w]
    return total
srcs = [l.split() for l in open(src)]
worst, n = 0.0, 0
for l in open(nbest):
    i, hyp, f0, _ = [x.strip() for x in l.split('|||')]
    ref = score([voc[w] for w in srcs[int(i)]] + [0], [voc[w] for w in hyp.split()] + [0])
    worst = max(worst, abs(ref - float(f0.split('=')[1])) / (1 + abs(ref)))
    n += 1
print(n, worst)
sys.exit(0 if n >= 40 and worst < 1e-4 else 1)
)py";
  for(std::string options : {"--enc-depth 1", "--enc-depth 2 --layer-normalization --tied-embeddings-all"}) {
    SCOPED_TRACE(options);
    train("function", "--type s2s --dim-emb 16 --dim-rnn 24 --after-batches 200 " + options);
    std::string out = d + "/function/nbest";
    ASSERT_EQ(sh(decoder("function", "-b 3 --n-best --mini-batch 8", out)), 0) << readFile(out + ".log");
    std::string cmd = "/usr/bin/python3 " + d + "/marian_s2s.py " + d + "/function/model.npz " + d + "/vocab.yml " +
                      d + "/test.src " + out + " > " + out + ".check 2>&1";
    EXPECT_EQ(sh(cmd), 0) << readFile(out + ".check");
  }
}

// Marian's decoder defaults (one sentence per batch, no sorting) and sorted batches of several
// sentences give the same translations, in input order.
TEST(Translate, BatchingAndSortingKeepTranslationsAndOrder) {
  train("batching", kTransformer + " --after-batches 300");
  std::string one = dir() + "/batching/one", sorted = dir() + "/batching/sorted";
  ASSERT_EQ(sh(decoder("batching", "-b 3", one)), 0) << readFile(one + ".log");
  ASSERT_EQ(sh(decoder("batching", "-b 3 --mini-batch 8 --maxi-batch 3 --maxi-batch-sort src", sorted)), 0)
      << readFile(sorted + ".log");
  EXPECT_EQ(readFile(one), readFile(sorted));
  EXPECT_NE(sh(decoder("batching", "--maxi-batch-sort trg", sorted)), 0);  // no target to sort by
}

// model.npz embeds special:model.yml as Marian does (models/encoder_decoder.cpp,
// EncoderDecoder::saveModelParameters and Config::AddYamlToNpz): int8 bytes ending in a NUL, the
// model keys only (Marian applies each over its decoder's options), dim-vocabs the sizes used;
// the decoder reads it in memory when no MODEL.yml lies beside the model.
TEST(Translate, TheEmbeddedConfigIsMarians) {
  train("embedded", kTransformer + " --after-batches 5 --beam-size 3 --max-length 60 --normalize 1 --valid-mini-batch 1");
  std::string m = dir() + "/embedded";
  // MODEL.decoder.yml, as Marian's: the search validation translates with, in its batches
  std::string decoderYml = readFile(m + "/model.npz.decoder.yml");
  for(const char* line : {"beam-size: 3", "normalize: 1", "word-penalty: 0", "mini-batch: 1", "maxi-batch: 1",
                          "maxi-batch-sort: none"})
    EXPECT_NE(decoderYml.find(std::string("\n") + line + "\n"), std::string::npos) << line << " in\n" << decoderYml;
  std::string check =
      "/usr/bin/python3 -c \"import numpy as np, sys\n"
      "y = np.load(sys.argv[1])['special:model.yml']\n"
      "assert y.dtype == np.int8, y.dtype\n"
      "b = y.tobytes(); assert b.endswith(b'\\\\0'), b[-5:]\n"
      "keys = [l.split(':')[0] for l in b[:-1].decode().splitlines()]\n"
      "assert 'beam-size' not in keys and 'max-length' not in keys and 'learn-rate' not in keys, keys\n"
      "assert 'type' in keys and 'transformer-heads' in keys and 'version' in keys, keys\n"
      "assert 'dim-vocabs: [18, 18]' in b.decode(), b\" " + m + "/model.npz";
  EXPECT_EQ(sh(check), 0);
  // model.npz.yml too records the sizes trained with, not the option's 0 (all words)
  EXPECT_NE(readFile(m + "/model.npz.yml").find("dim-vocabs: [18, 18]"), std::string::npos);
  sh("mv " + m + "/model.npz.yml " + m + "/aside.yml");
  std::string out = m + "/out";
  EXPECT_EQ(sh(decoder("embedded", "-b 1", out)), 0) << readFile(out + ".log");
  sh("mv " + m + "/aside.yml " + m + "/model.npz.yml");
}

// As Marian, every model file has its NAME.decoder.yml beside it (--keep-best's too: marian-decoder
// -c model.npz.best-cross-entropy.npz.decoder.yml); with --relative-paths it names the model and
// the vocabularies from the model's folder, so the folder decodes from anywhere once moved.
TEST(Translate, EveryModelFileHasItsDecoderConfig) {
  std::string d = dir(), m = d + "/decoder-yml", moved = d + "/decoder-yml-moved";
  train("decoder-yml", kTransformer + " --after-batches 4 --valid-freq 2 --keep-best --relative-paths --valid-sets " +
                           d + "/test.src " + d + "/test.trg");
  std::string best = readFile(m + "/model.npz.best-cross-entropy.npz.decoder.yml");
  EXPECT_NE(best.find("relative-paths: true\nmodels:\n  - model.npz.best-cross-entropy.npz\nvocabs:\n  - "
                      "../vocab.yml\n"),
            std::string::npos)
      << best;
  EXPECT_NE(readFile(m + "/model.npz.decoder.yml").find("\n  - model.npz\n"), std::string::npos);
  sh("rm -rf " + moved + " && mv " + m + " " + moved);
  std::string out = moved + "/best.out";
  ASSERT_EQ(sh("cd / && " + std::string(MARIAN_BIN_DIR) + "/marian-decoder -c " + moved +
               "/model.npz.best-cross-entropy.npz.decoder.yml < " + d + "/test.src > " + out + " 2> " + out + ".log"),
            0)
      << readFile(out + ".log");
  std::string translations = readFile(out);
  EXPECT_EQ(std::count(translations.begin(), translations.end(), '\n'), 40) << readFile(out + ".log");
}

// marian-decoder on GPU 0 gives the CPU's n-best lists: the same translations, the same scores
// to float rounding. Skipped without a GPU.
TEST(Translate, GpuDecodesLikeTheCpu) {
  std::string probe = dir() + "/gpu-probe";
  train("gpu", kTransformer + " --after-batches 300");
  if(sh(decoder("gpu", "--cpu-threads 0 --devices 0", probe)) != 0) {
    std::string log = readFile(probe + ".log");
    if(e2e::noGpuHere(log))
      GTEST_SKIP() << "no GPU: " << log;
    FAIL() << "decoding on GPU 0 failed:\n" << log;
  }
  std::string cpu = dir() + "/gpu/cpu.nbest", gpu = dir() + "/gpu/gpu.nbest";
  ASSERT_EQ(sh(decoder("gpu", "-b 3 --n-best", cpu)), 0) << readFile(cpu + ".log");
  ASSERT_EQ(sh(decoder("gpu", "-b 3 --n-best --cpu-threads 0 --devices 0", gpu)), 0) << readFile(gpu + ".log");
  std::istringstream a(readFile(cpu)), b(readFile(gpu));
  std::regex entry("^(\\d+) \\|\\|\\| ([a-p ]*) \\|\\|\\| F0= (-?[0-9.e-]+) \\|\\|\\| .*$");
  size_t lines = 0;
  for(std::string la, lb; std::getline(a, la) && std::getline(b, lb); ++lines) {
    std::smatch ma, mb;
    ASSERT_TRUE(std::regex_match(la, ma, entry)) << la;
    ASSERT_TRUE(std::regex_match(lb, mb, entry)) << lb;
    EXPECT_EQ(ma[2], mb[2]) << "sentence " << ma[1];
    EXPECT_NEAR(std::stod(ma[3]), std::stod(mb[3]), 1e-3 * (1 + std::fabs(std::stod(ma[3]))));
  }
  EXPECT_GE(lines, 40u);
}

TEST(Translate, BleuValidationWritesTranslations) {
  std::string d = dir();
  train("valid", kTransformer + " --after-batches 1000 --valid-freq 500 --valid-sets " + d + "/test.src " + d +
                     "/test.trg --valid-metrics bleu cross-entropy --beam-size 2 --valid-translation-output " + d +
                     "/valid/out.txt");
  std::string log = readFile(d + "/valid/train.log");
  EXPECT_TRUE(std::regex_search(log, std::regex("\\[valid\\] BLEU = [0-9.]+ [0-9.]+/[0-9.]+/[0-9.]+/[0-9.]+ \\(BP = ")))
      << log;
  EXPECT_TRUE(std::regex_search(  // (new best or stalled: BLEU near 100 moves either way with the batch order)
      log, std::regex("\\[valid\\] Ep\\. \\d+ : Up\\. 1000 : bleu : [0-9.]+ : (new best|stalled 1 times)")))
      << log;
  std::istringstream out(readFile(d + "/valid/out.txt"));
  int lines = 0;
  for(std::string l; std::getline(out, l);)
    ++lines;
  EXPECT_EQ(lines, 40);
}

// As Marian's, an output named .gz is written gzip-compressed: the decoder's -o and validation's
// --valid-translation-output (gunzip gives what the plain file holds).
TEST(Translate, OutputsNamedGzAreGzipped) {
  std::string d = dir();
  train("gz", kTransformer + " --after-batches 20 --valid-freq 20 --valid-sets " + d + "/test.src " + d +
                  "/test.trg --valid-metrics bleu --beam-size 2 --max-length-factor-per-sentence "
                  "--valid-translation-output " + d + "/gz/valid.{U}.gz");
  std::string m = d + "/gz";
  // (each sentence's own length cap: validation's batches are not the decoder's)
  const std::string cap = "-b 2 --max-length-factor-per-sentence";
  ASSERT_EQ(sh(decoder("gz", cap, m + "/plain.out")), 0) << readFile(m + "/plain.out.log");
  ASSERT_EQ(sh(decoder("gz", cap + " -o " + m + "/out.gz", m + "/gz.out")), 0) << readFile(m + "/gz.out.log");
  ASSERT_EQ(sh("gunzip -c " + m + "/out.gz > " + m + "/out.txt && gunzip -c " + m + "/valid.20.gz > " + m +
               "/valid.txt"),
            0);
  EXPECT_EQ(readFile(m + "/out.txt"), readFile(m + "/plain.out"));
  EXPECT_EQ(readFile(m + "/valid.txt"), readFile(m + "/plain.out"));  // beam 2 both
}

TEST(Translate, AnotherVocabularyOrArchitectureIsRefused) {
  train("mismatch", kTransformer + " --after-batches 50");
  std::string d = dir(), m = d + "/mismatch";
  auto decodeWith = [&](const std::string& vocab, const std::string& out) {
    return sh(std::string(MARIAN_BIN_DIR) + "/marian-decoder -m " + m + "/model.npz -v " + vocab + " " + vocab + " < " +
              d + "/test.src > " + out + " 2> " + out + ".err");
  };
  // a word vocabulary with fewer entries than the model was trained with: as Marian, widened to
  // the model's size (a Marian model trained with --dim-vocabs above its vocabulary's), said
  sh("head -n 15 " + d + "/vocab.yml > " + m + "/small.yml");
  EXPECT_EQ(decodeWith(m + "/small.yml", m + "/out"), 0) << readFile(m + "/out.err");
  std::string err = readFile(m + "/out.err");
  EXPECT_NE(err.find("The vocabulary '" + m + "/small.yml' has 15 entries, --dim-vocabs (or the model's dim-vocabs) 18"),
            std::string::npos)
      << err;
  // one with more: as in Marian, its first entries, as many as model.npz.yml's dim-vocabs records
  sh("cp " + d + "/vocab.yml " + m + "/big.yml && for w in q r s t u; do echo \"$w: $(( $(wc -l < " + m +
     "/big.yml) ))\" >> " + m + "/big.yml; done");
  ASSERT_EQ(decodeWith(m + "/big.yml", m + "/big.out"), 0) << readFile(m + "/big.out.err");
  ASSERT_EQ(decodeWith(d + "/vocab.yml", m + "/same.out"), 0) << readFile(m + "/same.out.err");
  EXPECT_EQ(readFile(m + "/big.out"), readFile(m + "/same.out"));
  // a configuration that says two decoder layers
  std::string twoLayers = "--ignore-model-config --type transformer " + kArchitecture + "--dec-depth 2 --dim-vocabs 18 18";
  EXPECT_NE(sh(decoder("mismatch", twoLayers, m + "/out2")), 0);
  err = readFile(m + "/out2.log");
  EXPECT_NE(err.find("decoder_l2"), std::string::npos) << err;
  // a MODEL.yml beside the model that says so (another run's, say): the model's own configuration
  // decides, as in Marian
  sh("sed -i 's/^dec-depth: 1/dec-depth: 2/' " + m + "/model.npz.yml");
  ASSERT_NE(readFile(m + "/model.npz.yml").find("dec-depth: 2"), std::string::npos);
  ASSERT_EQ(sh(decoder("mismatch", "", m + "/stale.out")), 0) << readFile(m + "/stale.out.log");
  EXPECT_EQ(readFile(m + "/stale.out"), readFile(m + "/same.out"));
}

// Translations that cannot be written (a full disk) are an error, not lost with exit code 0.
TEST(Translate, AnOutputThatCannotBeWrittenIsAnError) {
  train("full", kTransformer + " --after-batches 5");
  std::string m = dir() + "/full";
  EXPECT_NE(sh(decoder("full", "-o /dev/full", m + "/out")), 0);
  std::string err = readFile(m + "/out.log");
  EXPECT_NE(err.find("Writing the translations to /dev/full failed"), std::string::npos) << err;
  std::string d = dir();
  EXPECT_NE(sh(std::string(MARIAN_BIN_DIR) + "/marian-decoder -m " + m + "/model.npz -v " + d + "/vocab.yml " + d +
               "/vocab.yml < " + d + "/test.src > /dev/full 2> " + m + "/stdout.log"),
            0);
  err = readFile(m + "/stdout.log");
  EXPECT_NE(err.find("Writing the translations to the standard output failed"), std::string::npos) << err;
}

// The decoder writes each part of its input before it reads the rest: the first line's
// translation comes out while the input stays open, on one thread and on more (the feed sends the rest only once it is
// there; reading all first would wait for ever, ended by the timeout), and the whole is what
// one pass gives. An output that cannot be written is said before the model is loaded.
TEST(Translate, EachPartIsWrittenBeforeTheRestIsRead) {
  train("stream", kTransformer + " --after-batches 5");
  std::string d = dir(), m = d + "/stream";
  EXPECT_NE(sh(decoder("stream", "-o " + m + "/no/such/folder/out", m + "/bad")), 0);
  std::string err = readFile(m + "/bad.log");
  EXPECT_NE(err.find("Cannot write " + m + "/no/such/folder/out"), std::string::npos) << err;
  EXPECT_EQ(err.find("[translate] Loaded"), std::string::npos) << err;
  ASSERT_EQ(sh(decoder("stream", "", m + "/whole.out")), 0) << readFile(m + "/whole.out.log");
  // on more threads than lines waiting too: a part is translated when the input has no more
  for(std::string threads : {"1", "3"}) {
    SCOPED_TRACE(threads + " thread(s)");
    std::string streamed = m + "/streamed.out";
    std::remove(streamed.c_str());
    std::ofstream(m + "/feed.sh") << "head -n 1 " << d << "/test.src\nwhile [ ! -s " << streamed
                                  << " ]; do sleep 0.1; done\ntail -n +2 " << d << "/test.src\n";
    std::ofstream(m + "/pipeline.sh") << "sh " << m << "/feed.sh | " << MARIAN_BIN_DIR << "/marian-decoder -m " << m
                                      << "/model.npz -v " << d << "/vocab.yml " << d << "/vocab.yml --cpu-threads "
                                      << threads << " > " << streamed << " 2> " << streamed << ".log\n";
    ASSERT_EQ(sh("timeout 120 sh " + m + "/pipeline.sh"), 0) << readFile(streamed + ".log");
    EXPECT_EQ(readFile(streamed), readFile(m + "/whole.out"));
  }
}

}  // namespace
