#!/bin/sh
# MPI_Bcast, MPI_Allgather, MPI_Barrier, MPI_Ibcast, MPI_Iallgather and MPI_Ibarrier through
# nicoll on 1..8 ranks; test/mpi/test_coll.c says what each of its TAP lines checks.
#
# nicoll is forced (tuned left out) and test_coll --expect-nicoll checks nicoll's MPI_T counters,
# so a silent fallback to another component fails. Each run sets the component's algorithms, k,
# packet size and credits; the runs below cover every value of every one of them (not every
# combination). Then: invalid values give a warning naming the variable and correct results;
# --expect-nicoll fails where nicoll is not loaded or not chosen; coll_nicoll_stats prints.
#
# NICOLL_TEST_AGAINST=tuned (or basic) runs the same checks against Open MPI's own components,
# which checks the test itself; what only nicoll can pass is then skipped. tuned cannot broadcast
# with different datatypes at the root and the receivers (open-mpi/ompi#199, #1763, #10523), so
# that run leaves those out (test_coll --uniform-bcast).
. "$top_srcdir/test/lib.sh"

against=${NICOLL_TEST_AGAINST:-nicoll}
case $against in
    nicoll) components=nicoll,basic,libnbc,self flags=--expect-nicoll ;;
    tuned) components=tuned,basic,libnbc,self flags=--uniform-bcast ;;
    basic) components=basic,libnbc,self flags= ;;
    *)
        echo "Bail out! NICOLL_TEST_AGAINST=$against: expected nicoll, tuned or basic"
        exit 99
        ;;
esac
program=$top_builddir/test/mpi/test_coll
mpirun_timeout=${NICOLL_TEST_TIMEOUT:-150}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "# against $against: --mca coll $components, test_coll $flags"

# launch NP MPIRUN-ARGS...: mpirun's output in $log, its exit status in $status
launch() {
    np=$1
    shift
    started=$(date +%s)
    mpirun_test -np "$np" "$@" >"$log" 2>&1 </dev/null
    status=$?
    echo "# mpirun -np $np: $(($(date +%s) - started)) s"
}

# report LABEL: the last launch's TAP lines, labelled and numbered, its other lines as comments,
# and one failure if it did not run to its end.
report() {
    lines=0
    while IFS= read -r line; do
        case $line in
            "ok - "*) lines=$((lines + 1)) && tap ok "$1 ${line#ok - }" ;;
            "not ok - "*) lines=$((lines + 1)) && tap not-ok "$1 ${line#not ok - }" ;;
            "#"*) echo "$line" ;;
            *) echo "# $line" ;;
        esac
    done <"$log"
    want=$(sed -n 's/^# checks \([0-9]*\)$/\1/p' "$log")
    if [ "$status" -ne 0 ] || [ -z "$want" ] || [ "$want" -ne "$lines" ]; then
        tap not-ok "$1 mpirun exited $status after $lines checks (want ${want:-'# checks N' last})"
    fi
}

# The packet sizes test_coll puts its boundary counts at, for a run on NP ranks: the run's, or
# for `auto` the sizes in NICOLL_TEST_AUTO_PACKET_SIZES (comma-separated; by default auto's
# choice, 65536, and on 2 ranks 4 MiB and the 32 KiB and 64 KiB the embedded table cuts their
# broadcasts into over shared memory). A packet larger than the transport's inline limit (4000
# bytes) also gets boundaries there: payloads of up to 4000 bytes travel with their headers,
# larger ones apart.
packet_sizes() { # SIZE NP
    size=$1
    auto=65536
    [ "$2" -eq 2 ] && auto=4194304,65536,32768,4000
    [ "$size" = auto ] && size=${NICOLL_TEST_AUTO_PACKET_SIZES:-$auto}
    case $size in
        *,*) echo "$size" ;;
        *) if [ "$size" -gt 4000 ]; then echo "$size,4000"; else echo "$size"; fi ;;
    esac
}

# One run per line: ranks, bcast algorithm, k, allgather and barrier algorithms, packet size,
# credits, transport (auto is shared memory here, every rank being on one node; ucx is UCX
# active messages between every pair, on one node too), progress (thread: a progress thread
# also moves the nonblocking collectives' packets; auto is caller here, no core being spare), and
# the coll list (- for the forced one above; the last run keeps tuned in the list, as users run
# it, to show nicoll still serves). Over shared memory, with ranks sharing cores as here, a rank stages
# payloads of up to 2 MiB in its 4 MiB staging area: the 1 MiB packets with 8 credits fill it,
# so payloads also go by process_vm_readv when it is full, and 3 MiB packets always do.
runs='1 auto      auto auto auto               auto  auto auto caller -
2 kbinomial 1    rd   dissemination      1000  1    auto thread -
2 auto      auto ab   auto               auto  auto pml  caller -
3 binomial  auto flat recursive_doubling 4096  2    pml  auto   -
4 kbinomial 2    flat flat               65536 16   shm  thread -
5 chain     auto rd   recursive_doubling 1000  3    auto caller -
6 kbinomial auto auto flat               4096  1    pml  thread -
7 flat      auto flat tree               auto  1    auto auto   -
8 kbinomial 3    ab   recursive_doubling 1000  1    shm  thread -
8 chain     auto rd   dissemination      4096  1    pml  caller -
6 binary    auto ab   recursive_doubling 65536 1    auto thread -
4 binary    auto rd   tree               1000  2    pml  caller -
2 binary    auto rd   auto               1048576 8  shm  thread -
3 flat      auto ab   auto               3145728 2  shm  thread -
2 auto      auto auto auto               auto  auto ucx  thread -
3 binomial  auto ab   recursive_doubling 4096  2    ucx  caller -
4 binomial  auto flat recursive_doubling 4096  2    ucx  caller -
4 kbinomial 2    rd   dissemination      65536 4    ucx  thread -
5 kbinomial 7    auto auto               auto  16   auto auto   nicoll,tuned,basic,libnbc,self'
# The several-MB message of test_coll (--large) for a run: 16 windows' worth of bytes where the
# flow-control window (credits x packet size) is under 64 KiB. A sender waits for a credit
# return every window, and on a loaded machine, with ranks yielding their cores to other
# processes, each wait can cost a scheduler time slice: a 3 MiB message in 1000-byte packets
# with one credit took minutes beside two busy loops, where the run's other checks take seconds.
large_for() { # PACKET CREDITS
    case $1$2 in
        *[!0-9]*) echo 3145733 ;;
        *) if [ $(($1 * $2)) -lt 65536 ]; then echo $((16 * $1 * $2 + 1)); else echo 3145733; fi ;;
    esac
}

seed=0
while read -r np bcast k allgather barrier packet credits transport progress list; do
    [ -n "$np" ] || continue
    seed=$((seed + 1))
    [ "$list" = - ] && list=$components
    [ "$against" = nicoll ] || list=$components
    launch "$np" --mca coll "$list" \
        --mca coll_nicoll_bcast_algorithm "$bcast" --mca coll_nicoll_bcast_k "$k" \
        --mca coll_nicoll_allgather_algorithm "$allgather" \
        --mca coll_nicoll_barrier_algorithm "$barrier" \
        --mca coll_nicoll_packet_size "$packet" --mca coll_nicoll_credits "$credits" \
        --mca coll_nicoll_transport "$transport" --mca coll_nicoll_progress "$progress" \
        "$program" $flags --packet-size "$(packet_sizes "$packet" "$np")" --seed "$seed" \
        --large "$(large_for "$packet" "$credits")"
    report "[bcast $bcast k=$k, allgather $allgather, barrier $barrier, packet $packet, credits $credits, transport $transport, progress $progress, $list]"
done <<RUNS
$runs
RUNS

# The progress thread alone carries nonblocking collectives to completion: test_coll's offload
# section starts three and makes no MPI call until nicoll's counter coll_nicoll_offloaded shows
# them complete, each rank late in turn; then each rank but the root in turn starts an
# MPI_Ibcast only after the others completed theirs, which its thread's forwarding allows. Over
# shared memory (the thread woken by its doorbells) and UCX (woken by the worker's event fd),
# broadcasting along a chain, where every rank but the last forwards. With the caller
# progressing, the same section fails: the check can tell.
# The thread's priority (coll_nicoll_progress_priority): realtime gives each process a SCHED_FIFO
# thread where the kernel allows it (chrt can tell), normal none; where the kernel refuses,
# realtime says so in one line and the thread runs at normal priority (a process without
# CAP_SYS_NICE, through setpriv, where this one has it).
if [ "$against" = nicoll ]; then
    realtime= # (without chrt, unchecked)
    if command -v chrt >/dev/null; then
        realtime=no
        chrt -f 1 true 2>/dev/null && realtime=yes
    fi
    for case in "2 auto realtime $realtime" "3 shm normal no" "4 auto auto" "3 ucx realtime $realtime"; do
        set -- $case
        launch "$1" --mca coll "$components" --mca coll_nicoll_progress thread \
            --mca coll_nicoll_progress_priority "$3" \
            --mca coll_nicoll_transport "$2" --mca coll_nicoll_bcast_algorithm chain \
            "$program" $flags --sections offload,nonblocking,outstanding --large 100000 \
            --packet-size "$(packet_sizes auto "$1")" ${4:+--realtime-threads "$4"}
        report "[progress thread, priority $3, transport $2]"
    done
    if [ "$realtime" = yes ] && command -v setpriv >/dev/null &&
       setpriv --bounding-set=-sys_nice true 2>/dev/null; then
        launch 2 --mca coll "$components" --mca coll_nicoll_progress thread \
            --mca coll_nicoll_progress_priority realtime \
            setpriv --bounding-set=-sys_nice \
            "$program" $flags --sections offload --large 100000 --realtime-threads no
        report "[progress thread, priority realtime refused]"
        check "coll_nicoll_progress_priority realtime refused by the kernel: one line per process names it" \
            test "$(grep -c 'coll_nicoll_progress_priority realtime: the kernel refuses' "$log")" -eq 2
    else
        tap ok "coll_nicoll_progress_priority realtime refused # SKIP no real-time priority or setpriv here"
    fi
    launch 2 --mca coll "$components" --mca coll_nicoll_progress caller \
        "$program" --sections offload --offload-wait 1
    sed 's/^/# expected: /' "$log" | grep -E 'not ok' | head -1
    check "the offload check fails where the caller alone progresses (coll_nicoll_progress caller)" \
        grep -q '^not ok - .*offload round' "$log"
else
    tap ok "the progress thread completes collectives # SKIP nicoll not in the coll list"
fi

# Invalid values: one warning naming the variable (and the value) and correct results.
invalid1='bcast_algorithm=bogus bcast_k=0 allgather_algorithm=ring9 barrier_algorithm=butterfly packet_size=-5 credits=+8 transport=tcp progress=nic fault=sendx verbose=2x'
invalid2='bcast_algorithm=binomial,chain bcast_k=abc allgather_algorithm=rd2 barrier_algorithm=dissemination2 packet_size=12abc credits=-3 shm_limit=+64 stats=5 progress_priority=fast fault=send:0 priority=abc'
for invalid in "$invalid1" "$invalid2"; do
    set --
    for pair in $invalid; do set -- "$@" --mca "coll_nicoll_${pair%%=*}" "${pair#*=}"; done
    launch 3 --mca coll "$components" "$@" \
        "$program" $flags --sections blocking,nonblocking,barrier --large 100000 \
        --packet-size "$(packet_sizes auto 3)"
    report "[invalid: $invalid]"
    for pair in $invalid; do
        what="invalid coll_nicoll_${pair%%=*}=${pair#*=}: a warning names the variable and the value"
        if [ "$against" != nicoll ]; then
            tap ok "$what # SKIP nicoll not in the coll list"
        elif grep -E "coll_nicoll_${pair%%=*}([^a-z_]|\$)" "$log" | grep -qF -- "${pair#*=}"; then
            tap ok "$what"
        else
            tap not-ok "$what"
        fi
    done
done

# --expect-nicoll must fail where nicoll did not run the collectives: not loaded at all, and
# loaded but outranked by tuned. The failures it printed are shown as comments.
expect_failure() { # DESCRIPTION: the last launch ran to its end and its nicoll checks failed
    sed 's/^/# expected: /' "$log" | grep -E 'not ok|nicoll' | head -4
    if [ "$status" -eq 0 ] && grep -q '^# checks' "$log" &&
       grep -q '^not ok - .*nicoll ran all' "$log"; then
        tap ok "$1"
    else
        tap not-ok "$1"
    fi
}
quick="--uniform-bcast --sections barrier,blocking --large 1000 --packet-size 100"
launch 2 --mca coll tuned,basic,libnbc,self "$program" --expect-nicoll $quick
expect_failure "--expect-nicoll fails where nicoll is not loaded (--mca coll tuned,basic,libnbc,self)"
launch 2 --mca coll nicoll,tuned,basic,libnbc,self --mca coll_nicoll_priority 0 \
    "$program" --expect-nicoll $quick
expect_failure "--expect-nicoll fails where tuned outranks nicoll (coll_nicoll_priority 0)"

# coll_nicoll_stats: 1 prints per-collective lines at MPI_Finalize on rank 0, 2 on every rank.
stats_lines() { grep -v -e '^ok' -e '^not ok' -e '^#' "$log" | grep -i nicoll | grep -cw "$1"; }
if [ "$against" = nicoll ]; then
    for level in 1 2; do
        launch 3 --mca coll "$components" --mca coll_nicoll_stats "$level" \
            "$program" $flags --sections blocking,nonblocking,barrier --large 1000
        report "[coll_nicoll_stats $level]"
        for c in barrier bcast allgather ibarrier ibcast iallgather; do
            eval "stats_${c}_$level=\$(stats_lines $c)"
        done
    done
    for c in barrier bcast allgather ibarrier ibcast iallgather; do
        eval "one=\$stats_${c}_1 every=\$stats_${c}_2"
        check "coll_nicoll_stats 1 prints $c on one rank ($one lines), 2 on each of 3 ($every lines)" \
            test "$one" -ge 1 -a "$every" -eq $((3 * one))
    done
else
    tap ok "coll_nicoll_stats prints per-collective lines # SKIP nicoll not in the coll list"
fi
tap_done
