#include "models/legacy_names.h"

#include <regex>
#include <set>

#include "common/error.h"

namespace marian {

namespace {

// earlier name -> Marian's (models/transformer.h: LayerFFN's denseInline, preProcess's "_pre")
const std::vector<std::pair<std::regex, std::string>>& renames() {
  static const std::vector<std::pair<std::regex, std::string>> all = {
      {std::regex("^(.*_l[0-9]+)_ffn_W([12])_W$"), "$1_ffn_W$2"},
      {std::regex("^(.*_l[0-9]+)_ffn_W([12])_b$"), "$1_ffn_b$2"},
      {std::regex("^(.*_l[0-9]+)_ffn_pre_ln_(scale|bias)$"), "$1_ffn_ffn_ln_$2_pre"},
      {std::regex("^(.*_l[0-9]+)_ffn_ln_(scale|bias)$"), "$1_ffn_ffn_ln_$2"},
      {std::regex("^(.*)_Wo_pre_ln_(scale|bias)$"), "$1_Wo_ln_$2_pre"},
      {std::regex("^(encoder|decoder)_emb_ln_(scale|bias)$"), "$1_emb_ln_$2_pre"},
  };
  return all;
}

// [rows, cols] float32 -> [cols, rows]
void transpose(NpzItem& item) {
  ABORT_IF(item.shape.size() != 2 || item.descr != "<f4", "Parameter '{}' of an earlier version is not a float32 matrix",
           item.name);
  size_t rows = item.shape[0], cols = item.shape[1];
  std::vector<char> out(item.bytes.size());
  const float* in = reinterpret_cast<const float*>(item.bytes.data());
  float* to = reinterpret_cast<float*>(out.data());
  for(size_t r = 0; r < rows; ++r)
    for(size_t c = 0; c < cols; ++c)
      to[c * rows + r] = in[r * cols + c];
  item.bytes = std::move(out);
  item.shape = {cols, rows};
}

}  // namespace

size_t renameLegacyParameters(std::vector<NpzItem>& items) {
  size_t renamed = 0;
  for(NpzItem& item : items) {
    if(item.name == "decoder_ff_logit_out_W") {
      transpose(item);
      item.name = "decoder_ff_logit_out_Wt";
      ++renamed;
      continue;
    }
    for(const auto& [from, to] : renames())
      if(std::regex_match(item.name, from)) {
        item.name = std::regex_replace(item.name, from, to);
        ++renamed;
        break;
      }
  }
  return renamed;
}

bool isEarlierS2SModel(const std::vector<NpzItem>& items) {
  // names only the earlier s2s had (models/s2s_legacy.cpp); Marian's s2s has decoder_W_comb_att,
  // decoder_Wc_att, decoder_U_att, decoder_cell1_W and decoder_ff_logit_l1_W0 instead
  static const std::set<std::string> earlier = {"decoder_att_keys_W", "decoder_att_U", "decoder_att_v",
                                                "decoder_cell1_W_W", "decoder_ff_logit_l1_rnn_W"};
  for(const NpzItem& item : items)
    if(earlier.count(item.name))
      return true;
  return false;
}

}  // namespace marian
