/* What the MPI test programs share: a TAP line agreed over MPI_COMM_WORLD, and a clock
 * (CLOCK_MONOTONIC in microseconds) with a busy wait that makes a rank late without giving up its
 * core. */
#ifndef NICOLL_MPI_TEST_H
#define NICOLL_MPI_TEST_H

#include <mpi.h>
#include <stdio.h>
#include <time.h>

/* Prints one TAP line on world rank 0; `ok` is combined over all ranks. Collective on world. */
static inline int tap_report(int ok, const char *what)
{
    int all_ok, rank, size;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (0 == rank) {
        printf("%s - np=%d %s\n", all_ok ? "ok" : "not ok", size, what);
        fflush(stdout);
    }
    return all_ok;
}

static inline double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static inline void spin_us(double us)
{
    double until = now_us() + us;
    while (now_us() < until) {
    }
}

#endif /* NICOLL_MPI_TEST_H */
