#!/bin/sh
# nicoll across nodes, on nodes emulated on this machine (test/lib.sh's mpirun_nodes: each node a
# UTS namespace with a host name of its own, TCP on loopback between them, UCX restricted to its
# tcp transport so that it too goes through the network stack): the test_coll matrix on 2x2, 3x2
# and 2x3 layouts (nodes x slots), ranks placed by slot and by node, with each transport choice,
# and runs with small packets and windows whose flow control stalls across nodes. Each run
# checks that Open MPI sees the nodes (test_coll --nodes) and that nicoll ran every collective
# (--expect-nicoll); and, with verbose 10, that each rank reaches its peers through the fabric
# the transport names: auto, shared memory inside the node and UCX between nodes; shm, shared
# memory and the PML; ucx, UCX to all; pml, the PML to all. The last two runs add the progress
# thread (coll_nicoll_progress thread) over shared memory and UCX at once, the offload section
# crosses the nodes with it, and the last run holds 1,100 communicators at once. Every rank
# counts the job's processes on the machine, all of the emulated nodes' (coll_nicoll_progress
# auto weighs them against the cores). SKIPs where unshare is not allowed (not root and no user
# namespaces).
. "$top_srcdir/test/lib.sh"

if why=$(nodes_unavailable); then
    echo "1..0 # SKIP $why"
    exit 0
fi
program=$top_builddir/test/mpi/test_coll
mpirun_timeout=${NICOLL_TEST_TIMEOUT:-150}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# run NODES SLOTS MAP TRANSPORT PACKET CREDITS [PROGRESS [ALLGATHER]]
run() {
    progress=${7:-auto} allgather=${8:-auto}
    label="$1x$2 by $3, transport $4, packets $5, credits $6, progress $progress, allgather $allgather:"
    started=$(date +%s)
    mpirun_nodes "$1" "$2" -np $(($1 * $2)) --map-by "$3" -x UCX_TLS=tcp,self -x UCX_NET_DEVICES=lo \
        --mca coll nicoll,basic,libnbc,self --mca coll_nicoll_verbose 10 \
        --mca coll_nicoll_transport "$4" --mca coll_nicoll_packet_size "$5" \
        --mca coll_nicoll_credits "$6" --mca coll_nicoll_progress "$progress" \
        --mca coll_nicoll_allgather_algorithm "$allgather" \
        "$program" --expect-nicoll --nodes "$1" --packet-size "$([ "$5" = auto ] && echo 65536 || echo "$5")" \
        --large 300000 >"$log" 2>&1 </dev/null
    status=$?
    echo "# $label $(($(date +%s) - started)) s"
    test_coll_ran "$log"
    grep '^not ok' "$log" | sed "s/^/# /"
    check "$label test_coll ran to its end, $passed of ${checks:-?} checks passed" all_passed
    all_passed || grep -v -e '^ok' -e 'nicoll: ' "$log" | head -20 | sed 's/^/# /'
    # MPI_COMM_WORLD's line from each rank: how many peers each fabric serves
    size=$(($1 * $2)) here=$(($2 - 1)) away=$(($1 * $2 - $2))
    case $4 in
        auto) want="$here peers through shared memory, $away through UCX, 0 through the PML" ;;
        shm) want="$here peers through shared memory, 0 through UCX, $away through the PML" ;;
        ucx) want="0 peers through shared memory, $((size - 1)) through UCX, 0 through the PML" ;;
        pml) want="0 peers through shared memory, 0 through UCX, $((size - 1)) through the PML" ;;
    esac
    got=$(grep -c "MPI_COMM_WORLD (cid 0): this rank reaches $want\$" "$log")
    check "$label $got of $size ranks reach $want" [ "$got" -eq "$size" ]
    # the emulated nodes share this machine's cores: each rank counts all of them
    got=$(grep -c "nicoll: progress: .*, $size processes of the job on this machine)\$" "$log")
    check "$label $got of $size ranks count $size processes on this machine" [ "$got" -eq "$size" ]
}

for map in slot node; do
    for transport in auto ucx shm pml; do
        run 2 2 $map $transport auto auto
    done
done
for layout in "3 2" "2 3"; do
    run $layout slot auto auto auto
    run $layout node auto auto auto
    run $layout node ucx auto auto
    run $layout slot shm auto auto
    run $layout slot pml auto auto
done
run 3 2 node auto 1000 2
run 2 3 slot auto 4096 1
run 2 2 node ucx 65536 1
run 2 2 slot auto auto auto thread
run 3 2 node auto 4096 2 thread
run 2 2 node auto auto auto auto flat
run 2 3 slot ucx 4096 2 caller flat

# test_coll's offload section (coll.sh) across nodes: 2x2 by node, a chain 0 -> 1 -> 2 -> 3 in
# which every hop crosses between the nodes over UCX, so a late rank's thread forwards only when
# UCX's event wakes it.
label="2x2 by node, offload, chain over UCX:"
mpirun_nodes 2 2 -np 4 --map-by node -x UCX_TLS=tcp,self -x UCX_NET_DEVICES=lo \
    --mca coll nicoll,basic,libnbc,self --mca coll_nicoll_progress thread \
    --mca coll_nicoll_bcast_algorithm chain \
    "$program" --expect-nicoll --nodes 2 --sections offload >"$log" 2>&1 </dev/null
status=$?
test_coll_ran "$log"
grep '^not ok' "$log" | sed "s/^/# /"
check "$label test_coll ran to its end, $passed of ${checks:-?} checks passed" all_passed

# Many communicators across nodes, under the usual limit of 1,024 open files: each one's UCX
# peers share the process's endpoints (a socket each over tcp), and the node's shared segments
# stay within coll_nicoll_shm_limit.
label="2x2 by node, 1100 communicators, 1024 files per process:"
(ulimit -n 1024 &&
    mpirun_nodes 2 2 -np 4 --map-by node -x UCX_TLS=tcp,self -x UCX_NET_DEVICES=lo \
        --mca coll nicoll,basic,libnbc,self \
        "$program" --expect-nicoll --nodes 2 --sections communicators >"$log" 2>&1 </dev/null)
status=$?
test_coll_ran "$log"
grep '^not ok' "$log" | sed "s/^/# /"
check "$label test_coll ran to its end, $passed of ${checks:-?} checks passed" all_passed
all_passed || grep -v -e '^ok' "$log" | head -20 | sed 's/^/# /'
tap_done
