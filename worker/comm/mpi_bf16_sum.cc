#include "worker/comm/mpi_bf16_sum.h"

#include <cstdint>

#include "worker/tensor/bf16_wire.h"
#include "worker/comm/mpi_wait.h"

namespace gantry {
namespace {

// MPI's user-function signature: inout[i] = in[i] op inout[i] for *len elements. MPI
// calls it only with the datatype the collective was given (MPI_UINT16_T here).
void SumBf16UserFunction(void* in, void* inout, int* len, MPI_Datatype* /*type*/) {
  SumBf16Into(static_cast<const uint16_t*>(in), static_cast<uint16_t*>(inout), *len);
}

}  // namespace

absl::StatusOr<MPI_Op> CreateBf16SumOp() {
  MPI_Op op = MPI_OP_NULL;
  // Commutative: fp32 addition is, bit for bit, so MPI may combine operands in any order.
  if (absl::Status s = MpiStatus(MPI_Op_create(&SumBf16UserFunction, /*commute=*/1, &op), "MPI_Op_create (bf16 sum)");
      !s.ok()) {
    return s;
  }
  return op;
}

}  // namespace gantry
