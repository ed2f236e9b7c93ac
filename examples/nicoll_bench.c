/*
 * nicoll-bench: collective latency, OSU style, with proof of which component ran.
 *
 *   mpirun -np 4 --mca coll nicoll,tuned,basic,libnbc,self nicoll-bench barrier [--iterations N]
 *
 * Each iteration is timed on every rank; an iteration's latency is the slowest rank's. Rank 0
 * prints the median, 10th and 90th percentiles in microseconds, and how many of the calls the
 * nicoll component ran (its MPI_T counter coll_nicoll_barriers), one "key value" per line.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nicoll_pvar.h"

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static int usage(int rank, const char *why)
{
    if (0 == rank) {
        fprintf(stderr, "nicoll-bench: %s\nusage: nicoll-bench barrier [--iterations N] [--warmup N]\n",
                why);
    }
    return 2;
}

int main(int argc, char **argv)
{
    int rank, size, provided;
    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int iterations = 1000, warmup = 100, rc = 0;
    char why[160] = "";
    if (argc < 2 || 0 != strcmp(argv[1], "barrier")) {
        snprintf(why, sizeof why, "%s: unknown collective (known: barrier)", argc < 2 ? "(none)" : argv[1]);
    }
    for (int i = 2; i < argc && !why[0]; i += 2) {
        int *target = 0 == strcmp(argv[i], "--iterations") ? &iterations
                      : 0 == strcmp(argv[i], "--warmup")   ? &warmup
                                                           : NULL;
        char *end = NULL;
        long v = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : -1;
        if (NULL == target) {
            snprintf(why, sizeof why, "%s: unknown option", argv[i]);
        } else if (NULL == end || '\0' != *end || v < 1 || v > 100000000) {
            snprintf(why, sizeof why, "%s %s: expected an integer in 1..100000000", argv[i],
                     i + 1 < argc ? argv[i + 1] : "(missing)");
        } else {
            *target = (int) v;
        }
    }
    if (why[0]) {
        rc = usage(rank, why);
        MPI_T_finalize();
        MPI_Finalize();
        return rc;
    }

    nicoll_counter_t counter;
    unsigned long long by_nicoll = 0;
    int counted = 0 == nicoll_counter_open(&counter, "coll_nicoll_barriers");

    double *mine = malloc(iterations * sizeof(double));
    double *slowest = malloc(iterations * sizeof(double));
    for (int i = 0; i < warmup; ++i) {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    for (int i = 0; i < iterations; ++i) {
        double t0 = MPI_Wtime();
        MPI_Barrier(MPI_COMM_WORLD);
        mine[i] = (MPI_Wtime() - t0) * 1e6;
    }
    if (counted) {
        counted = 0 == nicoll_counter_read(&counter, &by_nicoll);
        nicoll_counter_close(&counter);
    }
    MPI_Reduce(mine, slowest, iterations, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    if (0 == rank) {
        qsort(slowest, iterations, sizeof(double), compare_doubles);
        printf("collective MPI_Barrier\nranks %d\niterations %d\n", size, iterations);
        printf("median_us %.2f\np10_us %.2f\np90_us %.2f\n", slowest[iterations / 2],
               slowest[iterations / 10], slowest[iterations * 9 / 10]);
        if (counted) {
            printf("run_by_nicoll %llu of %d\n", by_nicoll, warmup + iterations);
        } else {
            printf("run_by_nicoll 0 of %d (nicoll not loaded)\n", warmup + iterations);
        }
    }
    free(slowest);
    free(mine);
    MPI_T_finalize();
    MPI_Finalize();
    return rc;
}
