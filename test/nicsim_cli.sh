#!/bin/sh
# The nicsim command: version, help, algorithm list, and one clear line for bad input.
. "$top_srcdir/test/lib.sh"
nicsim=$top_builddir/nicsim/nicsim

check "nicsim --version prints the version" sh -c '"$1" --version | grep -q "^nicsim [0-9]"' _ "$nicsim"
check "nicsim --help prints usage and exits 0" sh -c '"$1" --help | grep -q "^usage: nicsim"' _ "$nicsim"
check "nicsim algorithms lists the barrier algorithms" \
    sh -c '"$1" algorithms | grep -q "dissemination" && "$1" algorithms | grep -q "recursive_doubling"' _ "$nicsim"
check "nicsim with an unknown option names it on one line and exits 2" \
    sh -c 'out=$("$1" --bogus 2>&1); test $? -eq 2 && test "$(printf "%s\n" "$out" | wc -l)" -eq 1 &&
           printf "%s\n" "$out" | grep -q -- "--bogus"' _ "$nicsim"
tap_done
