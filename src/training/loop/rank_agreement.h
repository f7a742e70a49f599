#pragma once
// defines: marian::RankSetup, checkRanksAgree — what every rank of a job must share, compared with
// rank 0's before anything is trained. Under mpirun each node reads its own copy of the corpus,
// vocabularies and configuration; a copy that differs (out of date, cut short, another config
// file) would otherwise train silently on other pairs, with other settings, or with another
// number of devices than the parameter server's shards count on.
#include <map>
#include <string>

#include "comm/transport.h"

namespace marian {

struct RankSetup {
  std::string corpus;        // TrainingData::corpusIdentity (lines, and each file's bytes and CRC-32)
  std::string vocabularies;  // TrainingData::vocabIdentity
  std::string pretrained;    // --pretrained-model's ContentHash ("" without one)
  std::string batching;      // BatchingOptions::describe(): the cut (--mini-batch-fit's sizes for --workspace)
  size_t devices = 0;        // this rank's devices (the ids may differ per node, the count not)
  std::map<std::string, std::string> options;  // Options::sharedByRanks
};

// How `other` (of rank `rank`) differs from rank 0's `root`, a line per difference; empty when it
// does not.
std::string setupDifferences(const RankSetup& root, const RankSetup& other, int rank);

// Returns on every rank once rank 0 has found every rank's setup equal to its own. Otherwise rank
// 0 throws an Error naming each rank that differs and how (the trainer then ends every rank with
// it). Collective: every rank of `ranks` calls it, before any other exchange.
void checkRanksAgree(Transport& ranks, const RankSetup& mine);

}  // namespace marian
