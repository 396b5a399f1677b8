// The MPI reduction of the bf16 all-reduce: a commutative user-defined MPI_Op over
// MPI_UINT16_T buffers of bf16 bits, adding pairs in fp32 and rounding each sum once to
// bf16 (SumBf16Into, vectorised). Used by MpiCommunicator::AllReduceSumBf16 and by the
// all-reduce benchmark for its bare-MPI baselines.
#pragma once

#include <mpi.h>

#include "absl/status/statusor.h"

namespace gantry {

// The datatype that goes with the operation: bf16 bits travel as MPI_UINT16_T.
inline MPI_Datatype Bf16WireDatatype() { return MPI_UINT16_T; }

// Creates the operation (after MPI_Init); free it with MPI_Op_free before MPI_Finalize.
absl::StatusOr<MPI_Op> CreateBf16SumOp();

}  // namespace gantry
