#pragma once
// defines: the training's precision from Marian's --precision and --fp16: the type the matrix
// products of forward and backward read (tensors/product_precision.h); optimization (master
// weights, optimizer state, gradients' exchange) stays float32.
#include <vector>

#include "common/options.h"
#include "tensors/device.h"
#include "tensors/product_precision.h"

namespace marian {

// --precision's first type (float16 with --fp16), after checking the option: a second type other
// than float32 is an error (master weights stay float32), as is a type the devices cannot run at
// speed (bfloat16 on a CPU without AVX512-BF16 or AMX, float16 on a CPU): never a silent fallback.
ProductType productTypeFromOptions(const Options& o, const std::vector<Device>& devices);

}  // namespace marian
