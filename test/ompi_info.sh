#!/bin/sh
# With the exports of `./bootstrap env`, ompi_info finds the component and its parameters.
. "$top_srcdir/test/lib.sh"

out=$("$OMPI_INFO" 2>&1)
check "ompi_info lists MCA coll: nicoll" sh -c 'printf "%s\n" "$1" | grep -q "MCA coll: nicoll"' _ "$out"

params=$("$OMPI_INFO" --param coll nicoll --level 9 2>&1)
for var in priority verbose stats bcast_algorithm bcast_k allgather_algorithm barrier_algorithm \
           packet_size credits transport progress progress_priority shm_limit tuning_file; do
    check "ompi_info --param coll nicoll shows coll_nicoll_$var with help" \
        sh -c 'printf "%s\n" "$1" | grep -A1 "\"coll_nicoll_$2\"" | sed -n 2p | grep -q "[[:alpha:]]"' \
        _ "$params" "$var"
done
check "barrier_algorithm help names the engine's algorithms" \
    sh -c 'printf "%s\n" "$1" | tr -s " \n" " " | grep -q "dissemination, recursive_doubling, tree, flat"' _ "$params"
check "bcast_algorithm help names the engine's tree shapes" \
    sh -c 'printf "%s\n" "$1" | tr -s " \n" " " | grep -q "binomial, binary, chain, flat, kbinomial"' _ "$params"
check "allgather_algorithm help names the engine's NIC-based algorithms only" \
    sh -c 'printf "%s\n" "$1" | tr -s " \n" " " | grep -q "auto (the tuning table.s rule, else rd while the result fits in one packet, else ab), rd, ab, flat (see"' _ "$params"

bad=$(mpirun_test -np 2 --mca coll nicoll,basic,libnbc,self --mca coll_nicoll_barrier_algorithm bogus \
          "$top_builddir/test/mpi/test_barrier" 10 2>&1)
status=$?
check "a bad coll_nicoll_barrier_algorithm gets one line per process naming it" \
    sh -c 'test "$(printf "%s\n" "$1" | grep -c "coll_nicoll_barrier_algorithm=bogus: not a valid value (valid: auto, dissemination, recursive_doubling, tree, flat); using auto")" -eq 2' \
    _ "$bad"
check "... and the job runs every check to success on the default algorithm" \
    sh -c 'test "$2" -eq 0 && test "$(printf "%s\n" "$1" | grep -c "^ok - ")" -eq 6 &&
           ! printf "%s\n" "$1" | grep -q "^not ok"' _ "$bad" "$status"
tap_done
