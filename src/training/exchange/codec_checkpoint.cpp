#include "training/exchange/codec_checkpoint.h"

#include "common/logging.h"

namespace marian {

void saveRankResiduals(const std::vector<ModelState>& all, ModelState& state, const char* prefix) {
  for(size_t r = 0; r < all.size(); ++r)
    state.extras[std::string(prefix) + ".rank" + std::to_string(r)] = all[r].extras.at("residual");
}

std::vector<float> rankResidual(const ModelState& state, const Transport& transport, size_t n, float otherLayoutScale,
                                const char* what, const char* prefix) {
  int self = transport.rank();
  std::string ranks = std::string(prefix) + ".rank";
  auto own = state.extras.find(ranks + std::to_string(self));
  if(state.ranks == transport.size() && own != state.extras.end())
    return own->second;
  // another rank count: what every saved rank held back is owed once, by rank 0
  std::vector<float> total = state.sumOfExtras(ranks, otherLayoutScale);
  if(self != 0 || total.empty())
    return std::vector<float>(n, 0.f);
  LOG(info, "[training] Checkpoint of {} rank(s) resumed on {}: the saved {} are summed into rank 0's", state.ranks,
      transport.size(), what);
  return total;
}

bool hasRankResiduals(const ModelState& state, const char* prefix) {
  return state.hasExtras(std::string(prefix) + ".rank");
}

bool residualsInUnitsOf(const ModelState& state, bool momentum, const Transport& transport, const char* what) {
  if(!hasRankResiduals(state))
    return true;
  bool savedMomentum = state.extras.count(kOneBitServerErrors) > 0;
  if(savedMomentum == momentum) {
    if(!momentum && state.extras.count(kZeroOneServerErrors) && transport.rank() == 0)
      LOG(warn, "[training] The checkpoint's 0/1 Adam server errors do not go into {}: they start at zero", what);
    return true;
  }
  if(transport.rank() == 0)
    LOG(warn, "[training] The checkpoint's allreduce residuals are {}, not {}: {} start at zero",
        savedMomentum ? "1-bit Adam's momentum errors" : "gradient residuals",
        momentum ? "1-bit Adam's momentum errors" : "gradient residuals", what);
  return false;
}

HeldBackOnOneRank HeldBackOnOneRank::from(const ModelState& saved, float beta1) {
  HeldBackOnOneRank h;
  auto servers = saved.extras.find(kOneBitServerErrors), gradientServers = saved.extras.find(kZeroOneServerErrors);
  h.wasMomentum = servers != saved.extras.end();
  h.gradient = saved.sumOfExtras(std::string(kGradientResiduals) + ".rank", h.wasMomentum ? 1.f / float(saved.ranks) : 1.f);
  auto owedServers = h.wasMomentum ? servers : gradientServers;
  if(owedServers == saved.extras.end() || h.gradient.empty())
    return h;
  ABORT_IF(owedServers->second.size() != h.gradient.size(), "1-bit server errors of {} values for {} parameters",
           owedServers->second.size(), h.gradient.size());
  float serverWeight = h.wasMomentum ? 1.f : float(saved.ranks);
  float toGradient = h.wasMomentum ? 1.f / (1.f - beta1) : 1.f;
  for(size_t i = 0; i < h.gradient.size(); ++i)
    h.gradient[i] = (h.gradient[i] + serverWeight * owedServers->second[i]) * toGradient;
  return h;
}

void HeldBackOnOneRank::saveTo(ModelState& state, float beta1) const {
  if(gradient.empty())
    return;
  std::vector<float>& owed = state.extras[std::string(kGradientResiduals) + ".rank0"];
  owed = gradient;
  if(wasMomentum) {  // back to what 1-bit Adam's errors are: momentum, with no server part
    for(float& x : owed)
      x *= 1.f - beta1;
    state.extras[kOneBitServerErrors].assign(owed.size(), 0.f);
  }
}

}  // namespace marian
