#!/bin/sh
# Tuning files in real jobs (man nicoll-tuning(5)):
# - a broken file: exactly one warning per job (rank 0 of MPI_COMM_WORLD), naming the file,
#   line:column, JSON path and reason; every test_coll check still passes on the embedded default;
# - a file forcing each algorithm of each collective: at verbose level 20 nicoll names the
#   algorithm of every call, and every call of that collective ran exactly the forced one (and
#   nicoll-bench's MPI_T counter shows nicoll ran all of them);
# - nonblocking sections, MCA variables over the file, verbose 10 naming the loaded file.
. "$top_srcdir/test/lib.sh"

components=nicoll,basic,libnbc,self
mpirun_timeout=${NICOLL_TEST_TIMEOUT:-150}
bench=$top_builddir/examples/nicoll-bench
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
log=$dir/log

# A table forcing ALGORITHM for the collectives C... (and nothing else: the other sections are
# the embedded default's).
forcing() { # ALGORITHM FILE C...
    algorithm=$1 file=$2
    shift 2
    sections=
    for c in "$@"; do
        case $c in
            *barrier) bytes= ;;
            *) bytes='"bytes": [0, "inf"], ' ;;
        esac
        sections="$sections, \"$c\": [{\"comm_size\": [2, \"inf\"], $bytes\"algorithm\": \"$algorithm\"}]"
    done
    printf '{"version": 1%s}\n' "$sections" >"$file"
}

# ran_only C ALGORITHM: every verbose decision line for C names ALGORITHM, and there is one.
ran_only() {
    n=$(grep -c "nicoll: $1 on MPI_COMM_WORLD (cid 0), [0-9]* bytes: algorithm $2 " "$log")
    all=$(grep -o "nicoll: $1 on MPI_COMM_WORLD (cid 0), [0-9]* bytes: algorithm [a-z_]* " "$log" | grep -c .)
    calls=$(sed -n 's/^# run by nicoll: \([0-9]*\) of \([0-9]*\) .*/\1 \2/p' "$log")
    # coll_nicoll_stats 1: the calls rank 0 posted with each algorithm of the collective's table
    table=${1#i}
    counters=$(sed -n "s/.*nicoll: stats rank 0 $table algorithms://p" "$log")
    others=$(printf '%s\n' "$counters" | awk -v a="$2" '{ for (i = 1; i < NF; i += 2) if ($i != a) n += $(i + 1) } END { print n + 0 }')
    mine=$(printf '%s\n' "$counters" | awk -v a="$2" '{ for (i = 1; i < NF; i += 2) if ($i == a) print $(i + 1) }')
    echo "# $1 $2: $n of $all decisions, run by nicoll (rank 0): ${calls:-none}; counters:$counters"
    # (a job that printed no decision at all: what it printed instead, to tell why)
    [ "$all" -gt 0 ] || tail -n 15 "$log" | sed 's/^/#   /'
    # nicoll-bench's own bcasts (of its parameters) count too: at least every benchmarked call
    [ "$n" -gt 0 ] && [ "$n" -eq "$all" ] && [ -n "$calls" ] && [ "${calls% *}" -ge "${calls#* }" ] &&
        [ "${mine:-0}" -gt 0 ] && [ "$others" -eq 0 ]
}

# 1. A broken file (an unknown algorithm): one warning, correct results.
printf '{"version": 1,\n "bcast": [{"comm_size": [2, "inf"], "bytes": [0, "inf"], "algorithm": "ring"}]}\n' \
    >"$dir/broken.json"
mpirun_test -np 4 --mca coll "$components" --mca coll_nicoll_tuning_file "$dir/broken.json" \
    "$top_builddir/test/mpi/test_coll" --expect-nicoll --sections blocking,nonblocking,barrier \
    --large 100000 --packet-size 65536,4000 >"$log" 2>&1
status=$?
want="nicoll: tuning file $dir/broken.json:2:72: \$.bcast[0].algorithm: unknown algorithm \"ring\" for bcast (known: auto, binomial, binary, chain, flat, kbinomial); using the embedded default table"
one_warning() { [ "$(grep -cF -- "$want" "$log")" -eq 1 ] && [ "$(grep -c 'nicoll: tuning file' "$log")" -eq 1 ]; }
check "broken file: exactly one warning per job, naming file, line:col, path and reason" one_warning
test_coll_ran "$log"
echo "# test_coll: $passed of ${checks:-?} checks passed, exit $status"
grep '^not ok' "$log" | head -5 | sed 's/^/# /'
check "broken file: every test_coll check passes on the embedded default (4 ranks)" all_passed

# 2. A file forcing each algorithm.
for case in bcast:binomial bcast:binary bcast:chain bcast:flat bcast:kbinomial \
            allgather:rd allgather:ab allgather:flat barrier:dissemination \
            barrier:recursive_doubling barrier:tree barrier:flat ibcast:chain iallgather:ab \
            ibarrier:recursive_doubling ibarrier:tree ibarrier:flat; do
    coll=${case%%:*} algorithm=${case#*:}
    # a nonblocking collective's blocking form too, which nicoll-bench itself calls (bcast)
    forcing "$algorithm" "$dir/force.json" "$coll" $([ "$coll" = "${coll#i}" ] || echo "${coll#i}")
    mpirun_test -np 3 --mca coll "$components" --mca coll_nicoll_verbose 20 --mca coll_nicoll_stats 1 \
        --mca coll_nicoll_tuning_file "$dir/force.json" "$bench" "$coll" --sizes 1,4096,200000 \
        -i 3 -x 1 >"$log" 2>&1
    check "file forcing $coll $algorithm: every $coll call ran $algorithm (verbose and counters)" \
        ran_only "$coll" "$algorithm"
done

# 3. The MCA variable overrides the file; verbose 10 names the file loaded.
forcing chain "$dir/force.json" bcast
mpirun_test -np 3 --mca coll "$components" --mca coll_nicoll_verbose 20 --mca coll_nicoll_stats 1 \
    --mca coll_nicoll_tuning_file "$dir/force.json" --mca coll_nicoll_bcast_algorithm binary \
    "$bench" bcast --sizes 4096 -i 3 -x 1 >"$log" 2>&1
check "coll_nicoll_bcast_algorithm=binary overrides a file forcing chain" ran_only bcast binary
check "verbose 10 names the tuning file loaded, on every rank" \
    [ "$(grep -c "nicoll: tuning file $dir/force.json loaded" "$log")" -eq 3 ]
# The nonblocking form borrows the blocking form's rules.
mpirun_test -np 3 --mca coll "$components" --mca coll_nicoll_verbose 20 --mca coll_nicoll_stats 1 \
    --mca coll_nicoll_tuning_file "$dir/force.json" "$bench" ibcast --sizes 4096 -i 3 -x 1 >"$log" 2>&1
check "ibcast without a section of its own follows bcast's rules (chain)" ran_only ibcast chain

# A rule saying auto: kbinomial for bcast; for allgather rd while the result fits in one packet
# (3 x 100 bytes), ab beyond (3 x 100000 bytes, packets of 65536).
forcing auto "$dir/force.json" allgather
mpirun_test -np 3 --mca coll "$components" --mca coll_nicoll_verbose 20 \
    --mca coll_nicoll_tuning_file "$dir/force.json" "$bench" allgather --sizes 100,100000 -i 3 -x 1 >"$log" 2>&1
auto_allgather() {
    grep -q "nicoll: allgather on MPI_COMM_WORLD (cid 0), 100 bytes: algorithm rd " "$log" &&
        grep -q "nicoll: allgather on MPI_COMM_WORLD (cid 0), 100000 bytes: algorithm ab " "$log" &&
        ! grep -q "nicoll: allgather on MPI_COMM_WORLD (cid 0), 100 bytes: algorithm ab " "$log" &&
        ! grep -q "nicoll: allgather on MPI_COMM_WORLD (cid 0), 100000 bytes: algorithm rd " "$log"
}
check "a rule saying auto: allgather rd for one packet's result, ab beyond" auto_allgather

# Locality: a rule for one node and 3 processes per node comes before the general rule; on this
# machine (one node, 3 ranks) it decides every bcast (which all run after the locality is
# gathered), and a rule for 2+ nodes never does.
cat >"$dir/locality.json" <<'JSON'
{"version": 1,
 "bcast": [{"comm_size": [2, "inf"], "bytes": [0, "inf"], "nodes": [2, "inf"], "algorithm": "binary"},
           {"comm_size": [2, "inf"], "bytes": [0, "inf"], "nodes": 1, "ppn": 3, "algorithm": "chain"},
           {"comm_size": [2, "inf"], "bytes": [0, "inf"], "algorithm": "binomial"}]}
JSON
mpirun_test -np 3 --mca coll "$components" --mca coll_nicoll_verbose 20 --mca coll_nicoll_stats 1 \
    --mca coll_nicoll_tuning_file "$dir/locality.json" "$bench" bcast --sizes 4096 -i 3 -x 1 >"$log" 2>&1
check "a rule with nodes 1 and ppn 3 decides on one node of 3 ranks (chain)" ran_only bcast chain

# The fabric: a rule for shared memory decides where the ranks share memory, and not where they
# are told to use the PML (its rule for pml decides there).
cat >"$dir/fabric.json" <<'JSON'
{"version": 1,
 "bcast": [{"comm_size": [2, "inf"], "bytes": [0, "inf"], "fabric": "shm", "algorithm": "chain"},
           {"comm_size": [2, "inf"], "bytes": [0, "inf"], "fabric": "pml", "algorithm": "binary"},
           {"comm_size": [2, "inf"], "bytes": [0, "inf"], "algorithm": "binomial"}]}
JSON
for case in auto:chain pml:binary; do
    transport=${case%%:*} algorithm=${case#*:}
    mpirun_test -np 3 --mca coll "$components" --mca coll_nicoll_verbose 20 --mca coll_nicoll_stats 1 \
        --mca coll_nicoll_transport "$transport" --mca coll_nicoll_tuning_file "$dir/fabric.json" \
        "$bench" bcast --sizes 4096 -i 3 -x 1 >"$log" 2>&1
    check "a rule with a fabric decides for coll_nicoll_transport $transport ($algorithm)" \
        ran_only bcast "$algorithm"
done

# Packet sizes and credits from a file: the transport section's for the communicator, a bcast
# rule's for its calls; test_coll's packet-boundary counts at both, every check passing.
cat >"$dir/packets.json" <<'JSON'
{"version": 1,
 "transport": [{"comm_size": [2, "inf"], "packet_size": 4096, "credits": 2}],
 "bcast": [{"comm_size": [2, "inf"], "bytes": [0, "inf"], "algorithm": "kbinomial", "packet_size": 1000}]}
JSON
mpirun_test -np 3 --mca coll "$components" --mca coll_nicoll_verbose 10 \
    --mca coll_nicoll_tuning_file "$dir/packets.json" "$top_builddir/test/mpi/test_coll" --expect-nicoll \
    --sections blocking,nonblocking --large 100000 --packet-size 1000,4096 >"$log" 2>&1
status=$?
test_coll_ran "$log"
echo "# test_coll: $passed of ${checks:-?} checks passed, exit $status"
grep '^not ok' "$log" | head -5 | sed 's/^/# /'
check "a file's packet sizes (transport 4096, bcast 1000) and credits (2): every test_coll check passes" all_passed
check "... and the communicator runs with the transport section's packet size and credits" \
    grep -q "nicoll: communicator MPI_COMM_WORLD (cid 0, size 3): .*packet_size=4096 credits=2" "$log"

# 4. calibrate writes a preset that generate --model takes.
tune=$top_builddir/tuning/nicoll-tune
# A busy machine (make check runs tests side by side) can drown the sizes, and calibrate then
# refuses to write a preset: it gets three tries.
for try in 1 2 3; do
    "$tune" calibrate --bench "$bench" --iterations 50 --out "$dir/machine.json" \
        --mpirun-args "--mca orte_tmpdir_base $dir --mca btl self,vader --mca btl_vader_single_copy_mechanism none" >"$log" 2>&1 &&
        break
done
sed 's/^/# /' "$log"
check "calibrate measures t0, r_inf, n_1/2 and the per-packet overhead" \
    grep -q '"measured": {"one_way_latency_us": [0-9.]*, "t0_us": [-0-9.]*, "r_inf_mbs": [0-9.]*, "n_half_bytes": [-0-9]*, "per_packet_us": [0-9.]*, "forward_per_packet_us": [0-9.]*}' \
    "$dir/machine.json"
# (Calibrated beside a load, a preset can put the NIC's per-packet costs far above its links';
# the model's 256-node all-to-all broadcast of 1 MiB blocks then has ranks wait longer than
# nack_timeout, which must not set off a NACK storm: docs/measurements.md.)
"$tune" generate --model "$dir/machine.json" --comm-sizes 4,256 --sizes 8,1M --out "$dir/t.json" 2>"$log"
sed 's/^/# /' "$log" | tail -3
check "generate --model takes calibrate's preset and writes a valid file" \
    sh -c '"$1" validate "$2" | grep -q ": valid, "' _ "$tune" "$dir/t.json"
# 5. generate --measure over a tiny grid: every candidate runs (with --ks and --packet-sizes
# parameter sets), the progress line ends done, and the file validates.
"$tune" generate --measure --np 2 --sizes 4k --ks 2 --packet-sizes 1k --iterations 5 --runs 1 \
    --bench "$bench" --mpirun-args "--mca orte_tmpdir_base $dir --mca btl self,vader --mca btl_vader_single_copy_mechanism none" \
    --out "$dir/measured.json" 2>"$log"
tr '\r' '\n' <"$log" | tail -2 | sed 's/^/# /'
measured() {
    "$tune" validate "$dir/measured.json" | grep -q ": valid, " &&
        grep -q '"bcast np 2 4096 B kbinomial k=2 packet=1k": [0-9.]*' "$dir/measured.json" &&
        grep -q '"allgather np 2 4096 B ab packet=1k": [0-9.]*' "$dir/measured.json" &&
        tr '\r' '\n' <"$log" | grep -q '^\[#*\] 22/22  done in '
}
check "generate --measure: 22 runs (2 packet sizes x 9 data candidates + 4 barriers), progress to done, a valid file" measured
# 6. generate --measure over 2 emulated nodes of 2 slots (test/lib.sh's set-up): 2 ranks fill
# one node, 4 both; the 4-rank rules hold only over several nodes, with auto for one node.
if why=$(nodes_unavailable); then
    tap ok "generate --measure over emulated nodes # SKIP $why"
else
    printf 'node1 slots=2\nnode2 slots=2\n' >"$dir/hosts"
    "$tune" generate --measure --np 2,4 --sizes 4k --iterations 5 --runs 1 --bench "$bench" \
        --mpirun-args "--mca orte_tmpdir_base $dir --hostfile $dir/hosts --bind-to none --mca plm_rsh_agent $top_srcdir/test/mpi/emulate-node.sh --mca btl self,vader,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo -x UCX_TLS=tcp,self -x UCX_NET_DEVICES=lo" \
        --out "$dir/nodes.json" 2>"$log"
    scoped() {
        "$tune" validate "$dir/nodes.json" | grep -q ": valid, " &&
            grep -q '"layout": "2 ranks on 1 node, 4 ranks on 2 nodes' "$dir/nodes.json" &&
            grep -q '{"comm_size": \[4, 4\], "nodes": \[2, "inf"\], "bytes": \[0, "inf"\], "algorithm": "[a-z]*"' "$dir/nodes.json" &&
            grep -q '{"comm_size": \[4, 4\], "bytes": \[0, "inf"\], "algorithm": "auto"}' "$dir/nodes.json" &&
            ! grep -q '"comm_size": \[2, 3\], "nodes"' "$dir/nodes.json"
    }
    check "generate --measure over 2 emulated nodes: the 4-rank rules say nodes [2, inf], auto on one node; the provenance has the layout" scoped
fi
tap_done
