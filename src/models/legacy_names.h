#pragma once
// defines: renameLegacyParameters — models saved by earlier versions of this project, before
// its parameters took Marian v1.12's names (encoder_l1_ffn_W1_W, *_Wo_pre_ln_scale, an untied
// decoder_ff_logit_out_W of [dim, vocab]), renamed in memory (and the untied output transposed
// to decoder_ff_logit_out_Wt [vocab, dim]) so that they still load; and isEarlierS2SModel, which
// recognises an s2s model of the earlier layout.
#include <string>
#include <vector>

#include "common/npz.h"

namespace marian {

// Renames the items in place; returns how many it renamed (0 for a model with today's names).
size_t renameLegacyParameters(std::vector<NpzItem>& items);

// Whether the items are an s2s model saved by an earlier version of this program, before s2s
// took Marian's names and function (decoder_att_keys_W, decoder_att_U, decoder_att_v,
// decoder_cell1_W_W, decoder_ff_logit_l1_rnn_W, ...): such a model decodes with the earlier
// implementation (createEarlierS2S), not by renaming, since its function differs.
bool isEarlierS2SModel(const std::vector<NpzItem>& items);

}  // namespace marian
