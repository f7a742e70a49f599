// Corpus reading, vocabularies and batching.
#include <gtest/gtest.h>

#include <algorithm>

#include <cstdlib>
#include <unistd.h>
#include <zlib.h>

#include <fstream>
#include <set>

#include "common/error.h"
#include "data/batch_generator.h"
#include "data/corpus.h"
#include "data/pair_reader.h"
#include "data/text_file.h"
#include "data/vocab.h"
#include "data_files.h"

namespace marian {
namespace {

using testdata::errorOf;
using testdata::write;
using testdata::writeGz;

std::string temp(const std::string& name) { return testdata::temp("marian_data_", name); }

std::shared_ptr<Vocab> wordVocab(const std::string& name, const std::string& text) {
  write(temp(name + ".txt"), text);
  std::remove(temp(name + ".yml").c_str());
  return loadOrCreateVocab(temp(name + ".yml"), {temp(name + ".txt")}, 0);
}

TEST(TextFile, PlainAndGzipReadTheSameAndMissingFilesAreNamed) {
  std::string text = "one line\r\ntwo\n\nlast without newline";
  write(temp("plain.txt"), text);
  writeGz(temp("packed.txt.gz"), text);
  std::vector<std::string> expected = {"one line", "two", "", "last without newline"};
  EXPECT_EQ(readLines(temp("plain.txt")), expected);
  EXPECT_EQ(readLines(temp("packed.txt.gz")), expected);
  EXPECT_NE(errorOf([] { readLines("/no/such/file.txt", "Corpus file"); }).find("/no/such/file.txt"),
            std::string::npos);
}

// LineReader pulls the lines forEachLine gives, so two files are read in step: a line longer than
// its buffer, a gzip file beside a plain one, the end of each, and a line that is not UTF-8 named.
TEST(TextFile, LineReadersReadFilesInStep) {
  std::string longLine(200000, 'x');
  std::string text = "first\r\n" + longLine + "\n\nlast";
  write(temp("step.txt"), text);
  writeGz(temp("step.txt.gz"), text);
  LineReader plain(temp("step.txt"), "Source file"), packed(temp("step.txt.gz"), "Target file");
  std::vector<std::string> expected = {"first", longLine, "", "last"};
  std::string a, b;
  for(const std::string& line : expected) {
    ASSERT_TRUE(plain.next(a));
    ASSERT_TRUE(packed.next(b));
    EXPECT_EQ(a, line);
    EXPECT_EQ(b, line);
  }
  EXPECT_FALSE(plain.next(a));
  EXPECT_FALSE(packed.next(b));
  EXPECT_FALSE(plain.next(a));  // and stays at its end
  EXPECT_EQ(plain.linesRead(), 4u);
  write(temp("bad.txt"), "good\nbad \xff byte\n");
  LineReader bad(temp("bad.txt"), "Source file");
  ASSERT_TRUE(bad.next(a));
  std::string error = errorOf([&] { bad.next(a); });
  EXPECT_NE(error.find("Source file '" + temp("bad.txt") + "' line 2 is not valid UTF-8"), std::string::npos) << error;
  EXPECT_NE(errorOf([] { LineReader("/no/such/file.txt", "Target file"); }).find("Target file '/no/such/file.txt'"),
            std::string::npos);
  // an empty file has no line; nor has a lone '\r' after the last '\n'; a truncated .gz is named
  write(temp("empty.txt"), "");
  EXPECT_FALSE(LineReader(temp("empty.txt"), "Source file").next(a));
  write(temp("cr.txt"), "one\n\r");
  EXPECT_EQ(readLines(temp("cr.txt")), std::vector<std::string>{"one"});
  std::ifstream gz(temp("step.txt.gz"), std::ios::binary);
  std::string packedText((std::istreambuf_iterator<char>(gz)), std::istreambuf_iterator<char>());
  write(temp("cut.txt.gz"), packedText.substr(0, packedText.size() / 2));
  error = errorOf([&] { readLines(temp("cut.txt.gz"), "Target file"); });
  EXPECT_NE(error.find("Target file '" + temp("cut.txt.gz") + "' is corrupt or truncated"), std::string::npos) << error;
}

// marian-scorer's n-best lists: each hypothesis paired with its source's line (ids may skip lines),
// and written back as Marian's ScoreCollectorNBest::addToNBest writes it.
TEST(PairReader, NBestHypothesesPairWithTheirSourceLineAndGetTheFeature) {
  write(temp("nb.src"), "s0\ns1\ns2\n");
  write(temp("nb.nbest"), "0 ||| h0a ||| F0= -1 ||| -1\n0 ||| h0b ||| F0= -2 ||| -2\n2 ||| h2 ||| F0= -3 ||| -3\n");
  PairReader reader({temp("nb.src"), temp("nb.nbest")}, /*tsv=*/false, /*nbest=*/true);
  std::vector<std::pair<std::string, std::string>> pairs;
  for(TextPair p; reader.next(p);)
    pairs.push_back({p.src, p.trg});
  EXPECT_EQ(pairs, (std::vector<std::pair<std::string, std::string>>{{"s0", "h0a"}, {"s0", "h0b"}, {"s2", "h2"}}));
  EXPECT_EQ(nbestWithFeature("0 ||| a b ||| F0= -1.5 ||| -0.75", "Score", -2.25f, {}),
            "0 ||| a b ||| F0= -1.5 Score= -2.25 ||| -0.75");
  EXPECT_EQ(nbestWithFeature("0 ||| a b ||| F0= -1.5 ||| -0.75", "R2L", -2.25f, {"WordScores= -0.10000 -2.15000"}),
            "0 ||| a b ||| WordScores= -0.10000 -2.15000 ||| F0= -1.5 R2L= -2.25 ||| -0.75");
}

TEST(Vocab, YamlRoundTripUnknownWordsAndFrequencyOrder) {
  auto v = wordVocab("yv", "b a b c\nb a\n");
  EXPECT_EQ(v->size(), 5u);  // </s> <unk> b a c
  std::vector<int> ids = v->encode("b c a zzz");
  EXPECT_EQ(ids, (std::vector<int>{2, 4, 3, Vocab::kUnk, Vocab::kEos}));
  EXPECT_EQ(v->decode(v->encode("a b c")), "a b c");
  EXPECT_EQ(v->decode({2, 3, Vocab::kEos, 4}), "b a");  // stops at </s>
  EXPECT_EQ(buildYamlVocab({"x y y"}, 3).find("x"), std::string::npos);  // size limit keeps y only
}

TEST(Vocab, SentencePieceIsTrainedWhenMissingAndRoundTrips) {
  std::string text;
  const char* syllables[] = {"ka", "tze", "hun", "de", "baum", "haus", "e", "n", "ro", "sti", "mo", "lu"};
  for(int i = 0; i < 400; ++i) {
    for(int w = 0; w < 6; ++w)
      text += std::string(syllables[(i * 7 + w * 3) % 12]) + syllables[(i + w * 5) % 12] + " ";
    text += "katzen hund baum\n";
  }
  write(temp("spm.txt"), text);
  // in a folder that does not exist yet (the model's may be elsewhere): it is created
  std::string folder = temp("new-vocab-folder");
  std::system(("rm -rf " + folder).c_str());
  auto v = loadOrCreateVocab(folder + "/v.spm", {temp("spm.txt")}, 40);
  EXPECT_EQ(v->size(), 40u);
  std::vector<int> ids = v->encode("katzen hund baum");
  EXPECT_EQ(ids.back(), Vocab::kEos);
  EXPECT_EQ(v->decode(ids), "katzen hund baum");
  // a second load reads the file that the first one trained
  EXPECT_EQ(loadOrCreateVocab(folder + "/v.spm", {}, 40)->encode("hund"), v->encode("hund"));
  // Marian's --no-spm-decode / --no-spm-encode: pieces separated by spaces out and in
  auto pieces = unitsOf(v);
  std::string split = pieces->decode(ids);
  EXPECT_GT(std::count(split.begin(), split.end(), ' '), 2) << split;  // more pieces than the 3 words
  EXPECT_NE(split.find("\xe2\x96\x81"), std::string::npos) << split;   // with SentencePiece's word marks
  EXPECT_EQ(pieces->encode(split), ids);
  EXPECT_EQ(pieces->encode("nosuchpiece", false), std::vector<int>{v->unkId()});
}

// spm_train's own special ids (<unk> 0, <s> 1, </s> 2) are used as Marian uses them: the model's
// </s> ends every sentence and decoding, its <unk> stands for unknown pieces.
TEST(Vocab, SentencePieceWithItsOwnSpecialIds) {
  write(temp("spm-ids.txt"), "das ist ein haus\nein hund und eine katze\ndas haus ist klein\n");
  std::string path = temp("spm-ids/v.spm");
  std::system(("rm -rf " + temp("spm-ids")).c_str());
  VocabTraining training;
  training.sentencepieceOptions = "--unk_id=0 --bos_id=1 --eos_id=2 --model_type=char";
  auto v = loadOrCreateVocab(path, {temp("spm-ids.txt")}, 24, training);
  EXPECT_EQ(v->eosId(), 2);
  EXPECT_EQ(v->unkId(), 0);
  std::vector<int> ids = v->encode("das haus");
  EXPECT_EQ(ids.back(), 2);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 2), 1);
  EXPECT_EQ(v->decode(ids), "das haus");
  ids.insert(ids.end(), {v->encode("ein", false)[0]});
  EXPECT_EQ(v->decode(ids), "das haus");  // stops at </s>
  EXPECT_EQ(v->encode("Q", false), std::vector<int>({3, 0}));  // "▁" then <unk> for a character never seen
}

TEST(Vocab, MissingAndCorruptFilesAreNamed) {
  EXPECT_NE(errorOf([] { loadOrCreateVocab(temp("v.txt"), {}, 0); }).find("v.txt"), std::string::npos);
  write(temp("v.fsv"), "</s>\n<unk>\n");
  EXPECT_NE(errorOf([] { loadOrCreateVocab(temp("v.fsv"), {}, 0); }).find("factored"), std::string::npos);
  write(temp("broken.yml"), "a: [1\n");
  EXPECT_NE(errorOf([] { loadOrCreateVocab(temp("broken.yml"), {}, 0); }).find("broken.yml"), std::string::npos);
  write(temp("nospecial.yml"), "a: 0\nb: 1\n");
  EXPECT_NE(errorOf([] { loadOrCreateVocab(temp("nospecial.yml"), {}, 0); }).find("</s>"), std::string::npos);
}

// Marian's text vocabularies: a word a line (plain or .gz, CRLF read as LF), a word's id its
// line's index, </s> and <unk> wherever the file has them, as Marian looks them up.
TEST(Vocab, ATextVocabularyHasAWordALineAndItsSpecialWordsAnywhere) {
  for(std::string name : {"words.txt", "words.txt.gz"}) {
    SCOPED_TRACE(name);
    std::string text = "the\r\ncat\n</s>\nsat\n<unk>\n";
    if(name.size() > 3 && name.substr(name.size() - 3) == ".gz")
      writeGz(temp(name), text);
    else
      write(temp(name), text);
    auto v = loadOrCreateVocab(temp(name), {}, 0);
    EXPECT_EQ(v->size(), 5u);
    EXPECT_EQ(v->eosId(), 2);
    EXPECT_EQ(v->unkId(), 4);
    EXPECT_EQ(v->encode("the dog sat"), (std::vector<int>{0, 4, 3, 2}));
    EXPECT_EQ(v->decode({1, 0, 2, 3}), "cat the");  // stops at </s>, wherever it is
    EXPECT_EQ(v->decode({1, 99}), "cat <unk>");
    // --dim-vocabs cuts later words to <unk>, but never </s> or <unk> themselves
    std::string error = errorOf([&] { loadOrCreateVocab(temp(name), {}, 4); });
    EXPECT_NE(error.find("--dim-vocabs 4 cuts <unk> (id 4)"), std::string::npos) << error;
  }
  write(temp("cut.txt"), "</s>\n<unk>\nthe\ncat\n");
  auto cut = loadOrCreateVocab(temp("cut.txt"), {}, 3);
  EXPECT_EQ(cut->encode("the cat"), (std::vector<int>{2, 1, 0}));
  // larger than the file: as Marian, the model has that many rows, the ids past the file no word
  auto padded = loadOrCreateVocab(temp("cut.txt"), {}, 10);
  EXPECT_EQ(padded->size(), 10u);
  EXPECT_EQ(padded->encode("the cat"), (std::vector<int>{2, 3, 0}));
  EXPECT_EQ(padded->decode({3, 9, 2}), "cat <unk> the");
  // a YAML map may put them anywhere too; Nematus's eos and UNK at ids 0 and 1 are taken for them
  write(temp("moved.yml"), "the: 0\n</s>: 1\n<unk>: 2\n");
  auto moved = loadOrCreateVocab(temp("moved.yml"), {}, 0);
  EXPECT_EQ(moved->encode("the x"), (std::vector<int>{0, 2, 1}));
  write(temp("nematus.yml"), "eos: 0\nUNK: 1\nthe: 2\n");
  auto nematus = loadOrCreateVocab(temp("nematus.yml"), {}, 0);
  EXPECT_EQ(nematus->encode("the x"), (std::vector<int>{2, 1, 0}));
}

TEST(Vocab, ATextVocabularyIsMadeInTheSameOrderAndBadLinesAreNamed) {
  write(temp("made.corpus"), "b a b c\nb a\n");
  std::remove(temp("made.txt").c_str());
  auto text = loadOrCreateVocab(temp("made.txt"), {temp("made.corpus")}, 0);
  EXPECT_EQ(readLines(temp("made.txt")), (std::vector<std::string>{"</s>", "<unk>", "b", "a", "c"}));
  EXPECT_EQ(text->encode("b c a zzz"), wordVocab("made", "b a b c\nb a\n")->encode("b c a zzz"));
  std::remove(temp("made.txt.gz").c_str());  // a .gz name: gzip-compressed, as Marian's
  EXPECT_EQ(loadOrCreateVocab(temp("made.txt.gz"), {temp("made.corpus")}, 0)->encode("b c a"), text->encode("b c a"));
  std::ifstream gz(temp("made.txt.gz"), std::ios::binary);
  EXPECT_EQ(gz.get(), 0x1f);
  EXPECT_EQ(gz.get(), 0x8b);
  write(temp("bad.txt"), "</s>\n<unk>\nthe\n\ncat\n");
  std::string error = errorOf([] { loadOrCreateVocab(temp("bad.txt"), {}, 0); });
  EXPECT_NE(error.find("line 4: an empty line"), std::string::npos) << error;
  write(temp("bad.txt"), "</s>\n<unk>\nthe\ncat\nthe\n");
  error = errorOf([] { loadOrCreateVocab(temp("bad.txt"), {}, 0); });
  EXPECT_NE(error.find("line 5: word 'the' appears twice (first at line 3)"), std::string::npos) << error;
  write(temp("bad.txt"), "</s>\t0\n<unk>\t0\n\xe2\x96\x81the\t-2.5\n");  // SentencePiece's .vocab
  error = errorOf([] { loadOrCreateVocab(temp("bad.txt"), {}, 0); });
  EXPECT_NE(error.find("line 1: '</s>\t0' is not one word"), std::string::npos) << error;
  write(temp("bad.txt"), "the\n<unk>\n");
  error = errorOf([] { loadOrCreateVocab(temp("bad.txt"), {}, 0); });
  EXPECT_NE(error.find("has no entry for </s>"), std::string::npos) << error;
}

// A missing vocabulary of a --tsv corpus learns from its TAB field, a joint one from both.
TEST(Vocab, ATsvCorpusTeachesEachVocabularyItsFields) {
  write(temp("fields.tsv"), "a b\tx y\nc\tz\n");
  VocabTraining target;
  target.tsvFields = {1};
  std::vector<std::string> lines;
  forEachTrainingLine({temp("fields.tsv")}, target, [&](std::string& l) { lines.push_back(l); });
  EXPECT_EQ(lines, (std::vector<std::string>{"x y", "z"}));
  VocabTraining joint;
  joint.tsvFields = {0, 1};
  lines.clear();
  forEachTrainingLine({temp("fields.tsv")}, joint, [&](std::string& l) { lines.push_back(l); });
  EXPECT_EQ(lines, (std::vector<std::string>{"a b x y", "c z"}));
  std::remove(temp("fields.trg.yml").c_str());
  auto v = loadOrCreateVocab(temp("fields.trg.yml"), {temp("fields.tsv")}, 0, target);
  EXPECT_EQ(v->size(), 5u);  // </s> <unk> x y z
  EXPECT_EQ(v->encode("x a", false), (std::vector<int>{2, v->unkId()}));
}

TEST(Corpus, MismatchedLineCountsNameBothFiles) {
  auto v = wordVocab("cv", "a b c\n");
  write(temp("c1.src"), "a\nb\nc\n");
  write(temp("c1.trg"), "a\nb\n");
  std::string e = errorOf([&] { Corpus({temp("c1.src"), temp("c1.trg")}, {v, v}, 50); });
  EXPECT_NE(e.find("c1.src"), std::string::npos) << e;
  EXPECT_NE(e.find("c1.trg"), std::string::npos) << e;
  EXPECT_NE(e.find("3 lines"), std::string::npos) << e;
}

TEST(Corpus, EmptyAndLongLinesAreSkippedAndCounted) {
  auto v = wordVocab("cv2", "a b c\n");
  write(temp("c2.src"), "a b\n\na b c a b c\nc\n");
  writeGz(temp("c2.trg.gz"), "b a\nb\nc\n\n");
  Corpus c({temp("c2.src"), temp("c2.trg.gz")}, {v, v}, 4);
  EXPECT_EQ(c.size(), 1u);
  EXPECT_EQ(c.skippedEmpty(), 2u);
  EXPECT_EQ(c.skippedLong(), 1u);
  EXPECT_EQ(c[0].line, 0u);
  EXPECT_EQ(c[0].trg.back(), Vocab::kEos);
}

// Marian's --max-length counts </s>: 3 words + </s> is 4 tokens, kept at 4 and skipped at 3
// (cropped to 3 tokens, the last </s>, where cropping).
TEST(Corpus, MaxLengthCountsTheEndOfSentenceAsMarian) {
  auto v = wordVocab("cv3", "a b c\n");
  write(temp("c3.src"), "a b c\n");
  write(temp("c3.trg"), "c b a\n");
  EXPECT_EQ(Corpus({temp("c3.src"), temp("c3.trg")}, {v, v}, 4).size(), 1u);
  EXPECT_EQ(Corpus({temp("c3.src"), temp("c3.trg")}, {v, v}, 3).size(), 0u);
  Corpus cropped({temp("c3.src"), temp("c3.trg")}, {v, v}, 3, /*crop=*/true);
  ASSERT_EQ(cropped.size(), 1u);
  EXPECT_EQ(cropped[0].src.size(), 3u);
  EXPECT_EQ(cropped[0].src.back(), Vocab::kEos);
}

TEST(Corpus, CroppingToTheEndOfSentenceAloneIsRefused) {
  write(temp("crop1.src"), "a b c\n");
  write(temp("crop1.trg"), "x y\n");
  auto v = wordVocab("crop1v", "a b c x y\n");
  std::string e = errorOf([&] { Corpus({temp("crop1.src"), temp("crop1.trg")}, {v, v}, 1, /*crop=*/true); });
  EXPECT_NE(e.find("--max-length-crop needs --max-length 2 or more"), std::string::npos) << e;
  EXPECT_EQ(Corpus({temp("crop1.src"), temp("crop1.trg")}, {v, v}, 2, true)[0].src.size(), 2u);
}

Corpus makeCorpus(size_t n) {
  std::string src, trg, words;
  for(size_t i = 0; i < n; ++i) {
    size_t len = 1 + (i * 7) % 13;
    for(size_t j = 0; j < len; ++j) {
      src += "w" + std::to_string((i + j) % 20) + " ";
      trg += "v" + std::to_string((i * j) % 20) + " ";
    }
    src += "\n";
    trg += "\n";
  }
  write(temp("b.src"), src);
  write(temp("b.trg"), trg);
  auto v = wordVocab("bv", src + trg);
  return Corpus({temp("b.src"), temp("b.trg")}, {v, v}, 50);
}

TEST(BatchGenerator, EverySentenceOnceAnEpochInSentencesAndWordsModes) {
  Corpus corpus = makeCorpus(1003);
  for(size_t words : {size_t(0), size_t(120)}) {
    BatchingOptions o;
    o.miniBatch = 16;
    o.miniBatchWords = words;
    o.maxiBatch = 5;
    o.seed = 3;
    BatchGenerator gen(corpus, o);
    gen.startEpoch(1);
    std::multiset<size_t> seen;
    size_t batches = 0, short_ = 0;
    while(gen.hasNext()) {
      Batch b = gen.next();
      ++batches;
      if(words) {  // Marian's: the sentence whose source words pass the limit ends the batch
        size_t last = 0;
        for(int t = 0; t < b.srcLen; ++t)
          last += size_t(b.srcMask[size_t(b.sentences - 1) * b.srcLen + t]);
        EXPECT_LE(b.srcWords - last, words);
        short_ += b.srcWords <= words;  // only a maxi-batch's last
      } else {
        EXPECT_LE(b.sentences, 16);
      }
      EXPECT_EQ(b.trgIds.size(), size_t(b.sentences) * b.trgLen);
    }
    EXPECT_LE(short_, (corpus.size() + 79) / 80);  // maxi-batches of 16 x 5 sentences
    for(const auto& ids : gen.epochBatches())
      seen.insert(ids.begin(), ids.end());
    EXPECT_EQ(seen.size(), corpus.size());
    EXPECT_EQ(std::set<size_t>(seen.begin(), seen.end()).size(), corpus.size()) << "a sentence came twice";
    EXPECT_EQ(batches, gen.batchesInEpoch());
  }
}

// --mini-batch-fit: a batch holds at most what the table allows at its longest sentence (source or
// target, rounded up to the step), and takes as many as that when the maxi-batch has them.
TEST(BatchGenerator, FittedBatchesKeepToTheirLengthsLimit) {
  Corpus corpus = makeCorpus(1003);
  BatchingOptions o;
  o.miniBatch = 16;
  o.maxiBatch = 20;
  o.fitStep = 4;
  o.fitSentences = {40, 25, 12, 7, 5, 3};  // up to 4, 8, ... 24 tokens and beyond
  o.seed = 3;
  BatchGenerator gen(corpus, o);
  gen.startEpoch(1);
  std::multiset<size_t> seen;
  size_t full = 0;
  while(gen.hasNext()) {
    Batch b = gen.next();
    size_t longest = size_t(std::max(b.srcLen, b.trgLen));
    size_t limit = o.fitSentences[std::min<size_t>((longest + 3) / 4 - 1, o.fitSentences.size() - 1)];
    EXPECT_LE(size_t(b.sentences), limit) << "longest " << longest;
    full += size_t(b.sentences) == limit;
  }
  for(const auto& ids : gen.epochBatches())
    seen.insert(ids.begin(), ids.end());
  EXPECT_EQ(std::set<size_t>(seen.begin(), seen.end()).size(), corpus.size());
  EXPECT_EQ(seen.size(), corpus.size());
  EXPECT_GT(full, gen.batchesInEpoch() / 2) << "batches should fill up to their limit";
}

TEST(BatchGenerator, EpochsAreReproducibleAndDiffer) {
  Corpus corpus = makeCorpus(500);
  BatchingOptions o;
  o.miniBatch = 8;
  BatchGenerator a(corpus, o), b(corpus, o);
  a.startEpoch(2);
  b.startEpoch(2);
  EXPECT_EQ(a.epochBatches(), b.epochBatches());
  b.startEpoch(3);
  EXPECT_NE(a.epochBatches(), b.epochBatches());
  // within a maxi-batch, sentences are sorted by target length: batches are nearly uniform
  for(const auto& ids : a.epochBatches()) {
    size_t lo = 1000, hi = 0;
    for(size_t i : ids) {
      lo = std::min(lo, corpus[i].trg.size());
      hi = std::max(hi, corpus[i].trg.size());
    }
    EXPECT_LE(hi - lo, 2u);
  }
}

// Where an epoch's mini-batches go: by default (--shuffle-within-maxi-batch) as Marian orders them,
// each maxi-batch's batches together (cut from its longest sentence down, so its leftover batch
// holds its shortest sentences) and shuffled among themselves only, without shuffling longest
// first; with --shuffle-within-maxi-batch=false shuffled over the whole epoch.
TEST(BatchGenerator, ShufflingWithinMaxiBatchesKeepsEachMaxiBatchTogetherAsMarian) {
  Corpus corpus = makeCorpus(1003);
  BatchingOptions o;
  o.miniBatch = 16;
  o.maxiBatch = 5;  // 80 sentences: 13 maxi-batches, the last of 43
  o.shuffleData = false;  // maxi-batch k holds sentences [80k, 80k + 80)
  o.seed = 7;
  auto maxiBatchOf = [&](const std::vector<size_t>& ids) {
    std::set<size_t> of;
    for(size_t i : ids)
      of.insert(i / 80);
    EXPECT_EQ(of.size(), 1u) << "a batch mixes maxi-batches";
    return *of.begin();
  };
  auto longest = [&](const std::vector<size_t>& ids) {
    size_t l = 0;
    for(size_t i : ids)
      l = std::max(l, corpus[i].trg.size());
    return l;
  };
  auto shortest = [&](const std::vector<size_t>& ids) {
    size_t l = 1000;
    for(size_t i : ids)
      l = std::min(l, corpus[i].trg.size());
    return l;
  };
  for(bool shuffle : {true, false}) {
    o.shuffleBatches = shuffle;
    o.withinMaxiBatch = true;
    BatchGenerator gen(corpus, o);
    gen.startEpoch(1);
    const auto& batches = gen.epochBatches();
    ASSERT_EQ(batches.size(), 12u * 5 + 3);
    size_t unsorted = 0, leftovers = 0;
    for(size_t b = 0; b < batches.size(); ++b) {
      size_t m = maxiBatchOf(batches[b]);
      EXPECT_EQ(m, b / 5) << "batch " << b << " left its maxi-batch's place";
      bool sameMaxi = b + 1 < batches.size() && maxiBatchOf(batches[b + 1]) == m;
      unsorted += sameMaxi && longest(batches[b]) < longest(batches[b + 1]);
      if(batches[b].size() < 16) {  // the leftover of the last maxi-batch: its shortest sentences
        ++leftovers;
        for(size_t other = 60; other < batches.size(); ++other)
          if(other != b) {
            EXPECT_LE(longest(batches[b]), shortest(batches[other]));
          }
      }
    }
    EXPECT_EQ(leftovers, 1u);
    if(shuffle)
      EXPECT_GT(unsorted, 5u) << "the batches of a maxi-batch should be shuffled";
    else
      EXPECT_EQ(unsorted, 0u) << "unshuffled, a maxi-batch's batches go longest first";
  }
  // =false shuffles over the epoch: maxi-batches mix
  o.shuffleBatches = true;
  o.withinMaxiBatch = false;
  BatchGenerator gen(corpus, o);
  gen.startEpoch(1);
  size_t outOfPlace = 0;
  for(size_t b = 0; b < gen.epochBatches().size(); ++b)
    outOfPlace += maxiBatchOf(gen.epochBatches()[b]) != b / 5;
  EXPECT_GT(outOfPlace, gen.epochBatches().size() / 2);
}

TEST(Batch, PaddingMasksAndSlices) {
  Corpus corpus = makeCorpus(10);
  Batch b = Batch::fromPairs(corpus, {0, 1, 2});
  EXPECT_EQ(b.sentences, 3);
  size_t words = 0;
  for(float m : b.trgMask)
    words += m != 0.f;
  EXPECT_EQ(words, b.trgWords);
  Batch part = b.slice(1, 2);
  EXPECT_EQ(part.sentences, 2);
  EXPECT_EQ(part.trgWords, corpus[1].trg.size() + corpus[2].trg.size());
  EXPECT_EQ(part.trgIds[0], corpus[1].trg[0]);
}

}  // namespace
}  // namespace marian
