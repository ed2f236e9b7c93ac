#!/bin/sh
# The soak (not in `make check`: minutes): test_coll's soak section, a million collective calls
# (NICOLL_SOAK_COLLECTIVES) drawn at random over MPI_COMM_WORLD and 6 random splits, blocking
# and nonblocking mixed, random datatypes and counts, every way of completing in turn, each
# result checked byte for byte; resident memory must stay flat after the first tenth. Once over
# shared memory and once over the PML, on 4 oversubscribed ranks, nicoll forced.
#
#   make -C build test/mpi/test_coll && top_srcdir=$PWD top_builddir=$PWD/build sh test/mpi/soak.sh
. "$top_srcdir/test/lib.sh"

collectives=${NICOLL_SOAK_COLLECTIVES:-1000000}
mpirun_timeout=${NICOLL_TEST_TIMEOUT:-3600}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for transport in shm pml; do
    started=$(date +%s)
    mpirun_test -np 4 --mca coll nicoll,basic,libnbc,self --mca coll_nicoll_transport "$transport" \
        "$top_builddir/test/mpi/test_coll" --expect-nicoll --sections soak --soak "$collectives" \
        >"$log" 2>&1
    status=$?
    grep -e '^# soak' -e '^not ok' -e '^# rank' "$log" | tail -8
    echo "# transport $transport: $(($(date +%s) - started)) s, exit $status"
    test_coll_ran "$log"
    check "soak over $transport: $collectives collectives, every check ($passed of ${checks:-?}) passed" \
        all_passed
done
tap_done
