# ctest wrapper (cmake -P): runs mpi_collectives_check with a stuck rank under mpirun and
# passes when the job fails fast with a message that names the stuck rank (and only it).
#   -DMPIEXEC=... -DPROGRAM=... -DNP=2 -DSTUCK_RANK=1 -DEXPECT="rank 1 did not arrive" [-DMAX_SECONDS=20]
#   [-DDTYPE=bf16]   (the stuck collective is then a bf16 all-reduce)
foreach(var MPIEXEC PROGRAM NP STUCK_RANK EXPECT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "expect_stuck_rank.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT DEFINED MAX_SECONDS)
  set(MAX_SECONDS 20)
endif()

string(TIMESTAMP start "%s" UTC)
execute_process(
  COMMAND ${MPIEXEC} --allow-run-as-root --oversubscribe -np ${NP} ${PROGRAM} --stuck-rank ${STUCK_RANK} ${DTYPE}
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE out
  TIMEOUT 50)
string(TIMESTAMP end "%s" UTC)
math(EXPR seconds "${end} - ${start}")
message(STATUS "mpirun exit: ${rc} after ~${seconds} s; output:\n${out}")

if(rc EQUAL 0)
  message(FATAL_ERROR "mpirun exited 0, but a rank was stuck past the timeout")
endif()
string(FIND "${out}" "${EXPECT}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the output does not contain \"${EXPECT}\"")
endif()
if(seconds GREATER_EQUAL MAX_SECONDS)
  message(FATAL_ERROR "the job took ${seconds} s to fail; expected under ${MAX_SECONDS} s")
endif()
