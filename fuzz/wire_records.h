#pragma once
// The records ranks send each other, given hostile bytes: the first byte picks the reader (0 a
// parameter-server message, 1 a packed model state, 2 an allreduce sparse record, 3 a float
// array), the rest is the record. Shared by fuzz_wire.cpp and HostileInput.RegressionInputs.
#include <cstdint>
#include <vector>

#include "comm/allreduce/packing.h"
#include "comm/ps/message.h"
#include "common/byte_record.h"
#include "common/error.h"
#include "optimizers/model_state.h"

namespace marian::fuzz {

// Reads the record; one that reads must pack to bytes that read back to the same bytes. A
// refused record is a marian::Error; a broken round trip is a std::logic_error.
inline void readWireRecord(const uint8_t* data, size_t size) {
  if(size == 0)
    return;
  std::vector<char> bytes(reinterpret_cast<const char*>(data) + 1, reinterpret_cast<const char*>(data) + size);
  auto roundTrips = [](const std::vector<char>& packed, const std::vector<char>& again, const char* what) {
    if(packed != again)
      throw std::logic_error(std::string(what) + ": a record read back does not pack to the same bytes");
  };
  switch(data[0] % 4) {
    case 0: {
      std::vector<char> packed = Message::unpack(bytes).pack();
      roundTrips(packed, bytes, "Parameter-server message");
      break;
    }
    case 1: {  // names that repeat collapse in its maps: compare the second round
      std::vector<char> packed = ModelState::unpack(bytes).pack();
      roundTrips(ModelState::unpack(packed).pack(), packed, "Model state");
      break;
    }
    case 2: roundTrips(packSparse(unpackSparse(bytes)), bytes, "Sparse record"); break;
    default: roundTrips(packArray(unpackArray<float>(bytes, "Float array")), bytes, "Float array"); break;
  }
}

}  // namespace marian::fuzz
