// The streamed training corpus: chunks read alone give the files' lines (plain, .gz, TSV), bad
// data is named by file and line, and the ranks' streamed epochs cover every usable pair once
// between them, deterministically, resumably, in file order with --shuffle none.
#include <gtest/gtest.h>

#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/error.h"
#include "data/corpus.h"
#include "data/corpus_chunks.h"
#include "data/text_file.h"
#include "data/streamed_batches.h"
#include "data/window_workers.h"
#include "data/vocab.h"
#include "data_files.h"

namespace marian {
namespace {

using testdata::errorOf;
using testdata::write;
using testdata::writeGz;

std::string temp(const std::string& name) { return testdata::temp("marian_stream_", name); }

// n pairs "s<i> w<i%7> ..." / "t<i> ..." of varied lengths; every 10th pair's target empty
struct Pairs {
  std::string src, trg, tsv;
  std::vector<std::string> srcLines, trgLines;
};
Pairs makePairs(size_t n) {
  Pairs p;
  for(size_t i = 0; i < n; ++i) {
    std::string s = "s" + std::to_string(i), t = i % 10 == 3 ? "" : "t" + std::to_string(i);
    for(size_t k = 0; k < i % 6; ++k) {
      s += " w" + std::to_string((i + k) % 7);
      t += " v" + std::to_string((i * k) % 5);
    }
    p.srcLines.push_back(s);
    p.trgLines.push_back(t);
    p.src += s + "\n";
    p.trg += t + (i % 4 == 1 ? "\r\n" : "\n");  // Windows line ends read as Unix ones
    p.tsv += s + "\t" + t + "\n";
  }
  return p;
}

// The pairs as NAME.src and NAME.trg, in chunks of chunkLines.
std::unique_ptr<CorpusChunks> writeChunks(const std::string& name, const Pairs& p, size_t chunkLines) {
  write(temp(name + ".src"), p.src);
  write(temp(name + ".trg"), p.trg);
  return std::make_unique<CorpusChunks>(std::vector<std::string>{temp(name + ".src"), temp(name + ".trg")}, false,
                                        chunkLines, "");
}

std::vector<std::shared_ptr<Vocab>> vocabsFor(const Pairs& p) {
  write(temp("vs.txt"), p.src);
  write(temp("vt.txt"), p.trg);
  std::remove(temp("vs.yml").c_str());
  std::remove(temp("vt.yml").c_str());
  return {loadOrCreateVocab(temp("vs.yml"), {temp("vs.txt")}, 0), loadOrCreateVocab(temp("vt.yml"), {temp("vt.txt")}, 0)};
}

TEST(CorpusChunks, ChunksReadAloneGiveTheLinesOfPlainGzipAndTsvFiles) {
  Pairs p = makePairs(103);
  write(temp("a.src"), p.src);
  write(temp("a.trg"), p.trg.substr(0, p.trg.size() - 1));  // the last line without '\n'
  writeGz(temp("a.src.gz"), p.src);
  write(temp("a.tsv"), p.tsv);
  CorpusChunks plain({temp("a.src"), temp("a.trg")}, false, 10, "");
  CorpusChunks gz({temp("a.src.gz"), temp("a.trg")}, false, 10, ::testing::TempDir());
  CorpusChunks tsv({temp("a.tsv")}, true, 10, "");
  for(const CorpusChunks* c : {&plain, &gz, &tsv}) {
    ASSERT_EQ(c->lines(), 103u);
    ASSERT_EQ(c->chunks(), 11u);
    for(size_t k : {size_t(10), size_t(3), size_t(0)}) {  // in any order
      std::vector<RawPair> got = c->read(k);
      ASSERT_EQ(got.size(), k == 10 ? 3u : 10u);
      for(const RawPair& r : got) {
        EXPECT_EQ(r.src, p.srcLines[r.line]);
        EXPECT_EQ(r.trg, p.trgLines[r.line]);
      }
      EXPECT_EQ(got.front().line, k * 10);
    }
  }
}

// The lines counted on the pass are the lines readLines reads: a last line without '\n' counts
// when it has text, a lone '\r' there does not (the fuzzer's find)
TEST(CorpusChunks, LineCountsAgreeWithReadLines) {
  for(std::string text : {"a\nb\n\r", "a\nb\r", "a\nb\n", "a\n\nb", "\r", "x\r\n\r"}) {
    write(temp("g.src"), text);
    write(temp("g.trg"), text);
    size_t expected = readLines(temp("g.src")).size();
    if(expected == 0)
      continue;  // an empty file, named by the error of its own test
    for(size_t chunkLines : {size_t(1), size_t(2)}) {
      CorpusChunks chunks({temp("g.src"), temp("g.trg")}, false, chunkLines, "");
      EXPECT_EQ(chunks.lines(), expected) << text;
      size_t read = 0;
      for(size_t c = 0; c < chunks.chunks(); ++c)
        read += chunks.read(c).size();
      EXPECT_EQ(read, expected) << text;
    }
  }
}

// --train-sets <(zcat ...): a pipe is copied on the pass, as a .gz file is
TEST(CorpusChunks, APipeIsReadLikeAFile) {
  Pairs p = makePairs(40);
  write(temp("f.trg"), p.trg);
  std::string fifo = temp("f.fifo");
  std::remove(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { write(fifo, p.src); });
  CorpusChunks chunks({fifo, temp("f.trg")}, false, 16, ::testing::TempDir());
  writer.join();
  ASSERT_EQ(chunks.lines(), 40u);
  std::vector<RawPair> last = chunks.read(2);
  ASSERT_EQ(last.size(), 8u);
  EXPECT_EQ(last[7].src, p.srcLines[39]);
  EXPECT_EQ(last[7].trg, p.trgLines[39]);
}

TEST(CorpusChunks, BadDataIsNamedByFileAndLine) {
  Pairs p = makePairs(50);
  write(temp("b.src"), p.src);
  write(temp("b.trg"), p.trg + "one more\n");
  std::string e = errorOf([&] { CorpusChunks({temp("b.src"), temp("b.trg")}, false, 8, ""); });
  EXPECT_NE(e.find("(50 lines)"), std::string::npos) << e;
  EXPECT_NE(e.find("(51 lines)"), std::string::npos) << e;
  EXPECT_NE(e.find("'" + temp("b.src") + "' ends after line 50"), std::string::npos) << e;

  auto openFiles = [] {
    size_t n = 0;
    for(auto it = std::filesystem::directory_iterator("/proc/self/fd"); it != std::filesystem::directory_iterator(); ++it)
      ++n;
    return n;
  };
  size_t before = openFiles();
  for(int i = 0; i < 20; ++i)  // a failed pass keeps no file open (the fuzzer ran out of them)
    errorOf([&] { CorpusChunks({temp("b.src"), temp("b.trg")}, false, 8, ""); });
  EXPECT_EQ(openFiles(), before);

  write(temp("empty.trg"), "");
  e = errorOf([&] { CorpusChunks({temp("b.src"), temp("empty.trg")}, false, 8, ""); });
  EXPECT_NE(e.find("'" + temp("empty.trg") + "' is empty"), std::string::npos) << e;

  std::string bad = p.trg;
  size_t line37 = 0;
  for(int i = 0; i < 36; ++i)
    line37 = bad.find('\n', line37) + 1;
  bad.insert(line37, "caf\xe9 ");  // Latin-1, not UTF-8
  write(temp("bad.trg"), bad);
  e = errorOf([&] { CorpusChunks({temp("b.src"), temp("bad.trg")}, false, 8, ""); });  // on the pass
  EXPECT_NE(e.find("Corpus file '" + temp("bad.trg") + "' line 37 is not valid UTF-8 (byte 4 of the line)"),
            std::string::npos) << e;

  write(temp("bad.tsv"), "a\tb\nc\td\te\n");
  e = errorOf([&] { CorpusChunks({temp("bad.tsv")}, true, 8, ""); });
  EXPECT_NE(e.find("line 2 has 3 field(s)"), std::string::npos) << e;
  e = errorOf([&] { CorpusChunks({"/no/such.src", temp("b.trg")}, false, 8, ""); });
  EXPECT_NE(e.find("'/no/such.src' cannot be opened"), std::string::npos) << e;
}

// The pass names every bad line of both files at once (up to ten a file, the rest counted), also a
// line a read block cuts in two, a line of a .gz file and a bad last line without '\n'; empty
// lines are counted, not refused.
TEST(CorpusChunks, ThePassNamesEveryBadLineBeforeTraining) {
  std::string src, trg;
  for(int i = 1; i <= 30; ++i) {
    src += i % 3 == 0 ? "schlecht \xff\n" : "gut\n";  // lines 3, 6, ..., 30: ten bad
    trg += i == 7 ? "\n" : "good\n";                   // line 7 empty
  }
  write(temp("many.trg"), trg + "x\xc3");  // a 31st line cut inside a character, no '\n'
  write(temp("many31.src"), src + "y\n");
  std::string e = errorOf([&] { CorpusChunks({temp("many31.src"), temp("many.trg")}, false, 8, ""); });
  EXPECT_NE(e.find("Corpus file '" + temp("many31.src") + "' has 10 bad lines: line 3 is not "
                   "valid UTF-8 (byte 10 of the line); line 6"), std::string::npos) << e;
  EXPECT_NE(e.find("line 30 is not valid UTF-8"), std::string::npos) << e;
  EXPECT_NE(e.find("Corpus file '" + temp("many.trg") + "' line 31 is not valid UTF-8 (byte 2 of the line)"),
            std::string::npos) << e;

  std::string fifteen;  // more than ten: the rest counted
  for(int i = 0; i < 15; ++i)
    fifteen += "\xfe\n";
  write(temp("fifteen.src"), fifteen);
  e = errorOf([&] { CorpusChunks({temp("fifteen.src"), temp("fifteen.src")}, false, 8, ""); });
  EXPECT_NE(e.find("has 15 bad lines (the first 10 here): line 1 "), std::string::npos) << e;
  EXPECT_EQ(e.find("line 11 "), std::string::npos) << e;

  // a bad line across the boundary of the pass's 1 MB reads, in a plain and in a .gz file
  std::string longLine(1500000, 'a');
  longLine[1200000] = '\x80';
  std::string text = std::string(1000, 'b') + "\n" + longLine + "\nlast\n";
  write(temp("long.src"), text);
  write(temp("long.trg"), "1\n2\n3\n");
  e = errorOf([&] { CorpusChunks({temp("long.src"), temp("long.trg")}, false, 8, ""); });
  EXPECT_NE(e.find("line 2 is not valid UTF-8 (byte 1200001 of the line)"), std::string::npos) << e;
  std::string gz = temp("long.src.gz");
  ASSERT_EQ(std::system(("gzip -c " + temp("long.src") + " > " + gz).c_str()), 0);
  e = errorOf([&] { CorpusChunks({gz, temp("long.trg")}, false, 8, ::testing::TempDir()); });
  EXPECT_NE(e.find("'" + gz + "' line 2 is not valid UTF-8 (byte 1200001 of the line)"), std::string::npos) << e;

  // a line longer than the pass checks (16 MB) is named as such, whatever lies past the cut
  std::string huge(16 << 20, 'h');
  huge += "\xc3\xbc tail\n";  // a valid character across the cut
  write(temp("huge.src"), "first\n" + huge);
  write(temp("huge.trg"), "1\n2\n");
  e = errorOf([&] { CorpusChunks({temp("huge.src"), temp("huge.trg")}, false, 8, ""); });
  EXPECT_NE(e.find("line 2 is longer than 16 MB"), std::string::npos) << e;

  // good data: empty lines counted, and the pairs read back
  write(temp("ok.trg"), trg);
  std::string okSrc;
  for(int i = 0; i < 30; ++i)
    okSrc += i == 9 ? "\r\n" : "Gr\xc3\xbc\xc3\x9f\n";  // a line of "\r" alone is empty too
  write(temp("ok.src"), okSrc);
  CorpusChunks ok({temp("ok.src"), temp("ok.trg")}, false, 8, "");
  EXPECT_EQ(ok.emptyLines(), (std::vector<size_t>{1, 1}));
  EXPECT_EQ(ok.read(0)[6].trg, "");
}

TEST(CorpusChunks, Utf8IsCheckedAsTheStandardSays) {
  EXPECT_EQ(firstInvalidUtf8("plain ascii"), std::string::npos);
  EXPECT_EQ(firstInvalidUtf8("Gr\xc3\xbc\xc3\x9f" "e \xe2\x82\xac \xf0\x9f\x98\x80"), std::string::npos);
  EXPECT_EQ(firstInvalidUtf8("ab\xc3"), 2u);              // cut short
  EXPECT_EQ(firstInvalidUtf8("\xc0\xaf"), 0u);            // overlong
  EXPECT_EQ(firstInvalidUtf8("x\xed\xa0\x80"), 1u);       // a surrogate
  EXPECT_EQ(firstInvalidUtf8("xy\xf4\x90\x80\x80"), 2u);  // beyond U+10FFFF
  EXPECT_EQ(firstInvalidUtf8("\x80"), 0u);
  // past the eight-byte ASCII steps: a bad byte at every position of a longer line
  for(size_t at = 0; at < 20; ++at) {
    std::string line(20, 'a');
    line[at] = '\xc3';
    EXPECT_EQ(firstInvalidUtf8(line), at);
    line[at] = '\xe9';
    EXPECT_EQ(firstInvalidUtf8(line), at);
  }
  EXPECT_EQ(firstInvalidUtf8(std::string(17, 'a') + "\xc3\xbc"), std::string::npos);
}

std::vector<size_t> allChunks(const CorpusChunks& chunks) {
  std::vector<size_t> ids(chunks.chunks());
  for(size_t c = 0; c < ids.size(); ++c)
    ids[c] = c;
  return ids;
}

// The lines each rank trains on in one epoch, in order.
std::vector<std::vector<size_t>> epochLines(const CorpusChunks& chunks, const PairEncoder& enc,
                                            const BatchingOptions& b, size_t windowChunks, int ranks, size_t epoch) {
  std::vector<std::vector<size_t>> lines(static_cast<size_t>(ranks));
  for(int r = 0; r < ranks; ++r) {
    StreamedBatches s(chunks, enc, b, windowChunks, 2, r, ranks);
    s.startEpoch(epoch);
    // the Batch keeps no line numbers: recover each from its source ids
    while(std::optional<Batch> batch = s.next()) {
      EXPECT_LE(batch->sentences, 8);
      for(int k = 0; k < batch->sentences; ++k)
        lines[size_t(r)].push_back(size_t(batch->srcIds[size_t(k * batch->srcLen)]));
    }
  }
  return lines;
}

TEST(StreamedBatches, EveryUsablePairOnceAnEpochOnOneTwoAndThreeRanks) {
  Pairs p = makePairs(997);
  auto vocabs = vocabsFor(p);
  std::unique_ptr<CorpusChunks> written = writeChunks("c", p, 16);
  const CorpusChunks& chunks = *written;
  PairEncoder enc{vocabs, 5, false};  // pairs of more than 4 words skipped too
  std::set<int> usable;               // by the first source id, which is unique to the line ("s<i>")
  Corpus all(chunks, allChunks(chunks), enc, 3);
  for(size_t i = 0; i < all.size(); ++i)
    EXPECT_TRUE(usable.insert(all[i].src[0]).second);
  ASSERT_GT(usable.size(), 500u);
  ASSERT_LT(usable.size(), 997u);
  BatchingOptions b;
  b.miniBatch = 8;
  b.maxiBatch = 3;
  b.seed = 11;
  for(int ranks : {1, 2, 3}) {
    for(size_t epoch : {size_t(1), size_t(2)}) {
      SCOPED_TRACE("ranks " + std::to_string(ranks) + " epoch " + std::to_string(epoch));
      auto lines = epochLines(chunks, enc, b, 4, ranks, epoch);
      std::multiset<int> seen;
      for(const auto& mine : lines) {
        EXPECT_GT(mine.size(), usable.size() / size_t(ranks) / 2);  // dealt about evenly
        seen.insert(mine.begin(), mine.end());
      }
      EXPECT_EQ(seen, std::multiset<int>(usable.begin(), usable.end()));
      EXPECT_EQ(lines, epochLines(chunks, enc, b, 4, ranks, epoch));  // deterministic for a seed
    }
    EXPECT_NE(epochLines(chunks, enc, b, 4, ranks, 1), epochLines(chunks, enc, b, 4, ranks, 2));
  }
}

TEST(StreamedBatches, ShuffleNoneKeepsFileOrderAndAResumeContinuesExactly) {
  Pairs p = makePairs(300);
  auto vocabs = vocabsFor(p);
  std::unique_ptr<CorpusChunks> written = writeChunks("d", p, 7);
  const CorpusChunks& chunks = *written;
  PairEncoder enc{vocabs, 50, false};
  BatchingOptions none;
  none.miniBatch = 5;
  none.sortBy = "none";
  none.shuffleData = none.shuffleBatches = false;
  std::vector<size_t> lines = epochLines(chunks, enc, none, 3, 1, 1)[0];
  std::vector<size_t> inOrder;  // the usable lines' first source ids, in file order
  Corpus all(chunks, allChunks(chunks), enc, 1);
  for(size_t i = 0; i < all.size(); ++i)
    inOrder.push_back(size_t(all[i].src[0]));
  EXPECT_EQ(lines, inOrder);

  // a resume at (window, batch) gives what the uninterrupted epoch gave from there
  BatchingOptions shuffled;
  shuffled.miniBatch = 4;
  shuffled.maxiBatch = 2;
  shuffled.seed = 5;
  StreamedBatches whole(chunks, enc, shuffled, 3, 2, 1, 2);
  whole.startEpoch(3);
  std::vector<std::vector<int>> batches;
  uint64_t window = 0, batch = 0;
  while(std::optional<Batch> b = whole.next()) {
    batches.push_back(b->srcIds);
    if(batches.size() == 17) {
      window = whole.window();
      batch = whole.batch();
    }
  }
  ASSERT_GT(batches.size(), 25u);
  ASSERT_GT(window, 0u);
  StreamedBatches resumed(chunks, enc, shuffled, 3, 1, 1, 2);
  resumed.startEpoch(3, 0, window, batch);
  std::vector<std::vector<int>> rest;
  while(std::optional<Batch> b = resumed.next())
    rest.push_back(b->srcIds);
  EXPECT_EQ(rest, std::vector<std::vector<int>>(batches.begin() + 17, batches.end()));
}

TEST(StreamedBatches, AnErrorFoundInTheBackgroundComesOutOfNext) {
  Pairs p = makePairs(60);
  write(temp("e.src"), p.src + "ab\n");
  write(temp("e.trg"), p.trg + "x\n");
  auto vocabs = vocabsFor(p);
  CorpusChunks chunks({temp("e.src"), temp("e.trg")}, false, 10, "");
  write(temp("e.src"), p.src + "\xff\xfe\n");  // changed after the pass checked it: found when read
  BatchingOptions none;
  none.shuffleData = none.shuffleBatches = false;
  StreamedBatches s(chunks, PairEncoder{vocabs, 50, false}, none, 2, 1, 0, 1);
  s.startEpoch(1);
  std::string e = errorOf([&] {
    while(s.next()) {
    }
  });
  EXPECT_NE(e.find("line 61 is not valid UTF-8 (byte 1 of the line) (the file changed while training)"),
            std::string::npos) << e;
}

// The threads that prepare a window: each encoding thread joins and leaves once; a cancelled
// encoding stops at its next chunk (training ended or failed: nothing waits for the window) and
// says so with EncodingCancelled, not an error.
TEST(StreamedBatches, AWindowInPreparationIsAbandonedAtItsNextChunk) {
  Pairs p = makePairs(200);
  auto vocabs = vocabsFor(p);
  std::unique_ptr<CorpusChunks> chunks = writeChunks("cancel", p, 10);
  PairEncoder enc{vocabs, 50, false};
  std::atomic<bool> cancelled{false};
  std::atomic<int> started{0}, ended{0};
  EncodingControl control;
  control.onThreadStart = [&] { ++started; };
  control.onThreadEnd = [&] { ++ended; };
  control.cancelled = &cancelled;
  Corpus whole(*chunks, allChunks(*chunks), enc, 3, control);
  EXPECT_EQ(started.load(), 3);
  EXPECT_EQ(ended.load(), 3);
  EXPECT_EQ(whole.size(), 200u);
  cancelled = true;
  EXPECT_THROW(Corpus(*chunks, allChunks(*chunks), enc, 3, control), EncodingCancelled);
  EXPECT_EQ(started.load(), 6);
  EXPECT_EQ(ended.load(), 6) << "a cancelled thread leaves too";
}

// While training waits for a window its workers run at the normal priority (a compiler beside
// would otherwise starve them), SCHED_IDLE while training has batches in hand; a thread that
// joins later takes the priority of the moment; where the process may not leave SCHED_IDLE again
// (unprivileged, without RLIMIT_NICE), the normal priority throughout.
TEST(StreamedBatches, WindowWorkersRunAtTheNormalPriorityOnlyWhileTrainingWaits) {
  WindowWorkers workers;
  std::mutex m;
  std::condition_variable cv;
  int step = 0;
  std::vector<int> policies;
  std::thread worker([&] {
    workers.join();
    auto record = [&](int next) {
      std::unique_lock<std::mutex> lock(m);
      policies.push_back(sched_getscheduler(0));
      step = next;
      cv.notify_all();
      cv.wait(lock, [&] { return step != next; });
    };
    record(1);  // joined while not urgent
    record(3);  // after setUrgent(true)
    record(5);  // after setUrgent(false)
    workers.leave();
  });
  auto waitFor = [&](int s) {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return step == s; });
  };
  auto advance = [&](int s) {
    std::lock_guard<std::mutex> lock(m);
    step = s;
    cv.notify_all();
  };
  waitFor(1);
  workers.setUrgent(true);
  advance(2);
  waitFor(3);
  workers.setUrgent(false);
  advance(4);
  waitFor(5);
  advance(6);
  worker.join();
  int idle = WindowWorkers::mayLeaveIdle() ? SCHED_IDLE : SCHED_OTHER;
  ASSERT_EQ(policies.size(), 3u);
  EXPECT_EQ(policies[0], idle);
  EXPECT_EQ(policies[1], SCHED_OTHER);
  EXPECT_EQ(policies[2], idle);
}

}  // namespace
}  // namespace marian
