# Bounded waits for the shell tests (sourced): every wait has a limit.
#   wait_for LIMIT_S COMMAND...   polls COMMAND every 0.2 s until it succeeds (0) or
#                                 LIMIT_S seconds pass (1)
#   since T0                      seconds since T0 (date +%s.%N), to 0.1 s
#   now_us                        microseconds since the epoch (EPOCHREALTIME: SECONDS
#                                 counts whole seconds)

now_us() { echo "${EPOCHREALTIME/./}"; }

since() { awk -v t0="$1" -v t1="$(date +%s.%N)" 'BEGIN { printf "%.1f", t1 - t0 }'; }

wait_for() {
  local limit=$1; shift
  local end=$(( $(now_us) + limit * 1000000 ))
  until "$@"; do (( $(now_us) < end )) || return 1; sleep 0.2; done
}
