#include "training/ps/ps_device_client.h"

#include "common/timeline.h"
#include "tensors/kernels.h"

namespace marian {

PsDeviceClient::PsDeviceClient(int id, Device device, ShardLayout layout, Transport& transport, ServerShard& localShard,
                               const PsClientSettings& settings, uint64_t seed, const std::vector<float>& initial,
                               const std::function<std::unique_ptr<Optimizer>()>& makeOptimizer, std::mutex* rankMutex,
                               std::function<void(std::exception_ptr)> onError)
    : settings_(settings), rankMutex_(rankMutex),
      shardClient_(std::make_unique<ShardClient>(id, layout, &transport, &localShard, settings.compression,
                                                 settings.clients, settings.timeout, seed, device)) {
  LocalGradients local = settings_.compression.local;
  if(settings_.localOptimizer || local != LocalGradients::off)
    optimizer_ = makeOptimizer();
  if(local == LocalGradients::partial)
    unsent_ = std::make_unique<FlatBuffer>(device, Type::float32, initial.size());
  if(settings_.overlap)
    buffers_ = std::make_unique<DoubleBuffers>(
        device, initial, [this](Tensor grads, Tensor params, float lr) { exchangeNow(grads, params, lr); },
        settings_.maxDelay, settings_.applySummed, std::move(onError),
        "client " + std::to_string(id) + " communication");
}

void PsDeviceClient::exchangeNow(Tensor grads, Tensor params, float lr, Tensor unsent) {
  timeline::Span span("exchange", "comm");
  std::unique_lock<std::mutex> single;
  if(rankMutex_)
    single = std::unique_lock<std::mutex>(*rankMutex_);
  shardClient_->exchange(grads, params, lr, unsent);
}

void PsDeviceClient::step(Tensor grads, Tensor values, float lr) {
  lastLr_ = lr;
  LocalGradients local = settings_.compression.local;
  if(settings_.localOptimizer || local == LocalGradients::sum)  // move locally too, between synchronisations
    optimizer_->update(values, grads, lr);
  if(local == LocalGradients::partial) {  // the exchange, then the own unsent part
    exchangeNow(grads, values, lr, unsent_->all());
    optimizer_->update(values, unsent_->all(), lr);
  } else if(buffers_) {
    buffers_->step(grads, values, lr);
  } else {
    exchangeNow(grads, values, lr);
  }
}

void PsDeviceClient::flush() {
  if(buffers_)
    buffers_->flush(lastLr_);
}

void PsDeviceClient::stop() {
  if(buffers_)
    buffers_->stop();
}

void PsDeviceClient::restoreFrom(const ModelState& state, bool sameClients, Tensor values) {
  shardClient_->restoreFrom(state, sameClients);
  // what this client holds: with delta dropping exactly what its server recorded as sent
  auto view = state.extras.find(ServerShard::viewName(shardClient_->id()));
  const std::vector<float>& params = sameClients && view != state.extras.end() ? view->second : state.values;
  kernels::fromHost(values, params);
  if(buffers_)
    buffers_->reset(params);
}

}  // namespace marian
