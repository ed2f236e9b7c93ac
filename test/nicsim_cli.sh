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
bad_input "nodes < 1 is refused" "--nodes 0" bcast --nodes 0
bad_input "negative sizes are refused" "--bytes -5" bcast --bytes -5
bad_input "k out of range is refused" "k out of range" bcast --nodes 16 --tree kbinomial:5
bad_input "kbinomial needs --nodes" "--nodes" kbinomial
bad_input "an unknown option is named" "--speed" throughput --speed 3
bad_input "a bad model parameter is named" "tns=-1" bcast --set tns=-1
bad_input "an unknown tree is named" "--tree star" bcast --tree star
bad_input "a missing value is named" "--bytes" bcast --bytes
bad_input "an unwritable trace is named" "--trace /nonexistent/t.json" bcast --trace /nonexistent/t.json

check "kbinomial marks the optimal k (n = 16, m = 16: k = 1)" \
    sh -c '"$1" kbinomial --nodes 16 --packets 16 | grep -E "^ +1 .*optimal"' _ "$nicsim"
check "bcast --json prints one JSON object with the latency" \
    sh -c 'out=$("$1" bcast --preset kesavan97 --bytes 640 --json) && test "$(printf "%s\n" "$out" | wc -l)" -eq 1 &&
           printf "%s\n" "$out" | grep -q "^{\"command\":\"bcast\".*\"latency_us\":[0-9.]*,\"done_us\":\[.*}$"' _ "$nicsim"
check "bcast lists every node up to 64 nodes and summarises beyond" \
    sh -c '"$1" bcast --preset kesavan97 --nodes 64 --bytes 64 | grep -q " 63: *[0-9.]*$" &&
           out=$("$1" bcast --preset kesavan97 --nodes 65 --bytes 64) &&
           printf "%s\n" "$out" | grep -q "^receivers done (us): first [0-9.]*, median [0-9.]*, last [0-9.]*" &&
           test "$(printf "%s\n" "$out" | wc -l)" -eq 5' _ "$nicsim"
check "throughput prints MB/s" \
    sh -c '"$1" throughput --preset lfc-myrinet --nodes 4 --bytes 4096 | grep -q "^throughput: [0-9.]* MB/s"' _ "$nicsim"
trace=$(mktemp)
check "bcast --trace writes a trace with NIC and link tracks" \
    sh -c '"$1" bcast --preset lfc-myrinet --nodes 8 --bytes 2048 --trace "$2" >/dev/null &&
           grep -q "\"traceEvents\"" "$2" && grep -q "\"name\":\"nic 3\"" "$2" && grep -q "sw" "$2" &&
           tail -1 "$2" | grep -q "]}"' _ "$nicsim" "$trace"
rm -f "$trace"
check "identical input gives identical output" \
    sh -c 'a=$("$1" bcast --preset kesavan97 --bytes 4096 --tree optimal --json) &&
           b=$("$1" bcast --preset kesavan97 --bytes 4096 --tree optimal --json) && test "$a" = "$b"' _ "$nicsim"

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
