#!/bin/sh
# Local failures during a communicator's set-up, injected on one rank with coll_nicoll_fault
# (mpirun's MPMD form: only that rank's part gets -x OMPI_MCA_coll_nicoll_fault=SITE), on 3 and
# 5 ranks. Every rank must take the same path and test_coll's checks must all pass:
# - transport, setup, group (the first communicator set up, MPI_COMM_WORLD): rank 0 says a rank
#   failed, and nicoll declines the communicator on every rank (its fallback counter grows);
# - shm_map, shm_probe: every rank carries packets over the PML instead of shared memory, and
#   nicoll still runs every collective (test_coll --expect-nicoll);
# - ucx (with coll_nicoll_transport ucx): rank 0 says a rank cannot use UCX, and every rank
#   carries packets over the PML instead, nicoll still running every collective; the same with
#   a real failure, UCX_TLS naming no transport on one rank.
# - pack (pack:2): a failure inside an MPI_Bcast (MPI_Allgather) of strided ints, on one rank
#   (test_abort): every rank returns, the faulty one with an error, the others with an error or the
#   right bytes, and later collectives run right.
# - send:N: the Nth engine packet one rank sends fails (test_abort send): the communicator's
#   group is broken on every rank, so every rank returns from every later nicoll collective on it
#   with an error (or the right bytes, if it needed nothing more), each rank saying each reason
#   once, and a new communicator runs right. Over shared memory, the PML and UCX.
# - fetch: the transport breaks right after a payload's fetch (UCX) or receive (the PML) started
#   (test_abort fetch): no failed call's buffer is written after it returned, and nothing hangs;
#   and a rank whose call failed frees the communicator at once (test_abort free).
# Before set-up agreed on failures, a rank that failed left its peers waiting for it forever.
. "$top_srcdir/test/lib.sh"

mpirun_timeout=${NICOLL_TEST_TIMEOUT:-150}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
program="$top_builddir/test/mpi/test_coll --sections blocking,nonblocking,barrier --large 100000"

# inject NP RANK SITE [TEST_COLL_FLAGS...]: NP ranks, coll_nicoll_fault=SITE on rank RANK only
inject() {
    np=$1 faulty=$2 site=$3
    shift 3 # the rest: test_coll's flags
    parts=
    [ "$faulty" -gt 0 ] && parts="-np $faulty $program $* :"
    parts="$parts -np 1 -x OMPI_MCA_coll_nicoll_fault=$site $program $*"
    [ "$faulty" -lt $((np - 1)) ] && parts="$parts : -np $((np - 1 - faulty)) $program $*"
    # shellcheck disable=SC2086 # $parts is mpirun's MPMD command line
    mpirun_test --mca coll "${coll:-nicoll,basic,libnbc,self}" --mca coll_nicoll_stats 1 \
        --mca coll_nicoll_verbose 10 --mca coll_nicoll_transport "${transport:-auto}" ${flags:-} $parts \
        >"$log" 2>&1
    status=$?
    test_coll_ran "$log"
    echo "# fault $site on rank $faulty of $np: test_coll $passed of ${checks:-?} checks passed, exit $status"
    grep -e '^not ok' -e 'coll_nicoll_fault' -e 'nicoll declines' "$log" | head -5 | sed 's/^/# /'
}
fallbacks() { sed -n 's/.*nicoll: stats rank 0 bcast: .*fallbacks \([0-9]*\).*/\1/p' "$log"; }

for case in "3 1 transport" "5 4 transport" "3 2 setup" "5 0 setup" "3 1 group" "5 3 group"; do
    set -- $case
    inject "$@"
    case $3 in
        group) why="a rank could not create its engine group" ;;
        *) why="a rank could not allocate its transport or set-up buffers" ;;
    esac
    check "fault $3 on rank $2 of $1: the faulty rank says so, rank 0 says nicoll declines MPI_COMM_WORLD" \
        sh -c 'grep -q "coll_nicoll_fault=$2: failing step $2 (pass 1)" "$1" &&
               test "$(grep -c "MPI_COMM_WORLD (cid 0): $3; nicoll declines this communicator" "$1")" -eq 1' \
        _ "$log" "$3" "$why"
    check "... every test_coll check passes" all_passed
    check "... nicoll counted the declined communicator's calls as fallbacks" [ "$(fallbacks)" -gt 0 ]
done

for case in "3 1 shm_map" "3 0 shm_map" "5 2 shm_map" "3 2 shm_probe" "5 4 shm_probe"; do
    set -- $case
    inject "$@" --expect-nicoll
    check "fault $3 on rank $2 of $1: every rank carries packets over the PML" \
        [ "$(grep -c "MPI_COMM_WORLD (cid 0): no shared memory: a rank could not map" "$log")" -eq "$1" ]
    check "... every test_coll check passes, nicoll running every collective" all_passed
done

transport=ucx
for case in "3 1 ucx" "5 0 ucx"; do
    set -- $case
    inject "$@" --expect-nicoll
    check "fault $3 on rank $2 of $1: rank 0 says a rank cannot use UCX, every rank uses the PML" \
        sh -c 'test "$(grep -c "MPI_COMM_WORLD (cid 0): a rank cannot use UCX" "$1")" -eq 1 &&
               test "$(grep -c "MPI_COMM_WORLD (cid 0): this rank reaches 0 peers through shared memory, 0 through UCX, $(($2 - 1)) through the PML" "$1")" -eq "$2"' \
        _ "$log" "$1"
    check "... every test_coll check passes, nicoll running every collective" all_passed
done

# A real failure rather than an injected one: UCX on rank 2 of 3 offered no transport it knows.
# shellcheck disable=SC2086 # $program is the command and its flags
mpirun_test --mca coll nicoll,basic,libnbc,self --mca coll_nicoll_verbose 10 \
    --mca coll_nicoll_transport ucx -np 2 $program --expect-nicoll : \
    -np 1 -x UCX_TLS=no_such_transport $program --expect-nicoll >"$log" 2>&1
status=$?
test_coll_ran "$log"
echo "# UCX_TLS=no_such_transport on rank 2 of 3: test_coll $passed of ${checks:-?} checks passed, exit $status"
check "UCX with no usable transport on rank 2 of 3: rank 0 names rank 2, rank 2 says why" \
    sh -c 'grep -q "MPI_COMM_WORLD (cid 0): a rank cannot use UCX (rank 2;" "$1" &&
           grep -q "MPI_COMM_WORLD (cid 0): this rank cannot use UCX: ucp_init failed" "$1"' _ "$log"
check "... every rank reaches both peers through the PML" \
    [ "$(grep -c "MPI_COMM_WORLD (cid 0): this rank reaches 0 peers through shared memory, 0 through UCX, 2 through the PML" "$log")" -eq 3 ]
check "... every test_coll check passes, nicoll running every collective" all_passed

# A failure inside a collective: one rank cannot allocate the packing buffer of its MPI_Bcast
# (pack) or MPI_Allgather (pack:2) of strided ints. It tells the others, so every rank returns
# (MPI_ERRORS_RETURN): the faulty one with an error, the others with an error when told before
# they were done, else with the right bytes; later collectives run right. (Before, its peers
# waited for it forever.) Over shared memory and over the PML.
for case in "3 1 pack bcast" "4 0 pack bcast" "5 3 pack:2 allgather" "2 0 pack:2 allgather" \
    "4 2 pack bcast pml"; do
    set -- $case
    transport=${5:-auto}
    program="$top_builddir/test/mpi/test_abort $4"
    inject "$1" "$2" "$3"
    check "fault $3 on rank $2 of $1 ($4, transport ${5:-auto}): the faulty rank fails with out of memory, every rank returns" \
        sh -c 'test "$(grep -c "failed: out of memory" "$1")" -eq 1 &&
               test "$(grep -c "^# rank [0-9]*: MPI_" "$1")" -eq $((2 * $2))' _ "$log" "$1"
    check "... every check of test_abort passes" all_passed
done

# A transport error inside a collective: one rank's Nth engine packet fails to go. The group is
# broken on every rank (told, as MPI's fault-tolerance proposal revokes a communicator): every
# collective on it fails from then on, everywhere, and nothing hangs. (Before, the faulty rank
# failed alone and its peers waited for it forever.) coll/tuned serves MPI_Allreduce here: coll/
# basic's broadcasts through the communicator's own MPI_Bcast, nicoll's, broken.
coll=nicoll,tuned,basic,libnbc,self
for case in "3 1 send:5 send" "4 3 send:40 send pml" "4 0 send:9 send ucx" "2 1 send:2 send"; do
    set -- $case
    transport=${5:-auto}
    program="$top_builddir/test/mpi/test_abort $4"
    inject "$1" "$2" "$3"
    check "fault $3 on rank $2 of $1 (transport ${5:-auto}): every rank returns from 120 calls" \
        sh -c 'test "$(grep -c "calls failed" "$1")" -eq "$2"' _ "$log" "$1"
    check "... every check of test_abort passes" all_passed
    check "... each rank says each reason once, not once per failed call (at most 2 lines a rank)" \
        sh -c 'n=$(grep -c "on communicator .* failed: " "$1")
               test "$n" -ge 1 && test "$n" -le $(($2 * 2))' _ "$log" "$1"
done

# A transport broken while payloads are on their way in and out: one rank fails right after it
# starts to fetch a payload (UCX's rendezvous, over its tcp transport, where the data follows
# later) or to receive one apart (the PML), in 4 MiB broadcasts. Every rank returns from every
# call, every success has the right bytes, no failed call's buffer is written after it returned,
# and a new communicator runs right. (Before, the fetch landed in the failed call's buffer later;
# a rank whose call failed gave its buffer back while a peer still read a payload from it, and
# that peer's call succeeded with the caller's next bytes; over the PML, payloads that no rank
# took any more held MPI_Finalize up for good.)
for case in "3 1 fetch ucx caller" "4 3 fetch ucx thread" "4 2 fetch pml caller" \
    "3 0 fetch pml thread"; do
    set -- $case
    transport=$4
    flags="-x UCX_TLS=tcp,self -x UCX_NET_DEVICES=lo --mca coll_nicoll_progress $5"
    program="$top_builddir/test/mpi/test_abort fetch"
    inject "$1" "$2" "$3"
    check "fault $3 on rank $2 of $1 (transport $4, progress $5): the faulty rank fails a fetch, every rank returns" \
        sh -c 'grep -q "coll_nicoll_fault=fetch: failing step fetch (pass 1)" "$1" &&
               test "$(grep -c "^# rank [0-9]*: [0-9]* of [0-9]* calls failed" "$1")" -eq "$2"' \
        _ "$log" "$1"
    check "... every check of test_abort passes" all_passed
done
flags=

# A rank whose call failed (coll_nicoll_fault=pack) frees the communicator at once, before the
# root's 4 MiB of payloads sent in place reach it: every rank returns. (Before, the root waited
# for good for that rank to take them: over shared memory in 2 of 5 runs, over UCX's tcp
# transport in 3 of 8. Over the PML the communicator stays allocated, its receives taking them:
# coll_nicoll(7), BUGS; letting it go at MPI_Comm_free left the root waiting.)
for case in "3 1 pack auto" "4 2 pack ucx" "4 1 pack pml"; do
    set -- $case
    transport=$4
    flags="-x UCX_TLS=tcp,self -x UCX_NET_DEVICES=lo"
    program="$top_builddir/test/mpi/test_abort free"
    inject "$1" "$2" "$3"
    check "fault $3 on rank $2 of $1 (transport $4), the communicator freed at once: every rank returns" \
        [ "$(grep -c "^# rank [0-9]*: MPI_Bcast" "$log")" -eq "$1" ]
    check "... every check of test_abort passes" all_passed
done
flags=
tap_done
