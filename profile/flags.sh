#!/bin/sh
# profile/flags.sh MODE SRCDIR BUILDDIR CC CXX: the compiler flags that build the engine and the
# component with the profile in profile/ (README.md there), for the build in BUILDDIR whose
# sources are SRCDIR (as its Makefile names them). MODE: auto or yes, the counts where this build
# is the one they were made by, else nothing; generate, instrumented, to make them; no, nothing;
# identity, the build's identity instead (profile/made-with is the one the counts were made by):
# its C and C++ compilers, and its sources, by path and checksum. Run by configure and, on every
# make, by the Makefile (pgo-flags), so that a source changed since leaves the counts out at once:
# GCC stops where a function has lost its counts and its caller kept them.
mode=$1 srcdir=$2 build=$3 cc=$4 cxx=$5
identity() {
    $cc --version 2>/dev/null | sed 1q
    $cxx --version 2>/dev/null | sed 1q
    echo "sources $srcdir, checksum $(cd "$srcdir" && find coll nicsim -type f \
        \( -name '*.c' -o -name '*.cc' -o -name '*.h' \) | LC_ALL=C sort | xargs cat | cksum |
        cut -d' ' -f1)"
}
case $mode in
    identity) identity ;;
    generate) echo "-fprofile-generate=$build/profile -fprofile-prefix-path=$build -fprofile-update=atomic" ;;
    no) ;;
    *)
        if [ "$(identity)" = "$(cat "$srcdir/profile/made-with" 2>/dev/null)" ]; then
            echo "-fprofile-use=$(cd "$srcdir" && pwd)/profile -fprofile-prefix-path=$build" \
                "-fprofile-partial-training -Wno-missing-profile -Wno-coverage-mismatch"
        fi
        ;;
esac
