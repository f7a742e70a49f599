// marian and marian-decoder end to end on toy tasks a small model learns exactly: reversing
// sequences of distinct symbols (transformer and s2s) decodes exactly with beam 1 and beam 4;
// the n-best format; BLEU validation during training writes its translations; a model used with
// another vocabulary or another architecture is refused with a message naming the problem.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>

#include "e2e_helpers.h"

namespace {

using e2e::readFile;

std::string dir() {
  static std::string d = [] {
    std::string path = ::testing::TempDir() + "marian_translate_" + std::to_string(getpid());
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

const std::string kTransformer =
    "--dim-emb 32 --transformer-dim-ffn 64 --transformer-heads 2 --enc-depth 1 --dec-depth 1 --lr-warmup 100 "
    "--learn-rate 0.003 --lr-decay-inv-sqrt 1000 --after-batches 4000";

TEST(Translate, TransformerReversesExactly) {
  train("transformer", kTransformer);
  decodesExactly("transformer");
}

TEST(Translate, S2SReversesExactly) {
  train("s2s", "--type s2s --dim-emb 32 --dim-rnn 64 --after-batches 1000");
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

// A model saved by an earlier version of this project (its own names: *_ffn_W1_W, *_ffn_ln_*,
// *_Wo_pre_ln_*, an untied decoder_ff_logit_out_W of [dim, vocab]) decodes as before: its
// parameters are renamed to Marian's on load, which the log says. The earlier file is made from
// today's by numpy with the old names.
TEST(Translate, AModelWithEarlierNamesStillDecodes) {
  train("legacy", kTransformer + " --after-batches 300 --transformer-preprocess n --transformer-postprocess da "
                                 "--transformer-postprocess-emb n");
  std::string m = dir() + "/legacy";
  std::string rename =
      "/usr/bin/python3 -c \"import numpy as np, re, sys\n"
      "a = np.load(sys.argv[1]); out = {}\n"
      "for k in a.files:\n"
      "  v = a[k]; n = k\n"
      "  n = re.sub(r'_ffn_W([12])$', r'_ffn_W\\1_W', n); n = re.sub(r'_ffn_b([12])$', r'_ffn_W\\1_b', n)\n"
      "  n = re.sub(r'_ffn_ffn_ln_(scale|bias)_pre$', r'_ffn_pre_ln_\\1', n)\n"
      "  n = re.sub(r'_ffn_ffn_ln_(scale|bias)$', r'_ffn_ln_\\1', n)\n"
      "  n = re.sub(r'_Wo_ln_(scale|bias)_pre$', r'_Wo_pre_ln_\\1', n)\n"
      "  n = re.sub(r'^(encoder|decoder)_emb_ln_(scale|bias)_pre$', r'\\1_emb_ln_\\2', n)\n"
      "  if n == 'decoder_ff_logit_out_Wt': n, v = 'decoder_ff_logit_out_W', v.T.copy()\n"
      "  out[n] = v\n"
      "assert 'encoder_l1_ffn_W1_W' in out and 'decoder_ff_logit_out_W' in out and 'encoder_emb_ln_scale' in out\n"
      "np.savez(sys.argv[2], **out)\" " + m + "/model.npz " + m + "/old.npz";
  ASSERT_EQ(sh(rename), 0);
  sh("cp " + m + "/model.npz.yml " + m + "/old.npz.yml");
  std::string today = m + "/today.out", earlier = m + "/earlier.out";
  ASSERT_EQ(sh(decoder("legacy", "-b 3 --n-best", today)), 0) << readFile(today + ".log");
  std::string cmd = decoder("legacy", "-b 3 --n-best", earlier);
  cmd.replace(cmd.find("/model.npz"), 10, "/old.npz");
  ASSERT_EQ(sh(cmd), 0) << readFile(earlier + ".log");
  EXPECT_EQ(readFile(earlier), readFile(today));
  EXPECT_NE(readFile(earlier + ".log").find("parameters of an earlier version renamed to Marian's names"),
            std::string::npos) << readFile(earlier + ".log");
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
  train("embedded", kTransformer + " --after-batches 5 --beam-size 3 --max-length 60");
  std::string m = dir() + "/embedded";
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
  sh("mv " + m + "/model.npz.yml " + m + "/aside.yml");
  std::string out = m + "/out";
  EXPECT_EQ(sh(decoder("embedded", "-b 1", out)), 0) << readFile(out + ".log");
  sh("mv " + m + "/aside.yml " + m + "/model.npz.yml");
}

// marian-decoder on GPU 0 gives the CPU's n-best lists: the same translations, the same scores
// to float rounding. Skipped without a GPU.
TEST(Translate, GpuDecodesLikeTheCpu) {
  std::string probe = dir() + "/gpu-probe";
  train("gpu", kTransformer + " --after-batches 300");
  if(sh(decoder("gpu", "--cpu-threads 0 --devices 0", probe)) != 0)
    GTEST_SKIP() << "no GPU: " << readFile(probe + ".log");
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
  EXPECT_TRUE(std::regex_search(log, std::regex("\\[valid\\] Ep\\. \\d+ : Up\\. 1000 : bleu : [0-9.]+ : new best")))
      << log;
  std::istringstream out(readFile(d + "/valid/out.txt"));
  int lines = 0;
  for(std::string l; std::getline(out, l);)
    ++lines;
  EXPECT_EQ(lines, 40);
}

TEST(Translate, AnotherVocabularyOrArchitectureIsRefused) {
  train("mismatch", kTransformer + " --after-batches 50");
  std::string d = dir(), m = d + "/mismatch";
  // a vocabulary with more entries than the model was trained with
  sh("cp " + d + "/vocab.yml " + m + "/big.yml && for w in q r s t u; do echo \"$w: $(( $(wc -l < " + m +
     "/big.yml) ))\" >> " + m + "/big.yml; done");
  std::string cmd = std::string(MARIAN_BIN_DIR) + "/marian-decoder -m " + m + "/model.npz -v " + m + "/big.yml " + m +
                    "/big.yml < " + d + "/test.src > " + m + "/out 2> " + m + "/err";
  EXPECT_NE(sh(cmd), 0);
  std::string err = readFile(m + "/err");
  EXPECT_NE(err.find("vocabulary of 18 entries"), std::string::npos) << err;
  EXPECT_NE(err.find(m + "/model.npz"), std::string::npos) << err;
  // a configuration that says two decoder layers
  sh("sed -i 's/^dec-depth: 1/dec-depth: 2/' " + m + "/model.npz.yml");
  ASSERT_NE(readFile(m + "/model.npz.yml").find("dec-depth: 2"), std::string::npos);
  EXPECT_NE(sh(decoder("mismatch", "", m + "/out2")), 0);
  err = readFile(m + "/out2.log");
  EXPECT_NE(err.find("decoder_l2"), std::string::npos) << err;
}

}  // namespace
