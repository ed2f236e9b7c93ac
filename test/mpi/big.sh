#!/bin/sh
# Messages of more than 2 GiB through nicoll on 2 ranks (tuned left out, so nicoll must serve);
# test/mpi/test_big.c says what each TAP line checks. About 9 GiB of memory in all.
. "$top_srcdir/test/lib.sh"

out=$(mpirun_test -np 2 --mca coll nicoll,basic,libnbc,self "$top_builddir/test/mpi/test_big" 2>&1)
status=$?
lines=0
while IFS= read -r line; do
    case $line in
        "ok - "*) lines=$((lines + 1)) && tap ok "${line#ok - }" ;;
        "not ok - "*) lines=$((lines + 1)) && tap not-ok "${line#not ok - }" ;;
        1..*) ;;
        *) echo "# $line" ;;
    esac
done <<OUT
$out
OUT
if [ "$status" -ne 0 ] || [ "$lines" -ne 3 ]; then
    tap not-ok "mpirun exited $status after $lines of 3 checks"
fi
tap_done
