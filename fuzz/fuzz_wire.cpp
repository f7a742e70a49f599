// What one rank sends another, from a hostile or broken peer: parameter-server messages, packed
// model states, allreduce records (wire_records.h says how the first byte picks one).
#include "fuzz_common.h"
#include "wire_records.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  marian::fuzz::errorsAllowed([&] { marian::fuzz::readWireRecord(data, size); });
  return 0;
}
