#include "comm/allreduce/algorithms.h"
#include "comm/allreduce/onebit.h"
#include "common/options.h"
#include "training/exchange/codecs.h"

namespace marian {

bool sendsOneBit(const Options& o) { return o.get<bool>("onebit-adam") || o.get<bool>("zero-one-adam"); }

void validateAllreduceOptions(const Options& o) {
  std::string name = o.get<std::string>("sparse-allreduce");
  ABORT_IF(!findAllreduce(name), "--sparse-allreduce '{}' is unknown; available:{}", name,
           describeAllreduceAlgorithms());
  float density = o.get<float>("compression-density");
  bool powerSgd = o.get<int>("powersgd-rank") > 0, local = o.get<std::string>("local-gradients") != "off";
  ABORT_IF(powerSgd && density < 1.f, "--powersgd-rank and --compression-density < 1 are two compressions: give one");
  ABORT_IF(powerSgd && local,
           "--local-gradients needs top-k compression (--compression-density), not --powersgd-rank");
  bool zeroOne = o.get<bool>("zero-one-adam");
  if(sendsOneBit(o)) {
    const char* name = zeroOne ? "--zero-one-adam" : "--onebit-adam";
    ABORT_IF(zeroOne && o.get<bool>("onebit-adam"),
             "--zero-one-adam and --onebit-adam: give one (0/1 Adam averages the momentum as 1-bit Adam does)");
    ABORT_IF(density < 1.f || powerSgd || local,
             "{} compresses by itself: not with --compression-density < 1, --powersgd-rank or --local-gradients", name);
    ABORT_IF(o.get<std::string>("optimizer") != "adam", "{} needs --optimizer adam", name);
    ABORT_IF(o.get<int>("adam-freeze-variance-after") < 1,
             "{} needs --adam-freeze-variance-after N >= 1: the variance frozen after N updates and the momentum "
             "sent in 1 bit from then on", name);
    ABORT_IF(o.get<bool>("onebit-update-direction") && o.get<int>("onebit-block-size") > 0,
             "--onebit-update-direction takes its scale per parameter: not with --onebit-block-size");
    ABORT_IF(zeroOne && o.get<int>("adam-variance-update-scaler") < 1,
             "--zero-one-adam needs --adam-variance-update-scaler kappa >= 1 (the paper's and DeepSpeed's: 16)");
  }
  ABORT_IF(o.get<bool>("onebit-update-direction") && !sendsOneBit(o),
           "--onebit-update-direction is a setting of --onebit-adam or --zero-one-adam");
  OneBitScale scale = oneBitScaleFromName(o.get<std::string>("onebit-scale"));
  ABORT_IF(scale != OneBitScale::rms && !sendsOneBit(o),
           "--onebit-scale is a setting of --onebit-adam or --zero-one-adam");
}

std::unique_ptr<BucketCodec> createBucketCodec(const CodecSetting& s) {
  if(sendsOneBit(s.options))
    return createOneBitCodec(s);
  if(s.options.get<int>("powersgd-rank") > 0)
    return createPowerSgdCodec(s);
  if(s.compression.compresses())
    return createTopkCodec(s);
  return createDenseCodec(s);
}

}  // namespace marian
