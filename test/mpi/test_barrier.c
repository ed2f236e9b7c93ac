/*
 * MPI_Barrier under mpirun, with nicoll forced: thousands of barriers on MPI_COMM_WORLD, on
 * split and duplicated communicators, and interleaved across them.
 *
 * A barrier is correct when no rank leaves it before every rank has entered it. All ranks run on
 * one machine, so CLOCK_MONOTONIC is one clock for all of them: each rank records when it entered
 * and left every barrier, rank 0 gathers the records (with another component's MPI_Gather) and
 * checks, barrier by barrier, that the latest entry precedes the earliest exit. Random delays
 * before entering vary which rank comes last. A rank that arrives late by a measured delay must
 * hold every other rank that long. Finally the MPI_T counter coll_nicoll_barrier_calls must have
 * grown by exactly the number of barriers called on communicators of two or more ranks (nicoll
 * declines size 1), which proves nicoll, not a fallback, ran them.
 *
 * Output is TAP lines without numbers (test/mpi/barrier.sh numbers them), from rank 0 only.
 * usage: test_barrier [iterations]
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../../examples/nicoll_pvar.h"
#include "mpi_test.h"

static int world_rank, world_size;
static long long nicoll_expected; /* barriers nicoll must have run on this rank */


static int barrier(MPI_Comm comm)
{
    int size;
    MPI_Comm_size(comm, &size);
    if (size > 1) {
        ++nicoll_expected;
    }
    return MPI_Barrier(comm);
}

/* Runs `n` barriers on `comm` with random entry delays and checks every one on comm's rank 0.
 * Returns 1 when all synchronised; `*errors` counts MPI errors. */
static int synchronised_barriers(MPI_Comm comm, int n, unsigned seed, int *errors)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    double *mine = malloc(2 * n * sizeof(double));
    double *all = 0 == rank ? malloc((size_t) 2 * n * size * sizeof(double)) : NULL;
    srand(seed * 7919u + (unsigned) world_rank);
    for (int i = 0; i < n; ++i) {
        if (rand() % 4 == 0) {
            spin_us(rand() % 50);
        }
        mine[2 * i] = now_us();
        *errors += MPI_SUCCESS != barrier(comm);
        mine[2 * i + 1] = now_us();
    }
    MPI_Gather(mine, 2 * n, MPI_DOUBLE, all, 2 * n, MPI_DOUBLE, 0, comm);
    int ok = 1;
    if (0 == rank) {
        for (int i = 0; i < n && ok; ++i) {
            double last_entry = all[2 * i], first_exit = all[2 * i + 1];
            for (int r = 0; r < size; ++r) {
                const double *rec = all + (size_t) 2 * n * r + 2 * i;
                if (rec[0] > last_entry) last_entry = rec[0];
                if (rec[1] < first_exit) first_exit = rec[1];
            }
            if (first_exit < last_entry) {
                printf("# barrier %d: a rank left at %.1f us, %.1f us before the last entered\n",
                       i, first_exit, last_entry - first_exit);
                ok = 0;
            }
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    free(all);
    free(mine);
    return ok;
}

/* Each rank in turn enters `delay_us` late; every other rank must be held until it entered. */
static void late_rank_holds_everyone(double delay_us)
{
    int ok = 1, errors = 0;
    double min_hold = 1e300;
    for (int late = 0; late < world_size; ++late) {
        errors += MPI_SUCCESS != barrier(MPI_COMM_WORLD);
        double entered = now_us();
        if (world_rank == late) {
            spin_us(delay_us);
            entered = now_us();
        }
        errors += MPI_SUCCESS != barrier(MPI_COMM_WORLD);
        double left = now_us();
        double late_entered = entered;
        MPI_Bcast(&late_entered, 1, MPI_DOUBLE, late, MPI_COMM_WORLD);
        if (world_rank != late) {
            if (left < late_entered) {
                printf("# rank %d left %.1f us before late rank %d entered\n", world_rank,
                       late_entered - left, late);
                ok = 0;
            }
            if (left - entered < min_hold) min_hold = left - entered;
        }
    }
    double hold;
    MPI_Reduce(&min_hold, &hold, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    char what[160];
    snprintf(what, sizeof what,
             "late rank (%.0f us) holds every other rank: shortest hold %.0f us", delay_us,
             world_size > 1 ? hold : 0.0);
    tap_report(ok && 0 == errors, what);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    int provided;
    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    nicoll_counter_t counter;
    int have_counter = 0 == nicoll_counter_open(&counter, "coll_nicoll_barrier_calls");
    char what[160];

    int errors = 0;
    int ok = synchronised_barriers(MPI_COMM_WORLD, n, 1, &errors);
    snprintf(what, sizeof what, "MPI_COMM_WORLD: %d barriers, every exit after every entry", n);
    tap_report(ok && 0 == errors, what);

    late_rank_holds_everyone(20000.0);

    MPI_Comm halves, dup;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_size - world_rank, &halves);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(halves, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);

    errors = 0;
    ok = synchronised_barriers(halves, n / 2, 2, &errors);
    snprintf(what, sizeof what, "split (even/odd, reversed order): %d barriers synchronise", n / 2);
    tap_report(ok && 0 == errors, what);

    errors = 0;
    ok = synchronised_barriers(dup, n / 2, 3, &errors);
    snprintf(what, sizeof what, "duplicate of MPI_COMM_WORLD: %d barriers synchronise", n / 2);
    tap_report(ok && 0 == errors, what);

    errors = 0;
    ok = 1;
    for (int i = 0; i < n / 4; ++i) {
        ok &= synchronised_barriers(i % 2 ? dup : halves, 1, 4 + i, &errors);
        ok &= synchronised_barriers(MPI_COMM_WORLD, 1, 5 + i, &errors);
    }
    snprintf(what, sizeof what, "interleaved on three communicators: %d barriers synchronise",
             2 * (n / 4));
    tap_report(ok && 0 == errors, what);

    MPI_Comm_free(&halves);
    MPI_Comm_free(&dup);

    unsigned long long counted = 0;
    have_counter = have_counter && 0 == nicoll_counter_read(&counter, &counted);
    ok = have_counter && (long long) counted == nicoll_expected;
    if (!ok && 0 == world_rank) {
        if (have_counter) {
            printf("# rank 0: coll_nicoll_barrier_calls counted %llu, expected %lld\n", counted,
                   nicoll_expected);
        } else {
            printf("# rank 0: MPI_T counter coll_nicoll_barrier_calls not found: nicoll is not "
                   "loaded\n");
        }
    }
    snprintf(what, sizeof what, "nicoll ran every barrier on communicators of 2+ ranks (%lld)",
             nicoll_expected);
    tap_report(ok, what);

    if (have_counter) {
        nicoll_counter_close(&counter);
    }
    MPI_T_finalize();
    MPI_Finalize();
    return 0;
}
