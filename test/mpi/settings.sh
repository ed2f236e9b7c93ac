#!/bin/sh
# Settings that ranks must share (coll/coll_nicoll_settings.c), started different on some ranks
# (mpirun's MPMD form, each part with its own -x OMPI_MCA_coll_nicoll_...): nicoll declines
# every communicator they differ on, rank 0 names the variable, the ranks and their values in
# one line (a tuning file that did not load on some ranks: the first of them says why), and
# test_coll's checks all pass on the next component (coll/basic). A control run
# with the same value on every rank shows that nicoll then runs everything. Last, the priority
# written through MPI_T (nicoll-bench --paired), and nicoll-bench's sleeping compute
# (--idle-compute).
. "$top_srcdir/test/lib.sh"

mpirun_timeout=${NICOLL_TEST_TIMEOUT:-150}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
log=$dir/log
program="$top_builddir/test/mpi/test_coll --sections blocking,nonblocking,barrier --large 100000"
printf '{"version": 1, "bcast": [{"comm_size": [2, "inf"], "bytes": [0, "inf"], "algorithm": "chain"}]}\n' \
    >"$dir/chain.json"

# run VARIABLE VALUE0 VALUE1: rank 0 with coll_nicoll_VARIABLE=VALUE0, two more ranks with VALUE1
run() {
    mpirun_test --mca coll nicoll,basic,libnbc,self --mca coll_nicoll_stats 1 \
        -np 1 -x "OMPI_MCA_coll_nicoll_$1=$2" $program : \
        -np 2 -x "OMPI_MCA_coll_nicoll_$1=$3" $program >"$log" 2>&1
    status=$?
    test_coll_ran "$log"
    echo "# coll_nicoll_$1 $2 | $3: test_coll $passed of ${checks:-?} checks passed, exit $status"
    grep -e '^not ok' -e 'nicoll: communicator' "$log" | head -5 | sed 's/^/# /'
}
# count_of C FIELD: rank 0's coll_nicoll_stats count of FIELD (calls, fallbacks) for collective C
count_of() { sed -n "s/.*nicoll: stats rank 0 $1: .*$2 \([0-9]*\).*/\1/p" "$log"; }
declined() {
    [ "$(count_of bcast calls)" = 0 ] && [ "$(count_of allgather calls)" = 0 ] &&
        [ "$(count_of barrier calls)" = 0 ] && [ "$(count_of bcast fallbacks)" -gt 0 ]
}
served() { [ "$(count_of bcast calls)" -gt 0 ] && [ "$(count_of bcast fallbacks)" = 0 ]; }

for case in "credits 2 16" "packet_size 4096 1000" "bcast_algorithm binomial chain" \
            "bcast_k 2 3" "allgather_algorithm rd ab" "barrier_algorithm dissemination recursive_doubling" \
            "transport ucx shm" "tuning_file $dir/chain.json ''" \
            "tuning_file $dir/chain.json $dir/missing.json"; do
    set -- $case
    [ "$3" = "''" ] && set -- "$1" "$2" ""
    run "$@"
    shown1=$2 shown2=$3
    case $1$3 in
        tuning_file) shown1="the table of $2" shown2="the embedded default table (no tuning file)" ;;
        tuning_file*)
            shown1="the table of $2"
            shown2="the embedded default table (its tuning file did not load)"
            ;;
    esac
    warning="nicoll: communicator MPI_COMM_WORLD (cid 0): coll_nicoll_$1 differs across ranks: $shown1[^,]* on rank 0, $shown2[^,]* on rank 1 (2 of 3 ranks differ from rank 0); nicoll declines this communicator"
    check "coll_nicoll_$1 $2 on rank 0, ${3:-empty} on ranks 1-2: one line names it, the ranks and the values" \
        [ "$(grep -c -- "$warning" "$log")" -eq 1 ]
    check "... every test_coll check passes on the next component" all_passed
    check "... nicoll ran no bcast, barrier or allgather and counted fallbacks" declined
    case $3 in
        *missing.json)
            # the file that did not load: rank 1, the first that differs, says why, once
            why="nicoll: tuning file $3: cannot open: No such file or directory; using the"
            why="$why embedded default table"
            check "... rank 1 alone says why its file did not load, in one line" \
                [ "$(grep -cF -- "$why" "$log")" -eq 1 -a \
                  "$(grep -cF -- "$why (rank 1 of MPI_COMM_WORLD)" "$log")" -eq 1 ]
            ;;
    esac
done

# MPI_THREAD_MULTIPLE on rank 0 only: the thread level differs; on every rank: verbose 10 says
# why nicoll declines.
mpirun_test --mca coll nicoll,basic,libnbc,self --mca coll_nicoll_stats 1 \
    -np 1 $program --thread-multiple : -np 2 $program >"$log" 2>&1
status=$?
test_coll_ran "$log"
check "MPI_THREAD_MULTIPLE on rank 0 only: one line names it and the ranks" \
    [ "$(grep -c "MPI_COMM_WORLD (cid 0): MPI_THREAD_MULTIPLE differs across ranks: 1 on rank 0, 0 on rank 1" "$log")" -eq 1 ]
check "... every test_coll check passes on the next component" all_passed
check "... nicoll counted fallbacks and ran nothing" declined
mpirun_test --mca coll nicoll,basic,libnbc,self --mca coll_nicoll_stats 1 --mca coll_nicoll_verbose 10 \
    -np 3 $program --thread-multiple >"$log" 2>&1
status=$?
test_coll_ran "$log"
check "MPI_THREAD_MULTIPLE on every rank: verbose 10 says nicoll declines for it" \
    grep -q "nicoll: declining communicator MPI_COMM_WORLD (cid 0): MPI_THREAD_MULTIPLE" "$log"
check "... every test_coll check passes on the next component" all_passed
check "... nicoll counted fallbacks and ran nothing" declined

# The control: the same MPMD form, one value everywhere.
run credits 2 2
check "coll_nicoll_credits 2 on every rank: no line about differing settings" \
    [ "$(grep -c 'differs across ranks' "$log")" -eq 0 ]
check "... every test_coll check passes" all_passed
check "... nicoll ran the collectives, with no fallback" served

# coll_nicoll_shm_limit, which each process may choose: 1 MiB on rank 0 only, whose share (a
# quarter) holds the rings of a communicator or two and little staging (test_coll's outstanding
# section makes five communicators). Where staging areas are allocated as they are used, rank 0's
# stops growing at half its share and it reads its payloads in place, while its peers stage theirs;
# where the kernel cannot (before Linux 5.14), the peers follow it to segments without staging
# areas. Past its share, every rank agrees on no shared memory (verbose 10 on other processes
# says so), nicoll still runs everything, and test_coll's checks pass throughout.
many="$top_builddir/test/mpi/test_coll --sections blocking,outstanding --large 100000"
mpirun_test --mca coll nicoll,basic,libnbc,self --mca coll_nicoll_stats 1 \
    --mca coll_nicoll_verbose 10 -np 1 -x OMPI_MCA_coll_nicoll_shm_limit=1 $many : \
    -np 3 $many >"$log" 2>&1
status=$?
test_coll_ran "$log"
# processes LINE: how many processes printed LINE
processes() { grep -- "$1" "$log" | sed -n 's/^\[[^]]*:\([0-9]*\)\].*/\1/p' | sort -u | wc -l; }
echo "# coll_nicoll_shm_limit 1 on rank 0: test_coll $passed of ${checks:-?} checks passed, exit $status"
# its staging area stopped at half its share, or (whole areas counted at set-up) every rank's went
stopped() {
    [ "$(processes "this rank's staging area stops at")" -ge 1 ] ||
        [ "$(processes 'no staging areas (a rank.s share of coll_nicoll_shm_limit')" -ge 2 ]
}
check "coll_nicoll_shm_limit 1 on rank 0: its staging area stops at half its share" stopped
check "... and then no shared memory" \
    [ "$(processes 'no shared memory: its segment would take a rank over its share')" -ge 2 ]
check "... every test_coll check passes" all_passed
check "... nicoll ran the collectives, with no fallback" served

# Payloads read in place together: with coll_nicoll_shm_limit 1 on both ranks a staging area
# stops at 256 KiB, so the 64 KiB packets of test_coll's larger messages are read from the
# sender's memory, a message's packets that are in the ring already with one process_vm_readv
# (nicsim_group_place's room): every check passes and a rank read more payloads than it made
# reads (coll_nicoll_read_in_place, coll_nicoll_in_place_reads). The packet size is written as
# in tuning files, 64k.
mpirun_test --mca coll nicoll,basic,libnbc,self --mca coll_nicoll_stats 2 \
    --mca coll_nicoll_shm_limit 1 --mca coll_nicoll_packet_size 64k -np 2 \
    "$top_builddir/test/mpi/test_coll" --sections blocking,nonblocking --large 1000000 >"$log" 2>&1
status=$?
test_coll_ran "$log"
echo "# coll_nicoll_shm_limit 1, 64 KiB packets: test_coll $passed of ${checks:-?} checks passed," \
    "exit $status"
grep 'payloads read in place' "$log" | sed 's/.*stats rank/# rank/'
check "coll_nicoll_shm_limit 1 on 2 ranks, 64 KiB packets: every test_coll check passes" all_passed
check "... coll_nicoll_packet_size 64k taken, not warned about" \
    [ "$(grep -c 'coll_nicoll_packet_size=64k: not a valid value' "$log")" -eq 0 ]
check "... a rank read several payloads in place in one read" \
    awk '/payloads read in place/ { if ($(NF - 3) > $(NF - 1)) ok = 1 } END { exit !ok }' "$log"

# coll_nicoll_priority written through MPI_T between communicator creations, as nicoll-bench
# --paired does on every rank: nicoll runs every benchmarked call on its communicator and none on
# the one made while the priority was negative; where nicoll is not loaded, one line and a
# failed exit.
bench=$top_builddir/examples/nicoll-bench
mpirun_test -np 3 --mca coll nicoll,tuned,basic,libnbc,self "$bench" allgather --sizes 1,5000 \
    -i 5 -x 1 --paired 2 >"$log" 2>&1
status=$?
paired() {
    on_default=$(sed -n "s/^# run by nicoll on the default's communicator: \([0-9]*\) of \([0-9]*\) .*/\1 \2/p" "$log")
    on_nicoll=$(sed -n 's/^# run by nicoll: \([0-9]*\) of \([0-9]*\) .*/\1 \2/p' "$log")
    rows=$(awk '!/^#/ && NF == 10' "$log" | grep -c .)
    echo "# --paired: exit $status, nicoll on the default's: ${on_default:-none}, on its own: ${on_nicoll:-none}, $rows rows"
    [ "$status" -eq 0 ] && [ "$rows" -eq 2 ] && [ "${on_default% *}" -eq 0 ] &&
        [ "${on_nicoll% *}" -eq "${on_nicoll#* }" ] && [ "${on_nicoll#* }" -eq "${on_default#* }" ] &&
        [ "${on_nicoll#* }" -gt 0 ]
}
check "nicoll-bench --paired: nicoll runs its communicator's calls, none of the default's" paired
mpirun_test -np 2 --mca coll tuned,basic,libnbc,self "$bench" barrier -i 5 -x 1 --paired 2 \
    >"$log" 2>&1
status=$?
check "nicoll-bench --paired without nicoll: one line, a failed exit" \
    sh -c '[ "$1" -ne 0 ] && [ "$(grep -c "cannot write coll_nicoll_priority" "$2")" -eq 1 ]' _ "$status" "$log"

# --idle-compute: the overlap row's compute sleeps (its CPU time under three quarters of its
# wall-clock time: 0.2-0.3 here, 0.64 once in 5 iterations; a spinning compute's is all of it);
# refused in one line where nothing computes.
mpirun_test -np 2 --mca coll nicoll,tuned,basic,libnbc,self "$bench" ibcast --sizes 1048576 \
    -i 20 -x 2 -f --idle-compute >"$log" 2>&1
status=$?
idle() {
    row=$(awk '!/^#/ && NF == 11 { print $3, $4 }' "$log")
    echo "# --idle-compute: exit $status, compute and its CPU time (us): ${row:-none}"
    [ "$status" -eq 0 ] && [ -n "$row" ] && awk -v c="${row% *}" -v cpu="${row#* }" \
        'BEGIN { exit !(c > 0 && cpu < c * 3 / 4) }'
}
check "nicoll-bench ibcast --idle-compute: the compute leaves its core" idle
mpirun_test -np 1 "$bench" bcast --idle-compute >"$log" 2>&1
status=$?
check "nicoll-bench bcast --idle-compute: one line, a failed exit" \
    sh -c '[ "$1" -eq 2 ] && [ "$(grep -c "^nicoll-bench: --idle-compute: only with" "$2")" -eq 1 ]' \
    _ "$status" "$log"
# Options that would be silently ignored or misread: -t on a blocking collective (nothing calls
# MPI_Test there), an empty item in --sizes.
for bad in "bcast -t 4:-t/--num-test-calls: only with" "allgather --sizes 1,,2:--sizes 1,,2: expected" \
    "bcast --sizes +8:--sizes +8: expected"; do
    mpirun_test -np 1 "$bench" ${bad%%:*} >"$log" 2>&1
    status=$?
    check "nicoll-bench ${bad%%:*}: one line, a failed exit" \
        sh -c '[ "$1" -eq 2 ] && [ "$(grep -c "^nicoll-bench: $3" "$2")" -eq 1 ]' \
        _ "$status" "$log" "${bad#*:}"
done
tap_done
