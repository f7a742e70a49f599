#pragma once
// runOnRanks: a test body on each of P ranks of an InProcessNetwork, one thread per rank. A
// rank that fails an assertion stops the others (they would wait for it forever); an error that
// any rank throws fails the test.
#include <gtest/gtest.h>

#include <functional>

#include "comm/in_process_transport.h"
#include "common/format.h"

namespace marian {

inline void runOnRanks(int P, const std::function<void(Transport&)>& body) {
  InProcessNetwork network(P);
  try {
    network.run([&](Transport& t) {
      body(t);
      if(::testing::Test::HasFatalFailure())
        t.abort(format("rank {} stopped at a failed assertion", t.rank()));
    });
  } catch(const std::exception& e) {
    if(!::testing::Test::HasFatalFailure())  // not only the echo of a failed assertion
      ADD_FAILURE() << e.what();
  }
}

}  // namespace marian
