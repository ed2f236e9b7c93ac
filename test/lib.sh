# Shared by the shell tests: the environment `./bootstrap env` prints for this build, and TAP.
# Sourced with top_srcdir and top_builddir set (make check's AM_TESTS_ENVIRONMENT does it).
NICOLL_BUILD_DIR=$top_builddir
export NICOLL_BUILD_DIR
if ! nicoll_env=$("$top_srcdir/bootstrap" env); then
    echo "Bail out! ./bootstrap env failed"
    exit 99
fi
eval "$nicoll_env"

tap_count=0
tap() { # tap ok|not-ok DESCRIPTION
    tap_count=$((tap_count + 1))
    if [ "$1" = ok ]; then echo "ok $tap_count - $2"; else echo "not ok $tap_count - $2"; fi
}
check() { # check DESCRIPTION COMMAND...: ok when COMMAND succeeds
    check_what=$1
    shift
    if "$@"; then tap ok "$check_what"; else tap not-ok "$check_what"; fi
}
tap_done() { echo "1..$tap_count"; }

# test_coll_ran LOG: after a test_coll job whose output is in LOG and whose exit status is in
# $status, sets `checks` (what test_coll says it ran) and `passed`; all_passed then says whether
# the job ran to its end with every check passing.
test_coll_ran() {
    checks=$(sed -n 's/^# checks \([0-9]*\)$/\1/p' "$1")
    passed=$(grep -c '^ok - ' "$1")
}
all_passed() { [ "$status" -eq 0 ] && [ -n "$checks" ] && [ "$checks" -eq "$passed" ] && [ "$passed" -gt 0 ]; }

# mpirun for tests: oversubscribed, yielding when idle, shared memory only; killed after
# $mpirun_timeout seconds (600 unless the test sets it). Each rank's output is printed whole, rank
# by rank (its stdout, then its stderr), then mpirun's own: mpirun forwards ranks' output in
# chunks that can split a line, so on a busy machine a line of one rank could otherwise land in
# the middle of another's. Each mpirun keeps its session directory under a folder of its own: two
# tests run at once, and Open MPI 4.1's jobs share /tmp/ompi.HOST.UID, which one job's end removes
# while another creates its directory there (orte_init failed in session_dir.c beside two busy
# loops, once).
mpirun_test() {
    mpirun_run --mca btl self,vader "$@"
}

# mpirun_nodes NODES SLOTS MPIRUN-ARGS...: mpirun_test over NODES emulated nodes of SLOTS slots
# each (node1, node2, ...), every one a UTS namespace of this machine with its own host name
# (test/mpi/emulate-node.sh), so that Open MPI sees NODES hosts; TCP between them, on loopback.
# Unbound: each node's daemon would bind its ranks from the machine's first core on, piling the
# ranks of every node onto the same cores.
# nodes_unavailable says why this machine cannot emulate nodes, if it cannot.
mpirun_nodes() {
    nodes_hosts=$(mktemp) || return 1
    nodes_i=1
    while [ "$nodes_i" -le "$1" ]; do
        echo "node$nodes_i slots=$2"
        nodes_i=$((nodes_i + 1))
    done >"$nodes_hosts"
    shift 2
    mpirun_run --hostfile "$nodes_hosts" --bind-to none \
        --mca plm_rsh_agent "$top_srcdir/test/mpi/emulate-node.sh" \
        --mca btl self,vader,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo "$@"
    nodes_status=$?
    rm -f "$nodes_hosts"
    return $nodes_status
}
nodes_unavailable() {
    nodes_why=$(unshare --uts true 2>&1) && return 1
    echo "unshare --uts is not allowed here (${nodes_why:-no reason given})"
}

mpirun_run() {
    mpirun_out=$(mktemp -d) || return 1
    timeout "${mpirun_timeout:-600}" "$MPIRUN" --oversubscribe --mca mpi_yield_when_idle 1 \
        --mca btl_vader_single_copy_mechanism none --mca orte_tmpdir_base "$mpirun_out" \
        --output-filename "$mpirun_out/ranks:nojobid,nocopy" "$@" >"$mpirun_out/mpirun" 2>&1
    mpirun_status=$?
    mpirun_rank=0
    while [ -d "$mpirun_out/ranks/rank.$mpirun_rank" ]; do
        cat "$mpirun_out/ranks/rank.$mpirun_rank/stdout" "$mpirun_out/ranks/rank.$mpirun_rank/stderr" \
            2>/dev/null
        mpirun_rank=$((mpirun_rank + 1))
    done
    cat "$mpirun_out/mpirun"
    rm -rf "$mpirun_out"
    return $mpirun_status
}
