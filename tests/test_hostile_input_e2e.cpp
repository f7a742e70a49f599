// Bad inputs a new user gives marian and marian-decoder end to end (issue 19): each is an error
// that names the option or file, and nothing saved is changed or left half-made.
#include <filesystem>

#include "e2e_helpers.h"

namespace {

using e2e::readFile;
using e2e::RunResult;

int sh(const std::string& cmd) { return std::system(cmd.c_str()); }
bool exists(const std::string& path) { return std::filesystem::exists(path); }
std::string folder(const std::string& name) { return e2e::corpusDir() + "/" + name; }

TEST(HostileInput, VocabularySizesTooSmallAreRefused) {
  RunResult r = e2e::run("dim1", "--dim-vocabs 1 1 --after-batches 1");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.log.find("--dim-vocabs 1: a vocabulary needs </s>, <unk> and at least one word"), std::string::npos)
      << r.log;
}

TEST(HostileInput, AModelLargerThanMemoryIsNamedBeforeAllocating) {
  std::string fresh = folder("huge") + "/new/sub";  // folders this failed run made go again
  RunResult r = e2e::run("huge", "--dim-emb 65536 --transformer-dim-ffn 1048576 --enc-depth 6 --dec-depth 6 "
                                 "--transformer-heads 1 --after-batches 1 --model " + fresh + "/model.npz");
  EXPECT_NE(r.status, 0);
  EXPECT_FALSE(exists(folder("huge") + "/new"));
  EXPECT_NE(r.log.find("GB for their values and gradients on one device, more than this machine's"),
            std::string::npos) << r.log;
}

TEST(HostileInput, DimVocabsCutsOrWidensAnExistingWordVocabulary) {
  // full vocabularies (more than 50 entries) first; then Marian reads only their first 50
  std::string m = folder("dim50-vocabs");
  sh("rm -rf " + m + " && mkdir -p " + m);
  RunResult full = e2e::run("dim50", "--vocabs " + m + "/s.yml " + m + "/t.yml --after-batches 1");
  ASSERT_EQ(full.status, 0) << full.log;
  RunResult r = e2e::run("dim50", "--vocabs " + m + "/s.yml " + m + "/t.yml --dim-vocabs 50 50 --after-batches 2");
  ASSERT_EQ(r.status, 0) << r.log;
  EXPECT_NE(r.log.find("Using the first 50 entries of"), std::string::npos) << r.log;
  std::string shape = "/usr/bin/python3 -c \"import numpy as np, sys; print(np.load(sys.argv[1])['encoder_Wemb'].shape[0])\" " +
                      folder("dim50") + "/model.npz > " + folder("dim50") + "/rows.txt";
  ASSERT_EQ(sh(shape), 0);
  EXPECT_EQ(readFile(folder("dim50") + "/rows.txt"), "50\n");
  // more than the files have: as Marian, the model has that many rows, and the decoder reads it
  r = e2e::run("dim50", "--vocabs " + m + "/s.yml " + m + "/t.yml --dim-vocabs 5000 5000 --after-batches 2");
  ASSERT_EQ(r.status, 0) << r.log;
  ASSERT_EQ(sh(shape), 0);
  EXPECT_EQ(readFile(folder("dim50") + "/rows.txt"), "5000\n");
  std::string decode = std::string(MARIAN_BIN_DIR) + "/marian-decoder -m " + folder("dim50") + "/model.npz -v " + m +
                       "/s.yml " + m + "/t.yml -i " + e2e::corpusDir() + "/valid.src > " + m + "/out 2> " + m + "/out.log";
  EXPECT_EQ(sh(decode), 0) << readFile(m + "/out.log");
}

TEST(HostileInput, EmptyOrMismatchedCorporaLeaveNoVocabularyBehind) {
  std::string m = folder("emptycorpus");
  sh("rm -rf " + m + " && mkdir -p " + m + " && : > " + m + "/e.src && : > " + m + "/e.trg");
  std::string cmd = std::string(MARIAN_BIN_DIR) + "/marian --train-sets " + m + "/e.src " + m + "/e.trg -v " + m +
                    "/v.yml " + m + "/v.yml -m " + m + "/model.npz > " + m + "/log.txt 2>&1";
  EXPECT_NE(sh(cmd), 0);
  std::string log = readFile(m + "/log.txt");
  EXPECT_NE(log.find("Cannot create vocabulary '" + m + "/v.yml': the training files"), std::string::npos) << log;
  EXPECT_FALSE(exists(m + "/v.yml"));

  // mismatched line counts: the vocabularies made on the way are removed with the error
  std::string d = e2e::corpusDir();
  sh("head -n 5 " + d + "/train.trg > " + m + "/short.trg");
  cmd = std::string(MARIAN_BIN_DIR) + "/marian --train-sets " + d + "/train.src " + m + "/short.trg -v " + m +
        "/s.yml " + m + "/t.yml -m " + m + "/model.npz > " + m + "/log.txt 2>&1";
  EXPECT_NE(sh(cmd), 0);
  log = readFile(m + "/log.txt");
  EXPECT_NE(log.find("short.trg"), std::string::npos) << log;
  EXPECT_NE(log.find("Removed the vocabulary"), std::string::npos) << log;
  EXPECT_FALSE(exists(m + "/s.yml"));
  EXPECT_FALSE(exists(m + "/t.yml"));
  EXPECT_FALSE(exists(m + "/model.npz"));

  // a check after the corpus loaded (heads that do not divide --dim-emb): the same; the
  // vocabularies of a run that saved stay with its checkpoint
  std::string later = std::string(MARIAN_BIN_DIR) + "/marian --train-sets " + d + "/train.src " + d + "/train.trg -v " +
                      m + "/s.yml " + m + "/t.yml -m " + m + "/model.npz --dim-emb 32 --transformer-dim-ffn 64 "
                      "--mini-batch 16 --after-batches 2 > " + m + "/log.txt 2>&1";
  EXPECT_NE(sh(later + " --transformer-heads 3"), 0);
  log = readFile(m + "/log.txt");
  EXPECT_NE(log.find("Removed the vocabulary '" + m + "/s.yml'"), std::string::npos) << log;
  EXPECT_FALSE(exists(m + "/s.yml"));
  EXPECT_FALSE(exists(m + "/t.yml"));
  EXPECT_NE(sh("MARIAN_FAULT=THROW@update-3 " + later + " --transformer-heads 2 --after-batches 4 --save-freq 1"), 0);
  log = readFile(m + "/log.txt");
  EXPECT_NE(log.find("Saved model"), std::string::npos) << log;
  EXPECT_NE(log.find("injected fault at update-3"), std::string::npos) << log;
  EXPECT_TRUE(exists(m + "/s.yml"));
  EXPECT_TRUE(exists(m + "/t.yml"));
}

TEST(HostileInput, AModelWithoutItsCheckpointIsNotOverwritten) {
  RunResult first = e2e::run("nockpt", "--after-batches 2");
  ASSERT_EQ(first.status, 0) << first.log;
  std::string m = folder("nockpt");
  std::string before = readFile(m + "/model.npz");
  sh("rm " + m + "/model.npz.optimizer.npz " + m + "/model.npz.progress.yml");
  RunResult again = e2e::run("nockpt", "--after-batches 4", false);
  EXPECT_NE(again.status, 0);
  EXPECT_NE(again.log.find("The model '" + m + "/model.npz' exists but its checkpoint"), std::string::npos)
      << again.log;
  EXPECT_EQ(readFile(m + "/model.npz"), before);
}

// Another activation has the parameters of the same shapes: a resume that gives it (here by
// leaving out the option the model was trained with) is refused and names it, not trained on
// as another function of the same parameters.
TEST(HostileInput, AResumeWithAnotherArchitectureIsRefusedNamingTheOption) {
  RunResult first = e2e::run("rearchitected", "--after-batches 5 --transformer-ffn-activation relu", true);
  ASSERT_EQ(first.status, 0) << first.log;
  RunResult second = e2e::run("rearchitected", "--after-batches 10", false);
  EXPECT_NE(second.status, 0) << second.log;
  EXPECT_NE(second.log.find("was trained with another architecture: --transformer-ffn-activation relu (this run: "
                            "swish). Resume with the options it was trained with"),
            std::string::npos)
      << second.log;
  RunResult same = e2e::run("rearchitected", "--after-batches 10 --transformer-ffn-activation relu", false);
  ASSERT_EQ(same.status, 0) << same.log;
  EXPECT_NE(same.log.find("Resuming from"), std::string::npos) << same.log;
}

TEST(HostileInput, AModelPathThatIsAFolderIsNamed) {
  std::string m = folder("modeldir");
  sh("rm -rf " + m + " && mkdir -p " + m + "/model.npz");
  RunResult r = e2e::run("modeldir", "--after-batches 1 --model " + m + "/model.npz", false);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.log.find("--model '" + m + "/model.npz' is a directory"), std::string::npos) << r.log;
}

TEST(HostileInput, RestartingAFinishedRunChangesNothing) {
  for(std::string stop : {"--after-batches 3", "--after-epochs 1"}) {
    SCOPED_TRACE(stop);
    RunResult first = e2e::run("finished", stop);
    ASSERT_EQ(first.status, 0) << first.log;
    std::string m = folder("finished");
    std::string model = readFile(m + "/model.npz"), progress = readFile(m + "/model.npz.progress.yml");
    RunResult again = e2e::run("finished", stop, false);
    ASSERT_EQ(again.status, 0) << again.log;
    EXPECT_NE(again.log.find("Training had already finished"), std::string::npos) << again.log;
    EXPECT_EQ(again.log.find("Ep. "), std::string::npos) << again.log;  // no update
    EXPECT_EQ(readFile(m + "/model.npz"), model);
    EXPECT_EQ(readFile(m + "/model.npz.progress.yml"), progress);
  }
}

TEST(HostileInput, AnEpochTooSmallForEveryRankIsAnError) {
  // 2,000 pairs in one mini-batch: one batch, two ranks (this looped printing "Seen 0 samples")
  // with local steps, streamed (windows of 50 pairs a rank, 40 batches an update): every rank
  // idles to the round's end, where the epoch ends having trained nothing
  for(std::string mode : {"--sync-sgd", "--multi-node", "--sync-sgd --local-steps 2 --shuffle-window 100 --optimizer-delay 40"}) {
    SCOPED_TRACE(mode);
    RunResult r = e2e::run("smallepoch", mode + " --mini-batch 2500 --maxi-batch 1 --after-epochs 3", true,
                           e2e::mpirun(2));
    EXPECT_NE(r.status, 0) << r.log;
    EXPECT_NE(r.log.find("gave this rank no update"), std::string::npos) << r.log;
  }
}

// Bad data in a streamed corpus (a line that is not UTF-8, the last one of the file): named by
// file and line before the first update, also on a resume, where the checkpoint stays as it was.
TEST(HostileInput, BadDataIsNamedBeforeTheFirstUpdateAndTheCheckpointStays) {
  std::string m = folder("latebad"), d = e2e::corpusDir();
  sh("rm -rf " + m + " && mkdir -p " + m + " && head -n 1999 " + d + "/train.trg > " + m +
     "/bad.trg && printf 'caf\\351 au lait\\n' >> " + m + "/bad.trg");
  std::string corpus = " --shuffle none --shuffle-window 100 --save-freq 5 --train-sets " + d + "/train.src " + m;
  RunResult bad = e2e::run("latebad", "--after-epochs 2" + corpus + "/bad.trg", false);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.log.find("'" + m + "/bad.trg' line 2000 is not valid UTF-8 (byte 4 of the line)"), std::string::npos)
      << bad.log;
  EXPECT_EQ(bad.log.find(" : Up. "), std::string::npos) << bad.log;
  EXPECT_FALSE(exists(m + "/model.npz"));

  // a checkpoint from good data, then the corpus goes bad: the resume names it and changes nothing
  sh("cp " + d + "/train.trg " + m + "/good.trg");
  RunResult good = e2e::run("latebad", "--after-batches 10" + corpus + "/good.trg", false);
  ASSERT_EQ(good.status, 0) << good.log;
  auto hashes = [&] {
    sh("cd " + m + " && md5sum model.npz model.npz.optimizer.npz model.npz.progress.yml > hashes.txt");
    return readFile(m + "/hashes.txt");
  };
  std::string before = hashes();
  sh("cp " + m + "/bad.trg " + m + "/good.trg");
  RunResult resumed = e2e::run("latebad", "--after-batches 20" + corpus + "/good.trg", false);
  EXPECT_NE(resumed.status, 0);
  EXPECT_NE(resumed.log.find("'" + m + "/good.trg' line 2000 is not valid UTF-8"), std::string::npos) << resumed.log;
  EXPECT_EQ(resumed.log.find(" : Up. "), std::string::npos) << resumed.log;
  EXPECT_EQ(hashes(), before);
}

// An update that makes parameters infinite or NaN shows only at the next cost: the save or the
// validation right after it must not write them over the last checkpoint. Here Adam's first
// moment in the checkpoint is finite but near float's largest, so that the first update after the
// resume overflows it (its bias correction divides by 1 - 0.9^5).
TEST(HostileInput, ADivergedUpdateIsNotSavedOverTheCheckpoint) {
  std::string m = folder("diverged");
  sh("rm -rf " + m + " && mkdir -p " + m);
  RunResult good = e2e::run("diverged", "--after-batches 4 --save-freq 4", false);
  ASSERT_EQ(good.status, 0) << good.log;
  ASSERT_EQ(sh("/usr/bin/python3 -c \"import numpy as np, sys\n"
               "a = dict(np.load(sys.argv[1]))\n"
               "a['adam_mt'][:] = np.float32(3e38)\n"
               "np.savez(sys.argv[1], **a)\" " + m + "/model.npz.optimizer.npz"),
            0);
  auto hashes = [&] {
    sh("cd " + m + " && md5sum model.npz model.npz.optimizer.npz model.npz.progress.yml > hashes.txt");
    return readFile(m + "/hashes.txt");
  };
  std::string before = hashes();
  RunResult bad = e2e::run("diverged", "--after-batches 8 --save-freq 1", false);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.log.find("Resuming from"), std::string::npos) << bad.log;
  EXPECT_NE(bad.log.find("The model is not finite after update 5 ('master_parameters' holds "), std::string::npos)
      << bad.log;
  EXPECT_NE(bad.log.find("training diverged; nothing is saved"), std::string::npos) << bad.log;
  EXPECT_EQ(bad.log.find("Saved model"), std::string::npos) << bad.log;
  EXPECT_EQ(hashes(), before);
  // a validation at that update refuses too, and writes no best model
  RunResult validated = e2e::run("diverged", "--after-batches 8 --save-freq 100 --valid-freq 1 --keep-best "
                                 "--valid-metrics cross-entropy" + e2e::validation(), false);
  EXPECT_NE(validated.status, 0);
  EXPECT_NE(validated.log.find("training diverged; nothing is validated or saved"), std::string::npos)
      << validated.log;
  EXPECT_EQ(validated.log.find("[valid]"), std::string::npos) << validated.log;
  EXPECT_FALSE(exists(m + "/model.npz.best-cross-entropy.npz"));
  EXPECT_EQ(hashes(), before);
  // Adam's settings that make NaNs by themselves are refused before training
  for(std::string params : {"0.9 0.98 0", "1.5 0.98 1e-9", "0.9 1 1e-9", "-0.1 0.98 1e-9"}) {
    RunResult refused = e2e::run("diverged", "--after-batches 8 --optimizer-params " + params, false);
    EXPECT_NE(refused.status, 0) << params;
    EXPECT_NE(refused.log.find("--optimizer-params: adam's"), std::string::npos) << params << ": " << refused.log;
  }
  EXPECT_EQ(hashes(), before);
  // and a checkpoint that holds a NaN is named, not resumed
  ASSERT_EQ(sh("/usr/bin/python3 -c \"import numpy as np, sys\n"
               "a = dict(np.load(sys.argv[1]))\n"
               "a['adam_vt'][3] = np.nan\n"
               "np.savez(sys.argv[1], **a)\" " + m + "/model.npz.optimizer.npz"),
            0);
  RunResult nan = e2e::run("diverged", "--after-batches 8", false);
  EXPECT_NE(nan.status, 0);
  EXPECT_NE(nan.log.find("cannot be resumed: 'adam_vt' holds nan at index 3"), std::string::npos) << nan.log;
}

// A log file that cannot be written (a full disk) is said once on stderr; training goes on.
TEST(HostileInput, ALogThatCannotBeWrittenIsSaid) {
  RunResult r = e2e::run("fulllog", "--after-batches 2 --log /dev/full --quiet");
  EXPECT_EQ(r.status, 0) << r.log;
  EXPECT_NE(r.log.find("Warning: writing the log file '/dev/full' failed"), std::string::npos) << r.log;
  EXPECT_EQ(r.log.find("Warning: writing the log file", r.log.find("Warning: writing the log file") + 1),
            std::string::npos) << r.log;
}

// A model file holding a NaN (saved by another program, or damaged) does not decode into empty lines.
TEST(HostileInput, AModelThatIsNotFiniteIsNamed) {
  std::string m = folder("nanmodel"), d = e2e::corpusDir();
  sh("rm -rf " + m + " && mkdir -p " + m);
  RunResult r = e2e::run("nanmodel", "--after-batches 2");
  ASSERT_EQ(r.status, 0) << r.log;
  // the first value of encoder_l1_ffn_W1 set to NaN, in place
  ASSERT_EQ(sh("/usr/bin/python3 -c \"import numpy as np, sys\n"
               "a = dict(np.load(sys.argv[1]))\n"
               "a['encoder_l1_ffn_W1'].flat[0] = np.nan\n"
               "np.savez(sys.argv[1], **a)\" " + m + "/model.npz"),
            0);
  std::string decode = std::string(MARIAN_BIN_DIR) + "/marian-decoder -m " + m + "/model.npz -v " + d +
                       "/vocab.src.yml " + d + "/vocab.trg.yml < " + d + "/valid.src > " + m + "/out 2> " + m + "/err";
  EXPECT_NE(sh(decode), 0);
  std::string err = readFile(m + "/err");
  EXPECT_NE(err.find("Model file '" + m + "/model.npz': 'encoder_l1_ffn_W1' holds nan at index 0"), std::string::npos)
      << err;
}

// A tiny trained model for the decoder cases, in a folder whose name YAML would misread.
std::string trainedModel() {
  static std::string path = [] {
    std::string m = folder("odd: name #1 [x] {y} *z");
    sh("rm -rf '" + m + "' && mkdir -p '" + m + "'");
    std::string d = e2e::corpusDir();
    std::string cmd = std::string(MARIAN_BIN_DIR) + "/marian --train-sets " + d + "/train.src " + d +
                      "/train.trg --vocabs " + d + "/vocab.src.yml " + d + "/vocab.trg.yml --model '" + m +
                      "/model.npz' --dim-emb 32 --transformer-dim-ffn 64 --transformer-heads 2 --mini-batch 16 "
                      "--after-batches 5 --seed 7 > '" + m + "/log.txt' 2>&1";
    EXPECT_EQ(sh(cmd), 0) << readFile(m + "/log.txt");
    return m + "/model.npz";
  }();
  return path;
}

TEST(HostileInput, DecoderConfigOfAnOddlyNamedModelParses) {
  std::string model = trainedModel(), d = e2e::corpusDir();
  std::string out = d + "/odd.out";
  int status = sh(std::string(MARIAN_BIN_DIR) + "/marian-decoder -c '" + model + ".decoder.yml' -b 2 < " + d +
                  "/valid.src > " + out + " 2> " + out + ".log");
  EXPECT_EQ(status, 0) << readFile(out + ".log");
}

TEST(HostileInput, DecoderCropsLongInputsAndWritesNothingBesideTheModel) {
  std::string model = trainedModel(), d = e2e::corpusDir();
  std::string dir = std::filesystem::path(model).parent_path();
  sh("mv '" + model + ".yml' '" + dir + "/hidden.yml'");  // the embedded configuration is used
  auto listing = [&] {
    std::string names;
    for(auto& e : std::filesystem::directory_iterator(dir))
      names += e.path().filename().string() + "\n";
    return names;
  };
  std::string before = listing();
  std::string base = std::string(MARIAN_BIN_DIR) + "/marian-decoder -m '" + model + "' -v " + d + "/vocab.src.yml " +
                     d + "/vocab.trg.yml -b 2 --max-length 3 < " + d + "/valid.src ";
  // four decoders at once (they raced on one temporary file beside the model)
  std::string cmd;
  for(int i = 0; i < 4; ++i)
    cmd += base + "> " + d + "/dec" + std::to_string(i) + ".out 2> " + d + "/dec" + std::to_string(i) + ".log & ";
  sh(cmd + "wait");
  for(int i = 0; i < 4; ++i) {
    std::string log = readFile(d + "/dec" + std::to_string(i) + ".log");
    EXPECT_NE(log.find("sentences in"), std::string::npos) << log;
    EXPECT_NE(log.find("longer than --max-length 3 cropped"), std::string::npos) << log;
    EXPECT_EQ(readFile(d + "/dec" + std::to_string(i) + ".out"), readFile(d + "/dec0.out"));
  }
  EXPECT_EQ(listing(), before);
  sh("mv '" + dir + "/hidden.yml' '" + model + ".yml'");
}

// Text that is not UTF-8 is an error naming the file (or stdin) and line wherever it is read, as
// the training corpus's is: the decoder's input, the validation sets, marian-evaluate's reference.
TEST(HostileInput, TextThatIsNotUtf8IsNamedEverywhere) {
  std::string model = trainedModel(), d = e2e::corpusDir(), m = folder("latin1");
  sh("rm -rf " + m + " && mkdir -p " + m + " && head -n 3 " + d + "/valid.src > " + m + "/in.src && printf 'caf\\351\\n' >> " +
     m + "/in.src");
  std::string decode = std::string(MARIAN_BIN_DIR) + "/marian-decoder -m '" + model + "' -v " + d + "/vocab.src.yml " +
                       d + "/vocab.trg.yml";
  EXPECT_NE(sh(decode + " -i " + m + "/in.src > " + m + "/out 2> " + m + "/err"), 0);
  std::string err = readFile(m + "/err");
  EXPECT_NE(err.find("Input file '" + m + "/in.src' line 4 is not valid UTF-8 (byte 4 of the line)"), std::string::npos)
      << err;
  EXPECT_NE(sh(decode + " < " + m + "/in.src > " + m + "/out 2> " + m + "/err"), 0);
  err = readFile(m + "/err");
  EXPECT_NE(err.find("Input (stdin) line 4 is not valid UTF-8 (byte 4 of the line)"), std::string::npos) << err;
  sh("head -n 4 " + d + "/valid.trg > " + m + "/in.trg");
  RunResult valid = e2e::run("latin1", "--after-batches 2 --valid-sets " + m + "/in.src " + m + "/in.trg", false);
  EXPECT_NE(valid.status, 0);
  EXPECT_NE(valid.log.find("'" + m + "/in.src' line 4 is not valid UTF-8"), std::string::npos) << valid.log;
  EXPECT_NE(sh(std::string(MARIAN_BIN_DIR) + "/marian-evaluate --reference " + m + "/in.src < " + d +
               "/valid.src > " + m + "/out 2> " + m + "/err"),
            0);
  err = readFile(m + "/err");
  EXPECT_NE(err.find("'" + m + "/in.src' line 4 is not valid UTF-8"), std::string::npos) << err;
  EXPECT_NE(sh(std::string(MARIAN_BIN_DIR) + "/marian-evaluate --reference " + d + "/valid.src < " + m +
               "/in.src > " + m + "/out 2> " + m + "/err"),
            0);
  err = readFile(m + "/err");
  EXPECT_NE(err.find("Hypothesis (stdin) line 4 is not valid UTF-8"), std::string::npos) << err;
}

// A batch that needs more than --workspace decodes all the same (as Marian's, the workspace grows;
// the log says so once), with the translations a roomy workspace gives.
TEST(HostileInput, DecoderGrowsPastWorkspace) {
  std::string model = trainedModel(), d = e2e::corpusDir(), out = d + "/workspace.out";
  auto decode = [&](const std::string& workspace, const std::string& to) {
    return sh("head -n 300 " + d + "/train.src | " + std::string(MARIAN_BIN_DIR) + "/marian-decoder -m '" + model +
              "' -v " + d + "/vocab.src.yml " + d + "/vocab.trg.yml -b 4 --workspace " + workspace +
              " --mini-batch 300 --maxi-batch 1 > " + to + " 2> " + to + ".log");
  };
  ASSERT_EQ(decode("1", out), 0) << readFile(out + ".log");
  EXPECT_NE(readFile(out + ".log").find("needs more than the 1 MB of --workspace"), std::string::npos)
      << readFile(out + ".log");
  ASSERT_EQ(decode("2048", out + ".roomy"), 0) << readFile(out + ".roomy.log");
  EXPECT_EQ(readFile(out), readFile(out + ".roomy"));
}

// The small tools: numbers parsed strictly, a missing value named, --help answered (marian-commbench
// without MPI's abort banner).
TEST(HostileInput, ToolArgumentsAreCheckedAndHelpIsAnswered) {
  std::string bin = MARIAN_BIN_DIR, out = e2e::corpusDir() + "/tool.log";
  for(std::string args : {"--max-size abc", "--max-size -5", "--max-size"}) {
    SCOPED_TRACE(args);
    EXPECT_NE(sh("echo a b | " + bin + "/marian-vocab " + args + " > " + out + " 2>&1"), 0);
    EXPECT_NE(readFile(out).find("'--max-size'"), std::string::npos) << readFile(out);
  }
  // marian-evaluate: chrF besides BLEU (100 for the reference itself), another metric named
  { std::ofstream(out + ".ref") << "a small cat .\nthe dog runs\n"; }
  EXPECT_EQ(sh(bin + "/marian-evaluate --metric chrf -r " + out + ".ref < " + out + ".ref > " + out + " 2>&1"), 0);
  EXPECT_EQ(readFile(out), "chrF2 = 100.00\n");
  EXPECT_NE(sh("echo 'the dog' | " + bin + "/marian-evaluate --metric chrf -r " + out + ".ref > " + out + " 2>&1"), 0);
  EXPECT_NE(readFile(out).find("1 hypothesis lines on stdin but 2 reference lines"), std::string::npos) << readFile(out);
  EXPECT_NE(sh(bin + "/marian-evaluate --metric ter -r " + out + ".ref < " + out + ".ref > " + out + " 2>&1"), 0);
  EXPECT_NE(readFile(out).find("Unknown --metric 'ter': bleu or chrf"), std::string::npos) << readFile(out);
  for(std::string tool : {"marian-vocab", "marian-evaluate", "marian-commbench", "marian", "marian-decoder",
                          "marian-scorer"}) {
    SCOPED_TRACE(tool);
    EXPECT_EQ(sh(bin + "/" + tool + " --help > " + out + " 2>&1"), 0);
    EXPECT_NE(readFile(out).find("Usage:"), std::string::npos) << readFile(out);
    EXPECT_EQ(readFile(out).find("MPI_ABORT"), std::string::npos) << readFile(out);
  }
}

}  // namespace
