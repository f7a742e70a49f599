#include "training/ps/double_buffers.h"

#include "common/float_mode.h"
#include "common/timeline.h"
#include "tensors/backend.h"
#include "tensors/kernels.h"

namespace marian {

DoubleBuffers::DoubleBuffers(Device device, const std::vector<float>& initial, Exchange exchange, size_t maxDelay,
                             bool applySummed, std::function<void(std::exception_ptr)> onError,
                             const std::string& threadName)
    : device_(device), exchange_(std::move(exchange)), maxDelay_(maxDelay), applySummed_(applySummed),
      onError_(std::move(onError)), threadName_(threadName),
      sum_(std::make_unique<FlatBuffer>(device, Type::float32, initial.size())),  // FlatBuffers start zeroed
      grads_(std::make_unique<FlatBuffer>(device, Type::float32, initial.size())),
      params_(std::make_unique<FlatBuffer>(device, Type::float32, initial.size())) {
  kernels::fromHost(params_->all(), initial);
  thread_ = std::thread([this] { run(); });
}

DoubleBuffers::~DoubleBuffers() { stop(); }

void DoubleBuffers::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if(thread_.joinable())
    thread_.join();
}

void DoubleBuffers::run() {
  flushDenormalsToZero();
  timeline::nameThisThread(threadName_);
  setDeviceLane(1);  // on a GPU: a stream of its own, beside the compute thread's
  for(;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return busy_ || stopping_; });
      if(stopping_ && !busy_)
        return;
    }
    try {
      exchange_(grads_->all(), params_->all(), lr_);
      backendFor(device_).synchronize();  // nothing of this lane may still run on the buffers it hands back
    } catch(...) {
      onError_(std::current_exception());
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      busy_ = false;
    }
    changed_.notify_all();
  }
}

void DoubleBuffers::waitIdle() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !busy_; });
}

void DoubleBuffers::step(Tensor grads, Tensor values, float lr) {
  kernels::add(sum_->all(), grads);
  ++sinceSync_;
  std::unique_lock<std::mutex> lock(mutex_);
  if(maxDelay_ && sinceSync_ >= maxDelay_)
    changed_.wait(lock, [&] { return !busy_; });  // bounded staleness: wait for the exchange
  if(busy_)
    return;
  kernels::copy(values, params_->all());
  if(applySummed_)
    kernels::add(values, sum_->all(), -lr);
  std::swap(grads_, sum_);
  kernels::fill(sum_->all(), 0.f);
  backendFor(device_).synchronize();  // the sum is complete and the parameters copied
  lr_ = lr;
  busy_ = true;
  sinceSync_ = 0;
  lock.unlock();
  changed_.notify_all();
}

void DoubleBuffers::flush(float lr) {
  waitIdle();
  exchange_(sum_->all(), params_->all(), lr);
}

void DoubleBuffers::reset(const std::vector<float>& params) {
  waitIdle();
  kernels::fromHost(params_->all(), params);
  kernels::fill(sum_->all(), 0.f);
}

}  // namespace marian
