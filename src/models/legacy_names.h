#pragma once
// defines: renameLegacyParameters — models saved by earlier versions of this project, before
// its parameters took Marian v1.12's names (encoder_l1_ffn_W1_W, *_Wo_pre_ln_scale, an untied
// decoder_ff_logit_out_W of [dim, vocab]), renamed in memory (and the untied output transposed
// to decoder_ff_logit_out_Wt [vocab, dim]) so that they still load.
#include <string>
#include <vector>

#include "common/npz.h"

namespace marian {

// Renames the items in place; returns how many it renamed (0 for a model with today's names).
size_t renameLegacyParameters(std::vector<NpzItem>& items);

}  // namespace marian
