#!/bin/sh
# nicoll across nodes, on nodes emulated on this machine (test/lib.sh's mpirun_nodes: each node a
# UTS namespace with a host name of its own, TCP on loopback between them): the test_coll matrix
# on 2x2, 3x2 and 2x3 layouts (nodes x slots), ranks placed by slot and by node, with each
# transport choice, and a run with small packets and windows whose flow control stalls across
# nodes. Each run first checks that Open MPI sees the nodes (test_coll --nodes) and that nicoll
# ran every collective (--expect-nicoll); with verbose 10, that each communicator's ranks of one
# node talk through shared memory exactly when the transport allows it. SKIPs where unshare is
# not allowed (not root and no user namespaces).
. "$top_srcdir/test/lib.sh"

if why=$(nodes_unavailable); then
    echo "1..0 # SKIP $why"
    exit 0
fi
program=$top_builddir/test/mpi/test_coll
mpirun_timeout=${NICOLL_TEST_TIMEOUT:-150}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# run NODES SLOTS MAP TRANSPORT PACKET CREDITS
run() {
    label="$1x$2 by $3, transport $4, packets $5, credits $6:"
    started=$(date +%s)
    mpirun_nodes "$1" "$2" -np $(($1 * $2)) --map-by "$3" \
        --mca coll nicoll,basic,libnbc,self --mca coll_nicoll_verbose 10 \
        --mca coll_nicoll_transport "$4" --mca coll_nicoll_packet_size "$5" \
        --mca coll_nicoll_credits "$6" \
        "$program" --expect-nicoll --nodes "$1" --packet-size "$([ "$5" = auto ] && echo 65536 || echo "$5")" \
        --large 300000 >"$log" 2>&1 </dev/null
    status=$?
    echo "# $label $(($(date +%s) - started)) s"
    test_coll_ran "$log"
    grep '^not ok' "$log" | sed "s/^/# /"
    check "$label test_coll ran to its end, $passed of ${checks:-?} checks passed" all_passed
    # MPI_COMM_WORLD's line from each rank: shared memory between the ranks of its node, unless
    # the transport is pml (a node of one rank has no one to share with)
    shm=$(grep -c "MPI_COMM_WORLD (cid 0): packets through shared memory between the $2 ranks" "$log")
    want=$(($1 * $2))
    [ "$4" = pml ] || [ "$2" -eq 1 ] && want=0
    check "$label $shm of $(($1 * $2)) ranks use shared memory inside their node on MPI_COMM_WORLD (want $want)" \
        [ "$shm" -eq "$want" ]
}

for layout in "2 2" "3 2" "2 3"; do
    for map in slot node; do
        for transport in auto pml shm; do
            run $layout $map $transport auto auto
        done
    done
done
run 3 2 node auto 1000 2
run 2 3 slot auto 4096 1
tap_done
