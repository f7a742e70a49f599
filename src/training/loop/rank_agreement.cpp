#include "training/loop/rank_agreement.h"

#include <set>

#include <unistd.h>

#include "comm/message_tags.h"
#include "common/byte_record.h"
#include "common/error.h"
#include "common/format.h"
#include "common/logging.h"
#include "common/options.h"
#include "tensors/backend.h"

namespace marian {

namespace {

constexpr size_t kOptionsNamed = 8;  // a config file of its own differs everywhere: the first few say enough

std::vector<char> pack(const RankSetup& s) {
  ByteWriter w;
  w.putString(s.corpus);
  w.putString(s.vocabularies);
  w.putString(s.pretrained);
  w.putString(s.batching);
  w.put<uint64_t>(s.devices);
  w.put<uint64_t>(s.gpus.size());
  for(const std::string& gpu : s.gpus)
    w.putString(gpu);
  w.put<uint64_t>(s.options.size());
  for(const auto& [key, value] : s.options) {
    w.putString(key);
    w.putString(value);
  }
  return w.take();
}

RankSetup unpack(const std::vector<char>& bytes) {
  ByteReader r(bytes, "A rank's setup");
  RankSetup s;
  s.corpus = r.getString();
  s.vocabularies = r.getString();
  s.pretrained = r.getString();
  s.batching = r.getString();
  s.devices = size_t(r.get<uint64_t>());
  uint64_t gpus = r.get<uint64_t>();
  for(uint64_t i = 0; i < gpus; ++i)
    s.gpus.push_back(r.getString());
  uint64_t n = r.get<uint64_t>();
  for(uint64_t i = 0; i < n; ++i) {
    std::string key = r.getString();
    s.options[key] = r.getString();
  }
  r.expectEnd();
  return s;
}

std::string optionDifferences(const std::map<std::string, std::string>& root,
                              const std::map<std::string, std::string>& other) {
  std::set<std::string> keys;
  for(const auto& kv : root)
    keys.insert(kv.first);
  for(const auto& kv : other)
    keys.insert(kv.first);
  auto valueIn = [](const std::map<std::string, std::string>& m, const std::string& key) {
    auto it = m.find(key);
    return it == m.end() ? std::string("not set") : it->second;
  };
  std::string named;
  size_t differ = 0;
  for(const std::string& key : keys) {
    std::string mine = valueIn(other, key), root0 = valueIn(root, key);
    if(mine == root0)
      continue;
    if(++differ <= kOptionsNamed)
      named += format("{}--{} {} (rank 0: {})", named.empty() ? "" : ", ", key, mine, root0);
  }
  if(differ > kOptionsNamed)
    named += format(" and {} more", differ - kOptionsNamed);
  return named;
}

}  // namespace

std::string setupDifferences(const RankSetup& root, const RankSetup& other, int rank) {
  std::vector<std::string> lines;
  if(other.corpus != root.corpus)
    lines.push_back(format("its training corpus ({}) is not rank 0's ({})", other.corpus, root.corpus));
  if(other.vocabularies != root.vocabularies)
    lines.push_back(format("its vocabularies ({}) are not rank 0's ({})", other.vocabularies, root.vocabularies));
  if(other.pretrained != root.pretrained)
    lines.push_back(format("its --pretrained-model ({}) is not rank 0's ({})", other.pretrained.empty() ? "none" : other.pretrained,
                           root.pretrained.empty() ? "none" : root.pretrained));
  if(other.batching != root.batching)
    lines.push_back(format("it cuts its batches with {} where rank 0 cuts them with {}", other.batching, root.batching));
  if(other.devices != root.devices)
    lines.push_back(format("it trains on {} device(s), rank 0 on {}", other.devices, root.devices));
  std::string options = optionDifferences(root.options, other.options);
  if(!options.empty())
    lines.push_back("its options differ: " + options);
  std::string said;
  for(const std::string& l : lines)
    said += format("{}rank {}: {}", said.empty() ? "" : "\n", rank, l);
  return said;
}

std::string gpusSharedByRanks(const std::vector<std::vector<std::string>>& gpusByRank) {
  std::map<std::string, std::vector<int>> ranksOf;
  for(size_t r = 0; r < gpusByRank.size(); ++r)
    for(const std::string& gpu : std::set<std::string>(gpusByRank[r].begin(), gpusByRank[r].end()))
      ranksOf[gpu].push_back(int(r));
  std::string said;
  for(const auto& [gpu, ranks] : ranksOf) {
    if(ranks.size() < 2)
      continue;
    std::string list;
    for(int r : ranks)
      list += (list.empty() ? "" : ", ") + std::to_string(r);
    said += format("{}GPU {}: ranks {}", said.empty() ? "" : "\n", gpu, list);
  }
  return said;
}

std::vector<std::string> gpusOf(const std::vector<Device>& devices) {
  char host[256] = "";
  gethostname(host, sizeof(host) - 1);
  std::vector<std::string> gpus;
  for(const Device& d : devices)
    if(d.type == DeviceType::gpu) {
      std::string bus = gpuBusId(d.id);
      gpus.push_back((bus.empty() ? "number " + std::to_string(d.id) : bus) + " of host " + host);
    }
  return gpus;
}

void checkRanksAgree(Transport& ranks, const RankSetup& mine) {
  if(ranks.size() < 2)
    return;
  const char* what = "every rank's setup (data, batches, devices, options)";
  if(ranks.rank() != 0) {
    ranks.send(Channel::collective, 0, kRankSetupTag, pack(mine), ranks.peerTimeout());
    ranks.broadcastFromRoot(1, ranks.peerTimeout(), what);  // rank 0's verdict: it ends the job otherwise
    return;
  }
  std::string differences;
  std::vector<std::vector<std::string>> gpusByRank = {mine.gpus};
  for(int r = 1; r < ranks.size(); ++r) {
    Transport::Message m = ranks.recv(Channel::collective, r, kRankSetupTag, ranks.peerTimeout(), what);
    RankSetup theirs = unpack(m.bytes);
    std::string d = setupDifferences(mine, theirs, r);
    if(!d.empty())
      differences += (differences.empty() ? "" : "\n") + d;
    gpusByRank.push_back(std::move(theirs.gpus));
  }
  ABORT_IF(!differences.empty(),
           "The ranks of this job do not train alike; every node must hold the same copy of the corpus, the "
           "vocabularies and a pretrained model, cut the same batches, train on as many devices and run the same "
           "options (only a node's own may differ: {}):\n{}",
           Options::ofANode(), differences);
  std::string shared = gpusSharedByRanks(gpusByRank);
  if(!shared.empty())
    LOG(warn, "[training] Several ranks train on the same GPU, each at a fraction of its speed (Marian's way is one "
              "rank a node with all of the node's GPUs in --devices; or give each rank its own with "
              "CUDA_VISIBLE_DEVICES):\n{}",
        shared);
  ranks.broadcastFromRoot(1, ranks.peerTimeout(), what);
}

}  // namespace marian
