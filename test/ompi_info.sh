#!/bin/sh
# With the exports of `./bootstrap env`, ompi_info finds the component and its parameters.
. "$top_srcdir/test/lib.sh"

out=$("$OMPI_INFO" 2>&1)
check "ompi_info lists MCA coll: nicoll" sh -c 'printf "%s\n" "$1" | grep -q "MCA coll: nicoll"' _ "$out"

params=$("$OMPI_INFO" --param coll nicoll --level 9 2>&1)
for var in priority verbose barrier_algorithm; do
    check "ompi_info --param coll nicoll shows coll_nicoll_$var with help" \
        sh -c 'printf "%s\n" "$1" | grep -A1 "\"coll_nicoll_$2\"" | grep -q .' _ "$params" "$var"
done
check "barrier_algorithm help names the engine's algorithms" \
    sh -c 'printf "%s\n" "$1" | tr -s " \n" " " | grep -q "dissemination, recursive_doubling"' _ "$params"

bad=$(mpirun_test -np 2 --mca coll nicoll,basic,libnbc,self --mca coll_nicoll_barrier_algorithm bogus \
          "$top_builddir/test/mpi/test_barrier" 10 2>&1)
check "a bad coll_nicoll_barrier_algorithm gets one line naming it, and the job runs" \
    sh -c 'printf "%s\n" "$1" | grep -q "coll_nicoll_barrier_algorithm=bogus: unknown algorithm" &&
           ! printf "%s\n" "$1" | grep -q "^not ok"' _ "$bad"
tap_done
