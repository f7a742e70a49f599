// main() of the tests that run under mpirun: starts MPI before the tests and makes the job fail
// when any rank failed (mpirun reports only the exit status it sees first).
#include <gtest/gtest.h>
#include <mpi.h>

#include "comm/mpi_transport.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  marian::MpiTransport::start(&argc, &argv);
  int result = RUN_ALL_TESTS();
  int worst = 0;
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}
