// Writes the seed corpora of the fuzz targets into DIR/<target>/ (fuzz/corpus/ is what it
// wrote): small real files made by the project's own writers, e.g.
//   build-fuzz/fuzz/fuzz_make_seeds fuzz/corpus
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "common/npz.h"
#include "wire_records.h"
#include "zip_writer.h"
#include "data/vocab.h"
#include "training/loop/checkpoint.h"

using namespace marian;
using fuzz::put16;
using fuzz::put32;
using fuzz::put64;

namespace {

std::string dir;

void write(const std::string& target, const std::string& name, const std::string& bytes) {
  std::filesystem::create_directories(dir + "/" + target);
  std::ofstream(dir + "/" + target + "/" + name, std::ios::binary) << bytes;
}

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// One stored entry in zip64 form: its sizes and offset in a zip64 extra field, the directory
// found through a zip64 end record and its locator (as zip tools write files over 4 GiB).
std::string zip64Zip(const std::string& name, const std::string& npy) {
  std::string extra;
  put16(extra, 1);
  put16(extra, 24);
  put64(extra, npy.size());
  put64(extra, npy.size());
  put64(extra, 0);
  std::string fields;
  put16(fields, 45);
  put16(fields, 0);
  put16(fields, 0);
  put16(fields, 0);
  put16(fields, 0x21);
  put32(fields, uint32_t(crc32(0, reinterpret_cast<const Bytef*>(npy.data()), uInt(npy.size()))));
  put32(fields, 0xFFFFFFFF);
  put32(fields, 0xFFFFFFFF);
  put16(fields, uint32_t(name.size()));
  put16(fields, uint32_t(extra.size()));
  std::string out, central, end;
  put32(out, 0x04034b50);
  out += fields + name + extra + npy;
  put32(central, 0x02014b50);
  put16(central, 45);
  central += fields;
  for(int i = 0; i < 3; ++i)
    put16(central, 0);
  put32(central, 0);
  put32(central, 0xFFFFFFFF);
  central += name + extra;
  uint64_t cdOffset = out.size(), z64 = out.size() + central.size();
  put32(end, 0x06064b50);
  put64(end, 44);
  put16(end, 45);
  put16(end, 45);
  put32(end, 0);
  put32(end, 0);
  put64(end, 1);
  put64(end, 1);
  put64(end, central.size());
  put64(end, cdOffset);
  put32(end, 0x07064b50);
  put32(end, 0);
  put64(end, z64);
  put32(end, 1);
  put32(end, 0x06054b50);
  put16(end, 0);
  put16(end, 0);
  put16(end, 0xFFFF);
  put16(end, 0xFFFF);
  put32(end, 0xFFFFFFFF);
  put32(end, 0xFFFFFFFF);
  put16(end, 0);
  return out + central + end;
}

}  // namespace

int main(int argc, char** argv) {
  if(argc != 2) {
    std::cerr << "usage: fuzz_make_seeds DIR\n";
    return 2;
  }
  dir = argv[1];
  std::string tmp = std::filesystem::temp_directory_path().string() + "/marian-seeds.npz";

  // npz: arrays of each dtype and rank, a checkpoint, a deflated array
  float w[6] = {0.5f, -1, 2, 3.25f, 0, 1e-3f};
  int ids[3] = {7, -1, 0};
  std::string text = "type: transformer\n";
  writeNpz(tmp, {npzFloat32("decoder_W", {2, 3}, w), npzInt32("ids", {3}, ids), npzFloat32("scalar", {}, w),
                 npzFloat32("empty", {0, 4}, w),
                 NpzItem{"special:model.yml", {text.size()}, "|u1", std::vector<char>(text.begin(), text.end())}});
  write("npz", "model.npz", readAll(tmp));
  ModelState m;
  m.n = 6;
  m.values.assign(w, w + 6);
  m.smoothed.assign(6, 0.25f);
  m.optimizer["adam_mt"].assign(6, 0.f);
  m.optimizer["adam_vt"].assign(6, 1.f);
  m.optimizerSteps = {{Range{0, 3}, 10}, {Range{3, 3}, 11}};
  m.extras["dropping-residual.client0"].assign(6, 0.1f);
  m.counters["dropping-calls.client0"] = 5;
  TrainingState progress;
  progress.epochs = 2;
  progress.batches = 30;
  progress.batchesEpoch = 10;
  progress.corpusBatchesEpoch = 10;
  progress.seed = 1234;
  progress.validators["cross-entropy"] = ValidatorState{1.5, true, 1};
  progress.validators["bleu"] = ValidatorState{20.25, true, 0};
  writeCheckpoint(tmp, m, progress, "type: transformer\ndim-emb: 8\n");
  write("npz", "checkpoint.npz", readAll(tmp));
  writeNpz(tmp, {npzFloat32("decoder_W", {2, 3}, w)});  // one stored entry: its .npy lies between the headers
  std::string one = readAll(tmp), name = "decoder_W.npy";
  std::string npy = one.substr(30 + name.size(), one.size() - 2 * name.size() - 30 - 46 - 22);
  write("npz", "deflated.npz", fuzz::zipOf({{name, npy, true}}));
  write("npz", "zip64.npz", zip64Zip(name, npy));
  std::filesystem::remove(tmp);

  // vocab: as marian-vocab writes one, and as JSON
  write("vocab", "vocab.yml", buildYamlVocab(std::vector<std::string>{"the cat sat on the mat", "a b c : - [x] {y} # 'q' null ~ yes 1"}, 0));
  write("vocab", "vocab.json", "{\"</s>\": 0, \"<unk>\": 1, \"the\": 2, \"\\u00e9t\\u00e9\": 3}\n");

  // options: a training config, a decoder config, a model's embedded config with its NUL
  write("options", "train.yml", readAll(std::string(MARIAN_SOURCE_DIR) + "/examples/synthetic/train.yml"));
  write("options", "decoder.yml",
        "models:\n  - model.npz\nvocabs:\n  - vocab.src.yml\n  - vocab.trg.yml\nbeam-size: 6\nnormalize: 0.6\n"
        "word-penalty: 0\nmini-batch: 16\nmaxi-batch: 100\n");
  write("options", "model.yml", std::string("type: s2s\ndim-emb: 64\ndim-vocabs: [100, 120]\nenc-depth: 1\n") + '\0');
  write("options", "dump.yml", "dump-config: true\nafter-epochs: 3\nvalid-metrics: [bleu, cross-entropy]\n");

  // corpus: mode byte (0 plain, 1 gzip, 2 raw as .gz, 3 gzip cut), max length, crop; src NUL trg
  std::string lines = std::string("the cat sat\r\non the mat\n\na b c a b c a b c\n") + '\0' + "b a\nc\n\nthe the\n";
  for(int mode = 0; mode < 4; ++mode)
    write("corpus", "lines-" + std::to_string(mode), std::string(1, char(mode)) + char(5) + char(mode & 1) + lines);

  // progress: a progress file, a fresh one, a checkpoint's special:state.yml
  write("progress", "progress.yml", progress.toYaml());
  write("progress", "fresh.yml", TrainingState().toYaml());
  for(const NpzItem& item : readNpz(dir + "/npz/checkpoint.npz"))
    if(item.name == "special:state.yml")
      write("progress", "state.yml", std::string(item.bytes.begin(), item.bytes.end()));
  // wire: reader byte (wire_records.h), then a record as the ranks send it
  auto wire = [](char reader, const std::vector<char>& record) { return std::string(1, reader) + std::string(record.begin(), record.end()); };
  ModelState state;
  state.n = 4;
  state.values = {1.f, -2.f, 0.5f, 3.f};
  state.optimizer["adam-m"] = {0.1f, 0.2f, 0.3f, 0.4f};
  state.optimizerSteps = {{Range{0, 4}, 7}};
  state.counters["ps-version"] = 12;
  Message push;
  push.header.kind = MessageKind::pushSparse;
  push.header.client = 1;
  push.header.lr = 1e-3f;
  push.sparse = {{0, 3}, {0.25f, -1.f}};
  Message reply;
  reply.header.kind = MessageKind::replyDense;
  reply.dense = {1.f, 2.f, 3.f};
  Message stateReply;
  stateReply.header.kind = MessageKind::replyState;
  stateReply.blob = state.pack();
  write("wire", "push-sparse", wire(0, push.pack()));
  write("wire", "reply-dense", wire(0, reply.pack()));
  write("wire", "reply-state", wire(0, stateReply.pack()));
  write("wire", "model-state", wire(1, state.pack()));
  write("wire", "sparse", wire(2, packSparse(push.sparse)));
  write("wire", "floats", wire(3, packArray(reply.dense)));
  std::cout << "seeds written to " << dir << "\n";
  return 0;
}
