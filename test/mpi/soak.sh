#!/bin/sh
# The soak (not in `make check`: minutes): test_coll's soak section, a million collective calls
# (NICOLL_SOAK_COLLECTIVES) drawn at random over MPI_COMM_WORLD and 6 random splits, blocking
# and nonblocking mixed, random datatypes and counts, every way of completing in turn, each
# result checked byte for byte; resident memory must stay flat after the first tenth. Once over
# shared memory and once over the PML, on 4 oversubscribed ranks, nicoll forced; then on two
# emulated nodes of two ranks (test/mpi/nodes.sh), shared memory inside each and UCX between them,
# where this machine can emulate nodes.
#
#   make -C build test/mpi/test_coll && top_srcdir=$PWD top_builddir=$PWD/build sh test/mpi/soak.sh
. "$top_srcdir/test/lib.sh"

collectives=${NICOLL_SOAK_COLLECTIVES:-1000000}
mpirun_timeout=${NICOLL_TEST_TIMEOUT:-3600}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for transport in shm pml nodes; do
    started=$(date +%s)
    if [ "$transport" = nodes ]; then
        if why=$(nodes_unavailable); then
            tap ok "soak on emulated nodes # SKIP $why"
            continue
        fi
        set -- mpirun_nodes 2 2 -x UCX_TLS=tcp,self -x UCX_NET_DEVICES=lo
    else
        set -- mpirun_test --mca coll_nicoll_transport "$transport"
    fi
    "$@" -np 4 --mca coll nicoll,basic,libnbc,self \
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
