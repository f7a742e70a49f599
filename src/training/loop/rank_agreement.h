#pragma once
// defines: marian::RankSetup, checkRanksAgree — what every rank of a job must share, compared with
// rank 0's before anything is trained. Under mpirun each node reads its own copy of the corpus,
// vocabularies and configuration; a copy that differs (out of date, cut short, another config
// file) would otherwise train silently on other pairs, with other settings, or with another
// number of devices than the parameter server's shards count on.
#include <map>
#include <string>
#include <vector>

#include "comm/transport.h"
#include "tensors/device.h"

namespace marian {

struct RankSetup {
  std::string corpus;        // TrainingData::corpusIdentity and extrasIdentity (lines, each file's bytes and CRC-32)
  std::string vocabularies;  // TrainingData::vocabIdentity
  std::string pretrained;    // --pretrained-model's ContentHash ("" without one)
  std::string batching;      // BatchingOptions::describe(): the cut (--mini-batch-fit's sizes for --workspace)
  size_t devices = 0;        // this rank's devices (the ids may differ per node, the count not)
  std::vector<std::string> gpus;  // this rank's GPUs, "PCI-bus-id of host H" each (none on CPU devices)
  std::map<std::string, std::string> options;  // Options::sharedByRanks
};

// How `other` (of rank `rank`) differs from rank 0's `root`, a line per difference; empty when it
// does not.
std::string setupDifferences(const RankSetup& root, const RankSetup& other, int rank);

// The GPUs that more than one rank trains on, a line each ("GPU 0000:1a:00.0 of host n1: ranks 0,
// 1"); empty when none is shared. gpusByRank[r]: rank r's RankSetup::gpus. Marian's way is a rank
// a node with all of its GPUs (--devices 0 1 2 3); ranks that each list every GPU of their node
// (mpirun -np 4 on one node with --devices 0 1 2 3) would put four replicas on each GPU.
std::string gpusSharedByRanks(const std::vector<std::vector<std::string>>& gpusByRank);
// The GPUs among `devices` as RankSetup::gpus names them (each one's bus id and this host's name).
std::vector<std::string> gpusOf(const std::vector<Device>& devices);

// Returns on every rank once rank 0 has found every rank's setup equal to its own (and warned of
// GPUs that several ranks share: legal, but each runs at a fraction of its speed). Otherwise rank
// 0 throws an Error naming each rank that differs and how (the trainer then ends every rank with
// it). Collective: every rank of `ranks` calls it, before any other exchange.
void checkRanksAgree(Transport& ranks, const RankSetup& mine);

}  // namespace marian
