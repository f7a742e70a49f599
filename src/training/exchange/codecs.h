#pragma once
// declares: the constructors of the exchange codecs, one per scheme, each in its own file of this
// folder; createBucketCodec (codec_factory.cpp) chooses among them.
#include <memory>

#include "training/exchange/bucket_codec.h"

namespace marian {

std::unique_ptr<BucketCodec> createDenseCodec(const CodecSetting& setting);
std::unique_ptr<BucketCodec> createTopkCodec(const CodecSetting& setting);
std::unique_ptr<BucketCodec> createPowerSgdCodec(const CodecSetting& setting);
std::unique_ptr<BucketCodec> createOneBitCodec(const CodecSetting& setting);

}  // namespace marian
