#!/bin/sh
# MPI_Barrier through nicoll (tuned left out, so nicoll must serve it) for 1..8 ranks, every
# barrier algorithm; test/mpi/test_barrier.c says what each TAP line checks.
. "$top_srcdir/test/lib.sh"

iterations=${NICOLL_TEST_BARRIERS:-1000}
expected_lines=6
for np in 1 2 3 4 5 6 7 8; do
    for algorithm in dissemination recursive_doubling tree flat; do
        started=$(date +%s)
        out=$(mpirun_test -np "$np" --mca coll nicoll,basic,libnbc,self \
                  --mca coll_nicoll_barrier_algorithm "$algorithm" \
                  "$top_builddir/test/mpi/test_barrier" "$iterations" 2>&1)
        status=$?
        echo "# mpirun -np $np $algorithm: $(($(date +%s) - started)) s"
        lines=$(printf '%s\n' "$out" | grep -cE '^(not )?ok - ')
        printf '%s\n' "$out" | grep -vE '^(not )?ok - ' | sed 's/^/# /'
        printf '%s\n' "$out" | sed -nE 's/^(not ok|ok) - (.*)$/\1|\2/p' |
            while IFS='|' read -r result what; do
                echo "$result - $algorithm: $what"
            done
        if [ "$status" -ne 0 ] || [ "$lines" -ne "$expected_lines" ]; then
            echo "not ok - np=$np $algorithm: mpirun exited $status after $lines of $expected_lines checks"
        fi
    done
done | awk '/^(not )?ok - /{ n++; sub(/ - /, " " n " - "); print; next } { print } END { print "1.." n + 0 }'
