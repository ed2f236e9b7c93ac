#!/bin/sh
# The nicsim command: version and help, each subcommand's output forms, one clear line and exit
# status 2 for bad input, and a man page that documents every option, parameter and preset the
# command declares.
. "$top_srcdir/test/lib.sh"
nicsim=$top_builddir/nicsim/nicsim
man=$top_srcdir/man/nicsim.1

check "nicsim --version prints the version" sh -c '"$1" --version | grep -q "^nicsim [0-9]"' _ "$nicsim"
check "nicsim --help prints usage and exits 0" sh -c '"$1" --help | grep -q "^usage: nicsim"' _ "$nicsim"
check "nicsim algorithms lists the barrier algorithms and tree shapes" \
    sh -c '"$1" algorithms | grep -q "dissemination" && "$1" algorithms | grep -q "kbinomial"' _ "$nicsim"

# bad_input DESCRIPTION WORD ARGS...: exit 2 and exactly one line that names WORD
bad_input() {
    what=$1 word=$2
    shift 2
    check "$what" sh -c 'out=$("$@" 2>&1 >/dev/null); test $? -eq 2 &&
        test "$(printf "%s\n" "$out" | wc -l)" -eq 1 && printf "%s\n" "$out" | grep -q -- "$0"' \
        "$word" "$nicsim" "$@"
}
bad_input "an unknown command is named" --bogus --bogus
bad_input "an unknown preset is named" "--preset nope" bcast --preset nope
bad_input "a broadcast with host forwarding refuses GM's protocol" "p2p_flow=gm" \
    bcast --preset gm-lanai9 --forwarding host
bad_input "nodes < 1 is refused" "--nodes 0" bcast --nodes 0
bad_input "negative sizes are refused" "--bytes -5" bcast --bytes -5
bad_input "k out of range is refused" "k out of range" bcast --nodes 16 --tree kbinomial:5
bad_input "a collective that gives up names --loss, not a broken invariant" \
    "the collective gave up: .*--loss 0.999" allgather --nodes 4 --bytes 100 --loss 0.999
bad_input "a parameter set twice is refused (--nodes and --set nodes=)" "nodes is set twice" \
    bcast --nodes 4 --set nodes=8
bad_input "a k that is not a number is named so" "kbinomial:abc: k is not a number" \
    bcast --nodes 16 --tree kbinomial:abc
bad_input "lfc pt2pt whose mtu leaves fewer than two default sizes asks for --sizes" \
    "mtu 8 leaves fewer than two" pt2pt --layer lfc --set mtu=8
bad_input "a late host outside the cluster is named" "--late 4" bcast --nodes 4 --skew 10 --late 4
bad_input "a negative skew is refused" "--skew -3" bcast --skew -3
bad_input "--late without --skew is refused" "only with --skew" bcast --nodes 4 --late 2
bad_input "--skew is refused where it is not modeled" "--skew: only with --protocol lfc" bcast --protocol fmmc --skew 5
bad_input "kbinomial needs --nodes" "--nodes" kbinomial
bad_input "an unknown option is named" "--speed" throughput --speed 3
bad_input "a bad model parameter is named" "tns=-1" bcast --set tns=-1
bad_input "an unknown tree is named" "--tree star" bcast --tree star
bad_input "a missing value is named" "--bytes" bcast --bytes
bad_input "an unwritable trace is named" "--trace /nonexistent/t.json" bcast --trace /nonexistent/t.json
bad_input "plot needs --out" "--out" plot
bad_input "an unwritable plot is named" "--out /nonexistent/p.svg" plot --out /nonexistent/p.svg
check "plot names a line that is not SERIES X Y and exits 2" \
    sh -c 'out=$(printf "a 1 2\nb 3\n" | "$1" plot --out "$2" 2>&1); test $? -eq 2 &&
           printf "%s\n" "$out" | grep -q "line 2"' _ "$nicsim" "${TMPDIR:-/tmp}/nicsim_cli_bad.svg"
for case in "1 nan" "1e308 1" "0 1 --log-x"; do
    set -- $case
    check "plot refuses a $1 $2${3:+ with $3} (a value it cannot draw), naming the line" \
        sh -c 'out=$(printf "a %s %s\n" "$1" "$2" | "$0" plot --out "$4" $3 2>&1); test $? -eq 2 &&
               printf "%s\n" "$out" | grep -q "line 1: a"' \
        "$nicsim" "$1" "$2" "${3:-}" "${TMPDIR:-/tmp}/nicsim_cli_bad.svg"
done
check "plot draws one line per series through every point" \
    sh -c 'printf "nicoll 1 0.5\nnicoll 1024 0.9\ntuned 1 0.6\ntuned 1024 1.1\n" |
           "$1" plot --out "$2" --log-x --title t && test "$(grep -c "<circle" "$2")" -eq 4 &&
           test "$(grep -c "<polyline" "$2")" -eq 2 && grep -q ">tuned<" "$2"; s=$?; rm -f "$2"; exit $s' \
    _ "$nicsim" "${TMPDIR:-/tmp}/nicsim_cli_plot.svg"

check "kbinomial marks the optimal k (n = 16, m = 16: k = 1)" \
    sh -c '"$1" kbinomial --nodes 16 --packets 16 | grep -qE "^ +1 .*optimal"' _ "$nicsim"
# A late host (--skew): where the NICs forward, a late forwarder delays only itself; where the
# hosts forward, its subtree waits for it (4 nodes, binomial: node 2 forwards to node 3).
check "bcast --skew: a late forwarder holds up its subtree with host forwarding only" \
    sh -c 'node3() { "$1" bcast --nodes 4 --bytes 4096 --forwarding "$2" $3 --json |
                     sed "s/.*\"done_us\":\[\([^]]*\)\].*/\1/" | cut -d, -f4; }
           on=$(node3 "$1" fpfs) late=$(node3 "$1" fpfs "--skew 2000 --late 2") &&
           hon=$(node3 "$1" host) hlate=$(node3 "$1" host "--skew 2000 --late 2") &&
           test "$on" = "$late" && awk -v a="$hon" -v b="$hlate" "BEGIN { exit !(a < 2000 && b > 2000) }"' _ "$nicsim"
check "bcast --json prints one JSON object with the latency" \
    sh -c 'out=$("$1" bcast --preset kesavan97 --bytes 640 --json) && test "$(printf "%s\n" "$out" | wc -l)" -eq 1 &&
           printf "%s\n" "$out" | grep -q "^{\"command\":\"bcast\".*\"latency_us\":[0-9.]*,\"done_us\":\[.*}$"' _ "$nicsim"
check "bcast lists every node up to 64 nodes and summarises beyond" \
    sh -c '"$1" bcast --preset kesavan97 --nodes 64 --bytes 64 | grep -q " 63: *[0-9.]*$" &&
           out=$("$1" bcast --preset kesavan97 --nodes 65 --bytes 64) &&
           printf "%s\n" "$out" | grep -q "^receivers done (us): first [0-9.]*, median [0-9.]*, last [0-9.]*" &&
           test "$(printf "%s\n" "$out" | wc -l)" -eq 6' _ "$nicsim"
check "throughput prints MB/s" \
    sh -c '"$1" throughput --preset lfc-myrinet --nodes 4 --bytes 4096 | grep -q "^throughput: [0-9.]* MB/s"' _ "$nicsim"
check "throughput of empty and large messages: 4096 and 16 messages by default" \
    sh -c '"$1" throughput --preset lfc-myrinet --nodes 4 --bytes 0 --json | grep -q "\"messages\":4096," &&
           "$1" throughput --preset lfc-myrinet --nodes 4 --bytes 1048576 --json | grep -q "\"messages\":16,"' _ "$nicsim"
trace=$(mktemp)
check "bcast --trace writes a trace with NIC and link tracks" \
    sh -c '"$1" bcast --preset lfc-myrinet --nodes 8 --bytes 2048 --trace "$2" >/dev/null &&
           grep -q "\"traceEvents\"" "$2" && grep -q "\"name\":\"nic 3\"" "$2" && grep -q "sw" "$2" &&
           tail -1 "$2" | grep -q "]}"' _ "$nicsim" "$trace"
rm -f "$trace"
check "identical input gives identical output" \
    sh -c 'a=$("$1" bcast --preset kesavan97 --bytes 4096 --tree optimal --json) &&
           b=$("$1" bcast --preset kesavan97 --bytes 4096 --tree optimal --json) && test "$a" = "$b"' _ "$nicsim"

# alltoall (Bhoedjang et al. §5.2): Table 1's columns with recovery, exit status 3 and the stuck queues
# without it, bad input.
check "alltoall prints per-sender throughput and Table 1's columns" \
    sh -c 'out=$("$1" alltoall --preset lfc-myrinet --nodes 8 --bytes 8192 --tree chain) &&
           printf "%s\n" "$out" | grep -q "^per-sender throughput: [0-9.]* MB/s" &&
           printf "%s\n" "$out" | grep -q "^deadlock recovery (Table 1): [0-9.]* recoveries and [0-9.]* recovery packets per multicast"' _ "$nicsim"
check "alltoall without recovery reports a chain's deadlock and exits 3" \
    sh -c 'out=$("$1" alltoall --preset lfc-myrinet --nodes 8 --bytes 8192 --tree chain --deadlock-recovery off);
           test $? -eq 3 && printf "%s\n" "$out" | grep -q "^deadlock: no event left, 8 NICs hold blocked sends: node 0: to [0-9]* ([0-9]* packets)"' _ "$nicsim"
check "alltoall --json without recovery names the stuck NICs" \
    sh -c 'out=$("$1" alltoall --preset lfc-myrinet --nodes 8 --bytes 8192 --tree chain --deadlock-recovery off --json);
           test $? -eq 3 && printf "%s\n" "$out" | grep -q "\"deadlocked\":true,\"stuck\":\[{\"node\":0,\"blocked\":\[{\"to\":"' _ "$nicsim"
check "throughput and alltoall run FM/MC with --protocol fmmc" \
    sh -c '"$1" throughput --preset lfc-myrinet --nodes 8 --bytes 4096 --protocol fmmc | grep -q "^FM/MC: [0-9]* credit requests, [0-9]* token hops" &&
           "$1" alltoall --preset lfc-myrinet --nodes 8 --bytes 4096 --protocol fmmc --json | grep -q "\"protocol\":\"fmmc\".*\"per_sender_mb_s\":[0-9.]*"' _ "$nicsim"
bad_input "FM/MC refuses a tree other than binary" "--tree chain" throughput --protocol fmmc --tree chain
bad_input "an unknown protocol is named" "--protocol gm" bcast --protocol gm
bad_input "alltoall names a bad recovery switch" "--deadlock-recovery maybe" alltoall --deadlock-recovery maybe
bad_input "alltoall names a tree it does not take" "--tree kbinomial" alltoall --tree kbinomial

# allgather and barrier (Yu et al.): output forms, every algorithm, loss and NACKs, bad input.
check "allgather prints the header, latency with bandwidth, host CPU and packets" \
    sh -c 'out=$("$1" allgather --preset gm-lanai9 --bytes 4096 --algorithm ab) &&
           printf "%s\n" "$out" | grep -q "^allgather: gm-lanai9, 16 nodes, 4096 bytes per node, algorithm ab$" &&
           printf "%s\n" "$out" | grep -q "^latency: [0-9.]* us (the last host to complete); bandwidth [0-9.]* MB/s per host$" &&
           printf "%s\n" "$out" | grep -q "^host CPU per node (us): least [0-9.]*, median [0-9.]*, most [0-9.]*$" &&
           printf "%s\n" "$out" | grep -q " 15: *[0-9.]*$" &&
           printf "%s\n" "$out" | grep -q "^packets: [0-9]* sent, 0 lost; 0 NACKs (0 passed up), 0 retransmitted, 0 duplicates$"' _ "$nicsim"
check "allgather --json prints one valid JSON object with latency, bandwidth, host CPU, packets, NACKs" \
    sh -c 'out=$("$1" allgather --preset gm-lanai9 --bytes 1024 --json) && test "$(printf "%s\n" "$out" | wc -l)" -eq 1 &&
           printf "%s\n" "$out" | python3 -c "import json, sys
d = json.load(sys.stdin)
assert d[\"command\"] == \"allgather\" and d[\"algorithm\"] == \"rd\" and d[\"nodes\"] == 16 and d[\"bytes\"] == 1024
for f in (\"latency_us\", \"bandwidth_mb_s\", \"host_cpu_us_median\", \"packets\", \"nacks\", \"retransmissions\"):
    assert isinstance(d[f], (int, float)), f
assert d[\"latency_us\"] > 0 and d[\"bandwidth_mb_s\"] > 0 and d[\"packets\"] > 0
assert len(d[\"host_cpu_us\"]) == 16 and len(d[\"done_us\"]) == 16 and max(d[\"done_us\"]) == d[\"latency_us\"]
assert d[\"late_node\"] == -1"' _ "$nicsim"
for algorithm in ab rd host-rd host-ring; do
    check "allgather --algorithm $algorithm runs on gm-lanai9, 16 nodes, and names what ran" \
        sh -c 'out=$("$1" allgather --preset gm-lanai9 --bytes 8192 --algorithm "$2" --json) &&
               printf "%s\n" "$out" | python3 -c "import json, sys
d = json.load(sys.stdin)
assert d[\"algorithm\"] == sys.argv[1] and d[\"nodes\"] == 16 and d[\"latency_us\"] > 0" "$2"' _ "$nicsim" "$algorithm"
done
check "host-based allgathers count the whole collective as host CPU time, NIC-based ones ts + tr" \
    sh -c '"$1" allgather --preset gm-lanai9 --bytes 4096 --algorithm host-ring --json | python3 -c "import json, sys
d = json.load(sys.stdin)
assert d[\"host_cpu_us\"] == d[\"done_us\"]" &&
           "$1" allgather --preset gm-lanai9 --bytes 4096 --algorithm rd --json | python3 -c "import json, sys
d = json.load(sys.stdin)
assert all(c == 2 for c in d[\"host_cpu_us\"])"' _ "$nicsim"
check "host-rd on gm-lanai9 runs over GM: 64 KB overflows its receivers, which it reports" \
    sh -c '"$1" allgather --preset gm-lanai9 --bytes 65536 --algorithm host-rd | grep -q "^GM: [0-9]* data packets sent again" &&
           "$1" allgather --preset gm-lanai9 --bytes 65536 --algorithm host-rd --json | python3 -c "import json, sys
d = json.load(sys.stdin)
assert d[\"gm_dropped_full\"] > 0 and d[\"gm_resent\"] >= d[\"gm_dropped_full\"] and d[\"gm_nacks\"] > 0
assert d[\"packets\"] > d[\"gm_acks\"] + d[\"gm_nacks\"]" &&
           "$1" allgather --preset gm-lanai9 --bytes 65536 --algorithm host-rd --set p2p_flow=credits --json | python3 -c "import json, sys
d = json.load(sys.stdin)
assert \"gm_resent\" not in d"' _ "$nicsim"
check "allgather on ab with --loss 0.05 completes, losing packets and sending NACKs" \
    sh -c '"$1" allgather --preset gm-lanai9 --bytes 4096 --algorithm ab --loss 0.05 --json | python3 -c "import json, sys
d = json.load(sys.stdin)
assert d[\"loss\"] == 0.05 and d[\"lost_packets\"] > 0 and d[\"nacks\"] > 0 and d[\"retransmissions\"] > 0
assert len(d[\"done_us\"]) == 16"' _ "$nicsim"
check "allgather on ab without loss sends no NACK" \
    sh -c '"$1" allgather --preset gm-lanai9 --bytes 4096 --algorithm ab --json | python3 -c "import json, sys
d = json.load(sys.stdin)
assert d[\"lost_packets\"] == 0 and d[\"nacks\"] == 0 and d[\"retransmissions\"] == 0"' _ "$nicsim"
check "allgather whose packets wait at their senders longer than nack_timeout resends little and completes" \
    sh -c '"$1" allgather --preset lfc-myrinet --set topology=crossbar --set link_bw=158.3 --set mtu=65536 \
           --set switch_latency=0 --set tns=21.4 --set tnr=21.4 --bytes 1048576 --algorithm ab --nodes 64 --json |
           python3 -c "import json, sys
d = json.load(sys.stdin)
assert d[\"lost_packets\"] == 0 and d[\"duplicates\"] * 20 < d[\"packets\"], d
assert d[\"latency_us\"] < 1e6, d[\"latency_us\"]"' _ "$nicsim"
check "allgather --skew makes one host, drawn with the seed, post late and the latency include it" \
    sh -c 'out=$("$1" allgather --preset gm-lanai9 --bytes 4096 --algorithm ab --skew 2000 --set nack_timeout=10000) &&
           printf "%s\n" "$out" | grep -q "^node [0-9]* posted 2000.00 us late$" &&
           "$1" allgather --preset gm-lanai9 --bytes 4096 --algorithm ab --skew 2000 --set nack_timeout=10000 --json |
           python3 -c "import json, sys
d = json.load(sys.stdin)
assert 0 <= d[\"late_node\"] < 16 and d[\"latency_us\"] > 2000 and d[\"nacks\"] == 0"' _ "$nicsim"
check "allgather with loss repeats exactly for one seed" \
    sh -c 'a=$("$1" allgather --preset gm-lanai9 --bytes 4096 --algorithm rd --loss 0.05 --seed 7 --json) &&
           b=$("$1" allgather --preset gm-lanai9 --bytes 4096 --algorithm rd --loss 0.05 --seed 7 --json) && test "$a" = "$b"' _ "$nicsim"
bad_input "allgather names an unknown algorithm" "--algorithm bogus" allgather --algorithm bogus
bad_input "allgather refuses --loss 1" "--loss 1" allgather --loss 1
bad_input "allgather refuses a negative --loss" "--loss -0.1" allgather --loss -0.1
bad_input "allgather refuses --loss on a host-based algorithm" "--loss" allgather --algorithm host-rd --loss 0.01
bad_input "allgather refuses a negative --skew" "--skew -1" allgather --skew -1
bad_input "allgather refuses --bytes beyond 2^40" "--bytes 1099511627777" allgather --bytes 1099511627777
bad_input "allgather refuses blocks of more than 2^24 packets on the NICs" "--bytes 1099511627776" \
    allgather --preset gm-lanai9 --algorithm ab --bytes 1099511627776
bad_input "allgather refuses a --seed that is not a number" "--seed abc" allgather --seed abc
bad_input "barrier has no --loss" "--loss" barrier --loss 0.1

for algorithm in nic:dissemination host:host-dissemination dissemination:dissemination \
    host-recursive_doubling:host-recursive_doubling tree:tree host-tree:host-tree flat:flat \
    host-flat:host-flat; do
    check "barrier --algorithm ${algorithm%%:*} runs on gm-lanai9 and runs ${algorithm#*:}" \
        sh -c '"$1" barrier --preset gm-lanai9 --algorithm "$2" | grep -q "^barrier: gm-lanai9, 16 nodes, algorithm $3$" &&
               "$1" barrier --preset gm-lanai9 --algorithm "$2" --json | python3 -c "import json, sys
d = json.load(sys.stdin)
assert d[\"command\"] == \"barrier\" and d[\"algorithm\"] == sys.argv[1] and d[\"latency_us\"] > 0
assert \"bandwidth_mb_s\" not in d and \"bytes\" not in d and d[\"nacks\"] == 0" "$3"' \
        _ "$nicsim" "${algorithm%%:*}" "${algorithm#*:}"
done
bad_input "barrier names an unknown algorithm" "--algorithm bogus" barrier --algorithm bogus
trace=$(mktemp)
check "allgather and barrier --trace write files that json.load accepts" \
    sh -c '"$1" allgather --preset gm-lanai9 --bytes 4096 --algorithm ab --loss 0.05 --trace "$2" >/dev/null &&
           python3 -c "import json, sys; assert json.load(open(sys.argv[1]))[\"traceEvents\"]" "$2" &&
           "$1" barrier --preset gm-lanai9 --algorithm host --trace "$2" >/dev/null &&
           python3 -c "import json, sys; assert json.load(open(sys.argv[1]))[\"traceEvents\"]" "$2"' _ "$nicsim" "$trace"
rm -f "$trace"

# Hardware-based multicast trees (Coll et al.): nicsim hwtree, and bcast/barrier on quadrics-elan3.
check "hwtree prints Fig. 4's groups and two steps, 8 -> [7,15] first" \
    sh -c 'out=$("$1" hwtree --nodes 16 --faulty 1,6 --source 8) &&
           printf "%s\n" "$out" | grep -q "^groups: \[0,0\] \[2,5\] \[7,15\]$" &&
           printf "%s\n" "$out" | grep -q "^step 1: 8 -> \[7,15\]$" &&
           printf "%s\n" "$out" | grep -q "^depth: 2 steps$"' _ "$nicsim"
check "hwtree --json and --dot describe the same tree" \
    sh -c 'dot=$(mktemp) && "$1" hwtree --nodes 64 --faulty 3,20,41 --source 10 --planner optimal --dot "$dot" --json |
           python3 -c "import json, sys
d = json.load(sys.stdin)
assert d[\"depth\"] == len(d[\"steps\"]) and d[\"faulty\"] == [3, 20, 41] and d[\"decided\"]
reached = sorted(v for step in d[\"steps\"] for m in step for v in range(m[\"lo\"], m[\"hi\"] + 1))
assert set(reached) | {10} == set(range(64)) - {3, 20, 41}
arrows = sum(1 for line in open(sys.argv[1]) if \"->\" in line)
assert arrows == sum(len(step) for step in d[\"steps\"])" "$dot"; r=$?; rm -f "$dot"; exit $r' _ "$nicsim"
check "hwtree --trials prints the depth distribution and the planning time" \
    sh -c 'out=$("$1" hwtree --nodes 1024 --faulty-percent 1 --trials 20 --seed 3) &&
           printf "%s\n" "$out" | grep -qE "^ +2 +20 +1.000$" &&
           printf "%s\n" "$out" | grep -q "^planning time per tree (wall clock): median"' _ "$nicsim"
check "barrier on quadrics-elan3: the hardware tree beats the software tree with 3 faulty" \
    sh -c 'h=$("$1" barrier --preset quadrics-elan3 --faulty 4,9,30 --json | python3 -c "import json,sys; print(json.load(sys.stdin)[\"latency_us\"])") &&
           s=$("$1" barrier --preset quadrics-elan3 --faulty 4,9,30 --tree software --json | python3 -c "import json,sys; print(json.load(sys.stdin)[\"latency_us\"])") &&
           python3 -c "import sys; assert float(sys.argv[2]) >= 1.8 * float(sys.argv[1])" "$h" "$s"' _ "$nicsim"
trace=$(mktemp)
check "bcast on quadrics-elan3 --trace writes a trace with switch links" \
    sh -c '"$1" bcast --preset quadrics-elan3 --bytes 4096 --tree hardware --trace "$2" >/dev/null &&
           python3 -c "import json, sys; assert json.load(open(sys.argv[1]))[\"traceEvents\"]" "$2" && grep -q "sw(" "$2"' _ "$nicsim" "$trace"
rm -f "$trace"
bad_input "hwtree refuses a faulty source" "the source is faulty" hwtree --nodes 16 --faulty 3 --source 3
bad_input "hwtree refuses a node out of range" "--faulty 16" hwtree --nodes 16 --faulty 16
bad_input "hwtree needs --nodes" "--nodes" hwtree --faulty 3
bad_input "hwtree --trials needs --faulty-percent" "--trials" hwtree --nodes 16 --trials 3
bad_input "bcast refuses hardware multicast over a gap" "--tree hardware" bcast --preset quadrics-elan3 --faulty 7 --tree hardware
bad_input "bcast refuses a faulty root" "the source is faulty" bcast --preset quadrics-elan3 --faulty 2 --root 2
bad_input "a fattree refuses an odd number of switch ports" "switch_ports=5" barrier --preset quadrics-elan3 --set switch_ports=5
bad_input "a fattree refuses more nodes than its 10 levels hold" "--nodes 2048" barrier --preset quadrics-elan3 --set switch_ports=4 --nodes 2048
bad_input "barrier refuses --faulty off the fattree" "--faulty" barrier --preset gm-lanai9 --faulty 2

# Point to point (Pakin et al.): nicsim pt2pt through FM and LFC, its output forms and bad input.
check "pt2pt prints a row per size and t0, r-inf and n-half" \
    sh -c 'out=$("$1" pt2pt --preset fm-sparc --packets 500 --round-trips 5 --sizes 16,256,2048) &&
           printf "%s\n" "$out" | grep -q "^pt2pt: preset fm-sparc, layer fm (loop streamed, io hybrid, buffers on, flow on, interpret off)" &&
           printf "%s\n" "$out" | grep -qE "^ +2048 +[0-9.]+ +[0-9.]+ +[0-9.]+$" &&
           printf "%s\n" "$out" | grep -qE "^t0 [0-9.]+ us, r-inf [0-9.]+ MB/s .*n-half [0-9]+ bytes"' _ "$nicsim"
check "pt2pt --json gives t0, r-inf, n-half, and t0 x r-inf beside it, for fm and lfc" \
    sh -c 'for layer in fm lfc; do "$1" pt2pt --preset fm-sparc --layer $layer --packets 300 --round-trips 3 --json |
           python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d[\"command\"] == \"pt2pt\" and d[\"layer\"] == sys.argv[1] and len(d[\"points\"]) == 8
assert d[\"t0_us\"] > 0 and d[\"r_inf_mbs\"] > 0 and 0 < d[\"n_half\"] <= d[\"n_half_linear\"] * (1 + 1e-9)
assert abs(d[\"n_half_linear\"] - d[\"t0_us\"] * d[\"r_inf_mbs\"]) < 1e-6 * d[\"n_half_linear\"]
" $layer || exit 1; done' _ "$nicsim"
bad_input "pt2pt refuses an unknown layer" "--layer gm" pt2pt --preset fm-sparc --layer gm
bad_input "pt2pt refuses an unknown io" "--io pci" pt2pt --preset fm-sparc --io pci
bad_input "pt2pt refuses an unknown loop" "--loop fast" pt2pt --preset fm-sparc --loop fast
bad_input "pt2pt refuses flow control without buffers" "--flow on" pt2pt --preset fm-sparc --buffers off --flow on
bad_input "pt2pt refuses flow control without hosts" "needs hosts" pt2pt --preset fm-sparc --io none --flow on
bad_input "pt2pt refuses FM options with lfc" "only with --layer fm" pt2pt --preset fm-sparc --layer lfc --io dma
bad_input "pt2pt refuses a bad size" "'x'" pt2pt --preset fm-sparc --sizes 16,x
bad_input "pt2pt refuses a single size" "two different sizes" pt2pt --preset fm-sparc --sizes 64
bad_input "pt2pt lfc refuses sizes above the mtu" "mtu" pt2pt --preset fm-sparc --layer lfc --sizes 64,4096

# A long simulation says it is running: one line on stderr after 10 s (a broadcast of 1 TiB runs
# for hours; stopped once the line is there, or after 60 s).
check "a simulation running for 10 s prints a progress line on stderr" sh -c '
    err=$(mktemp); "$1" bcast --nodes 64 --bytes 1099511627776 > /dev/null 2> "$err" & pid=$!
    i=0; while [ $i -lt 60 ] && ! grep -q . "$err"; do sleep 1; i=$((i + 1)); done
    kill $pid; wait $pid 2> /dev/null
    grep -q "^nicsim bcast: running for [0-9]* s: [0-9]* events, simulated time [0-9.]* us$" "$err"
    status=$?; rm -f "$err"; exit $status' _ "$nicsim"

# Every option, parameter and preset the command declares appears in the man page.
missing=""
for cmd in $("$nicsim" --help | sed -n 's/^  \([a-z]*\) .*/\1/p'); do
    grep -q "^\.BI\{0,1\} \"\{0,1\}$cmd\b" "$man" || missing="$missing $cmd"
    for opt in $("$nicsim" "$cmd" --help | sed -n 's/^  \(--[a-z-]*\).*/\1/p'); do
        grep -qF -- "$(printf '%s' "$opt" | sed 's/-/\\-/g')" "$man" || missing="$missing $cmd:$opt"
    done
done
for param in $("$nicsim" params | awk '{print $1}'); do
    grep -q "^\.B.*\b$param\b" "$man" || missing="$missing $param"
done
for preset in $("$nicsim" presets | sed -n 's/^\([a-z0-9-]*\):.*/\1/p'); do
    grep -q "^\.B $preset\$" "$man" || missing="$missing $preset"
done
check "the man page documents every command, option, parameter and preset${missing:+ (missing:$missing)}" \
    test -z "$missing"
tap_done
