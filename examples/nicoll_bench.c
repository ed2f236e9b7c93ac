/*
 * nicoll-bench: collective latency, OSU style, with proof of which component ran.
 *
 *   mpirun -np 4 --mca coll nicoll,tuned,basic,libnbc,self nicoll-bench bcast [options]
 *
 * Collectives: bcast, allgather, barrier (the columns of OSU's osu_bcast, osu_allgather,
 * osu_barrier) and ibcast, iallgather, ibarrier (osu_ibcast, osu_iallgather, osu_ibarrier).
 *
 * Blocking: every rank times each call; iterations are separated by a one-int MPI_Allreduce (not
 * by MPI_Barrier as in OSU: nicoll runs MPI_Barrier, and the separator, which sets how far apart
 * the ranks start, must be the same for the components compared), or with --osu by MPI_Barrier,
 * as OSU's own loop does (then the component under test runs the separator too); barriers follow
 * each other with no separator. "Avg Latency(us)" is the mean over ranks of each rank's mean; -f
 * adds the least and the greatest of those per-rank means and the iteration count. "Median(us)",
 * after OSU's columns, is the median over the iterations of the slowest rank's time: less moved
 * by a descheduled process on an oversubscribed machine. "Period(us)", before it, is an iteration
 * of the loop, separator included (from one call's end to the next's; its median over the
 * iterations, the mean over ranks): which rank's call holds a wait the separator left (a rank
 * that left it early waits in the call for one that left late) moves Median, not Period.
 *
 * Nonblocking: first "Pure Comm.(us)", the mean time of start + MPI_Wait; then each iteration
 * starts the collective, computes for that long (calling MPI_Test -t times, spread out), and
 * waits. "Overall(us)" is the mean time of the whole iteration, "Compute(us)" of the compute
 * without the MPI_Test calls, "Overlap(%)" = 100 - 100 * (Overall - Compute) / Pure Comm., at
 * least 0: the share of the communication hidden behind the compute. -f adds the time spent
 * starting the collective, in MPI_Test and in MPI_Wait, and "Compute CPU(us)", the computing
 * thread's CPU time during the compute (CLOCK_THREAD_CPUTIME_ID): below Compute by what other
 * threads on its core, a progress thread's copies among them, took from it. All are means over
 * ranks of per-rank means; "Median(us)" is the median of the slowest rank's pure-communication
 * time, and "Period(us)" an iteration of that loop, as for the blocking ones. With --idle-compute
 * the compute sleeps until its end instead of spinning, as a rank waiting on an accelerator or on
 * I/O does: its core is then spare for other threads (a progress thread), which a machine with no
 * more cores than ranks has otherwise not.
 *
 * --skew US: each rank in turn enters every call US microseconds late (asleep, after the
 * separator), as an application's process that is descheduled or busy elsewhere. One row per
 * size and late rank: "On-time(us)", the median over the iterations of the slowest on-time rank's
 * time (start to completion, MPI_Wait included); "Late(us)", the late rank's own; "Host CPU(us)",
 * the CPU time of the calling thread per call (CLOCK_THREAD_CPUTIME_ID), and "Other CPU(us)", the
 * CPU time of the process's other threads (nicoll's progress thread) per iteration, both means
 * over the on-time ranks. A late broadcast root delays every rank by the skew, whatever runs it.
 *
 * --paired ROUNDS: nicoll against Open MPI's default in one job, sharing the machine's state of
 * the moment. Beside MPI_COMM_WORLD (nicoll's), a communicator made while coll_nicoll_priority is
 * -1 (written through MPI_T on every rank, then set back), which the next components serve. Each
 * size runs ROUNDS times on each, in turn, the first of each pair alternating; one row per size:
 * the medians over the rounds of Avg Latency (Pure Comm. for the nonblocking ones) and of Median
 * for each communicator, their ratio nicoll / default, the Overlaps, and Period for each and its
 * ratio. The last lines count nicoll's calls on each communicator.
 *
 * Size is the bytes each rank contributes (MPI_CHAR): the root's message for bcast, each rank's
 * block for allgather. The header says how the ranks lie on nodes ("# layout: N nodes, P ranks
 * per node", nodes as MPI_COMM_TYPE_SHARED splits them; nicoll-tune generate --measure reads it).
 * The last line says how many of the benchmarked calls the nicoll component ran on rank 0 (its
 * MPI_T counter coll_nicoll_<collective>_calls).
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "nicoll_pvar.h"

enum { BARRIER, BCAST, ALLGATHER, IBARRIER, IBCAST, IALLGATHER, N_COLLS };
static const char *names[N_COLLS] = {"barrier", "bcast", "allgather",
                                     "ibarrier", "ibcast", "iallgather"};
static const char *mpi_names[N_COLLS] = {"MPI_Barrier", "MPI_Bcast", "MPI_Allgather",
                                         "MPI_Ibarrier", "MPI_Ibcast", "MPI_Iallgather"};

#define LARGE_MESSAGE 8192 /* above it, a tenth of the iterations and warmup (as OSU) */
#define MAX_SIZES 64
#define MAX_ROUNDS 1000 /* --paired */
#define FIELD 18
#define PAIRED_FIELD 26
#define RATIO_FIELD 8

static struct {
    int coll;
    long min_size, max_size;
    long sizes[MAX_SIZES];
    int nsizes; /* from --sizes, else powers of two from min to max */
    int iterations, warmup, full, test_calls, osu;
    int idle_compute;   /* --idle-compute: the compute sleeps, leaving its core */
    long skew;          /* --skew: microseconds one rank is late, 0 for none */
    int iterations_given, warmup_given, test_calls_given; /* -i, -x, -t */
    int paired;         /* --paired: rounds per size, 0 for none */
} opt = {-1, 1, 4L << 20, {0}, 0, 1000, 100, 0, 0, 0, 0, 0, 0, 0, 0, 0};

static int rank, size;
static char *sendbuf, *recvbuf;
/* The communicator the benchmarked calls and their separators run on: MPI_COMM_WORLD, or with
 * --paired each of the two in turn. */
static MPI_Comm comm;

static const char usage_text[] =
    "usage: nicoll-bench COLLECTIVE [options]\n"
    "  COLLECTIVE            bcast, allgather, barrier, ibcast, iallgather or ibarrier\n"
    "  -m, --message-size MIN:MAX  sizes in bytes, powers of two from MIN (default 1:4194304)\n"
    "  --sizes N,N,...       these sizes instead\n"
    "  -i, --iterations N    timed iterations per size (default 1000; a tenth above 8 KiB)\n"
    "  -x, --warmup N        untimed iterations before them (default 100; a tenth above 8 KiB)\n"
    "  -f, --full            also min and max over ranks and the iteration count (blocking),\n"
    "                        or the compute's CPU time and the start, MPI_Test and MPI_Wait\n"
    "                        times (nonblocking)\n"
    "  -t, --num-test-calls N  MPI_Test calls during the compute (nonblocking; default 0)\n"
    "  --osu                 MPI_Barrier between iterations, as OSU's loop (default: a one-int\n"
    "                        MPI_Allreduce, which nicoll does not run)\n"
    "  --idle-compute        the nonblocking forms' compute sleeps instead of spinning, leaving\n"
    "                        its core to other threads (as a rank waiting on a GPU or on I/O)\n"
    "  --skew US             each rank in turn enters each call US microseconds late, asleep;\n"
    "                        per late rank: the slowest on-time rank's median time and the CPU\n"
    "                        time per call (then -i defaults to 100, -x to 10)\n"
    "  --paired ROUNDS       nicoll and Open MPI's default in one job: two communicators, one\n"
    "                        made while coll_nicoll_priority is negative (set through MPI_T),\n"
    "                        each size measured ROUNDS times on each, alternating; prints\n"
    "                        the medians over the rounds and their ratio, nicoll / default\n"
    "  -h, --help            this text\n";

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* A decimal integer in [min, max]: digits only (strtol alone would take " 8" and "+8"). */
static int parse_long(const char *s, long min, long max, long *v)
{
    char *end;
    if (NULL == s || s[0] < '0' || s[0] > '9') return 0;
    *v = strtol(s, &end, 10);
    return '\0' == *end && *v >= min && *v <= max;
}

/* Fills `why` with the first problem; returns 0 when the options are good. */
static int parse_options(int argc, char **argv, char *why, size_t n)
{
    if (argc < 2) {
        snprintf(why, n, "no collective given (known: bcast, allgather, barrier, ibcast, "
                         "iallgather, ibarrier)");
        return -1;
    }
    if (0 == strcmp(argv[1], "-h") || 0 == strcmp(argv[1], "--help")) {
        return 1;
    }
    for (int c = 0; c < N_COLLS; ++c) {
        if (0 == strcmp(argv[1], names[c])) opt.coll = c;
    }
    if (opt.coll < 0) {
        snprintf(why, n, "%s: unknown collective (known: bcast, allgather, barrier, ibcast, "
                         "iallgather, ibarrier)", argv[1]);
        return -1;
    }
    for (int i = 2; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long x;
        if (0 == strcmp(a, "-h") || 0 == strcmp(a, "--help")) return 1;
        if (0 == strcmp(a, "-f") || 0 == strcmp(a, "--full")) {
            opt.full = 1;
            continue;
        }
        if (0 == strcmp(a, "--osu")) {
            opt.osu = 1;
            continue;
        }
        if (0 == strcmp(a, "--idle-compute")) {
            opt.idle_compute = 1;
            continue;
        }
        int *target = 0 == strcmp(a, "-i") || 0 == strcmp(a, "--iterations") ? &opt.iterations
                      : 0 == strcmp(a, "-x") || 0 == strcmp(a, "--warmup")   ? &opt.warmup
                      : 0 == strcmp(a, "-t") || 0 == strcmp(a, "--num-test-calls")
                          ? &opt.test_calls
                          : NULL;
        ++i;
        if (NULL != target) {
            long min = &opt.iterations == target ? 1 : 0;
            if (!parse_long(v, min, 100000000, &x)) {
                snprintf(why, n, "%s %s: expected an integer in %ld..100000000", a,
                         v ? v : "(missing)", min);
                return -1;
            }
            *target = (int) x;
            opt.iterations_given |= &opt.iterations == target;
            opt.warmup_given |= &opt.warmup == target;
            opt.test_calls_given |= &opt.test_calls == target;
        } else if (0 == strcmp(a, "--paired")) {
            if (!parse_long(v, 1, MAX_ROUNDS, &x)) {
                snprintf(why, n, "%s %s: expected rounds in 1..%d", a, v ? v : "(missing)",
                         MAX_ROUNDS);
                return -1;
            }
            opt.paired = (int) x;
        } else if (0 == strcmp(a, "--skew")) {
            if (!parse_long(v, 1, 10000000, &opt.skew)) {
                snprintf(why, n, "%s %s: expected microseconds in 1..10000000", a,
                         v ? v : "(missing)");
                return -1;
            }
        } else if (0 == strcmp(a, "-m") || 0 == strcmp(a, "--message-size")) {
            char copy[64];
            snprintf(copy, sizeof copy, "%s", v ? v : "");
            char *colon = strchr(copy, ':');
            if (colon) *colon = '\0';
            if (!colon || !parse_long(copy, 0, 1L << 30, &opt.min_size) ||
                !parse_long(colon + 1, opt.min_size, 1L << 30, &opt.max_size)) {
                snprintf(why, n, "%s %s: expected MIN:MAX bytes, 0 <= MIN <= MAX <= 1073741824", a,
                         v ? v : "(missing)");
                return -1;
            }
        } else if (0 == strcmp(a, "--sizes")) {
            char copy[512];
            snprintf(copy, sizeof copy, "%s", v ? v : "");
            opt.nsizes = 0;
            /* every item a size: "1,,2" and "" are refused, not read as 1,2 and nothing */
            for (char *t = copy, *next; NULL != t; t = next) {
                next = strchr(t, ',');
                if (NULL != next) *next++ = '\0';
                if (opt.nsizes == MAX_SIZES || !parse_long(t, 0, 1L << 30, &x)) {
                    snprintf(why, n, "%s %s: expected up to %d sizes in 0..1073741824, "
                                     "comma-separated", a, v ? v : "(missing)", MAX_SIZES);
                    return -1;
                }
                opt.sizes[opt.nsizes++] = x;
            }
        } else {
            snprintf(why, n, "%s: unknown option", a);
            return -1;
        }
    }
    if (opt.idle_compute && (opt.coll < IBARRIER || opt.skew > 0)) {
        snprintf(why, n, "--idle-compute: only with ibcast, iallgather or ibarrier, without "
                         "--skew (only their overlap rows compute)");
        return -1;
    }
    if (opt.test_calls_given && opt.coll < IBARRIER) {
        snprintf(why, n, "-t/--num-test-calls: only with ibcast, iallgather or ibarrier (the "
                         "MPI_Test calls during their compute)");
        return -1;
    }
    if (opt.paired && (opt.skew > 0 || opt.full)) {
        snprintf(why, n, "--paired: not with %s", opt.skew > 0 ? "--skew" : "-f/--full");
        return -1;
    }
    return 0;
}

static int nonblocking(void) { return opt.coll >= IBARRIER; }
static int base(void) { return opt.coll % IBARRIER; }

/* Starts (nonblocking) or runs (blocking) one collective of `bytes`. */
static void start(long bytes, MPI_Request *req)
{
    int n = (int) bytes;
    switch (opt.coll) {
    case BARRIER: MPI_Barrier(comm); break;
    case BCAST: MPI_Bcast(sendbuf, n, MPI_CHAR, 0, comm); break;
    case ALLGATHER:
        MPI_Allgather(sendbuf, n, MPI_CHAR, recvbuf, n, MPI_CHAR, comm);
        break;
    case IBARRIER: MPI_Ibarrier(comm, req); break;
    case IBCAST: MPI_Ibcast(sendbuf, n, MPI_CHAR, 0, comm, req); break;
    case IALLGATHER:
        MPI_Iallgather(sendbuf, n, MPI_CHAR, recvbuf, n, MPI_CHAR, comm, req);
        break;
    }
}

/* Between iterations: a collective nicoll does not provide, so the same for every component;
 * with --osu, MPI_Barrier, as OSU. */
static void separate(void)
{
    if (opt.osu) {
        MPI_Barrier(comm);
        return;
    }
    int in = 0, out;
    MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, comm);
}

/* Busy for `us` microseconds, calling MPI_Test `tests` times spread evenly; returns the time
 * spent in MPI_Test. */
static double compute(double us, int tests, MPI_Request *req)
{
    double t0 = MPI_Wtime(), in_test = 0.0;
    for (int k = 0; k <= tests; ++k) {
        double until = t0 + us * 1e-6 * (k + 1) / (tests + 1) + in_test;
        for (double left; (left = until - MPI_Wtime()) > 0;) {
            if (opt.idle_compute) { /* (timer slack 1 ns: see main) */
                const struct timespec nap = {(time_t) left, (long) ((left - (time_t) left) * 1e9)};
                nanosleep(&nap, NULL);
            }
        }
        if (k < tests) {
            int done;
            double t = MPI_Wtime();
            MPI_Test(req, &done, MPI_STATUS_IGNORE);
            in_test += MPI_Wtime() - t;
        }
    }
    return in_test;
}

/* Mean over ranks of `mine` (on rank 0), and the least and greatest. */
static void over_ranks(double mine, double *mean, double *min, double *max)
{
    MPI_Reduce(&mine, mean, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mine, min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mine, max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    *mean /= size;
}

/* Median over the iterations of the slowest rank's time (on rank 0). */
/* The median of v[0..n), which it sorts. */
static double median(double *v, int n)
{
    qsort(v, n, sizeof(double), compare_doubles);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double median_of_slowest(double *times, double *slowest, int n)
{
    MPI_Reduce(times, slowest, n, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return 0 == rank ? median(slowest, n) : 0.0;
}

/* Period (on rank 0): the time from one call's end to the next's on each rank (the separator and
 * the call; `ends`, seconds, n of them, overwritten), its median over the iterations, the mean of
 * that over ranks. */
static double period(double *ends, int n)
{
    for (int i = 0; i + 1 < n; ++i) ends[i] = (ends[i + 1] - ends[i]) * 1e6;
    double mine = n > 1 ? median(ends, n - 1) : 0.0, sum = 0.0; /* (set on rank 0 only) */
    MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    return sum / size;
}

static void print_size(long bytes)
{
    if (BARRIER != base()) printf("%-10ld", bytes);
}

/* A row's values (on rank 0): blocking, Avg Latency, Min, Max, Iterations, Median; nonblocking,
 * Overall, Compute, Compute CPU, Coll. Init, MPI_Test, MPI_Wait, Pure Comm., Overlap, Median;
 * both, Period. */
enum { AVG, MIN_AVG, MAX_AVG, ITERATIONS, MEDIAN_BLOCKING };
enum {
    OVERALL, COMPUTE, COMPUTE_CPU, INIT, TEST, WAIT, PURE, OVERLAP, MEDIAN_NONBLOCKING,
    PERIOD, /* both */
    N_VALUES
};

static void print_row(long bytes, const double *v)
{
    print_size(bytes);
    if (!nonblocking()) {
        printf("%*.2f", FIELD, v[AVG]);
        if (opt.full) {
            printf("%*.2f%*.2f%*.0f", FIELD, v[MIN_AVG], FIELD, v[MAX_AVG], FIELD, v[ITERATIONS]);
        }
        printf("%*.2f%*.2f\n", FIELD, v[PERIOD], FIELD, v[MEDIAN_BLOCKING]);
    } else {
        printf("%*.2f%*.2f", FIELD, v[OVERALL], FIELD, v[COMPUTE]);
        if (opt.full) {
            printf("%*.2f%*.2f%*.2f%*.2f", FIELD, v[COMPUTE_CPU], FIELD, v[INIT], FIELD, v[TEST],
                   FIELD, v[WAIT]);
        }
        printf("%*.2f%*.2f%*.2f%*.2f\n", FIELD, v[PURE], FIELD, v[OVERLAP], FIELD, v[PERIOD],
               FIELD, v[MEDIAN_NONBLOCKING]);
    }
    fflush(stdout);
}

/* One row of a blocking collective's table, into `v`; returns the calls made. */
static long bench_blocking(long bytes, int iterations, int warmup, double *times, double *slowest,
                           double *ends, double *v)
{
    for (int i = 0; i < warmup; ++i) {
        start(bytes, NULL);
        if (BARRIER != opt.coll) separate();
    }
    double sum = 0.0;
    for (int i = 0; i < iterations; ++i) {
        double t0 = MPI_Wtime();
        start(bytes, NULL);
        ends[i] = MPI_Wtime();
        times[i] = (ends[i] - t0) * 1e6;
        sum += times[i];
        if (BARRIER != opt.coll) separate();
    }
    v[MEDIAN_BLOCKING] = median_of_slowest(times, slowest, iterations);
    v[PERIOD] = period(ends, iterations);
    over_ranks(sum / iterations, &v[AVG], &v[MIN_AVG], &v[MAX_AVG]);
    v[ITERATIONS] = iterations;
    return warmup + iterations;
}

static double cpu_seconds(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

/* The rows of --skew for one size, a row per late rank; returns the calls made. */
static long bench_skew(long bytes, int iterations, int warmup, double *times, double *slowest)
{
    MPI_Request req = MPI_REQUEST_NULL;
    const struct timespec skew = {opt.skew / 1000000, 1000 * (opt.skew % 1000000)};
    for (int late = 0; late < size; ++late) {
        double host = 0.0, all = 0.0;
        for (int i = -warmup; i < iterations; ++i) {
            separate();
            if (rank == late) nanosleep(&skew, NULL);
            /* (the process's interval encloses the thread's) */
            const double all0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
            const double cpu0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
            const double t0 = MPI_Wtime();
            start(bytes, &req);
            if (nonblocking()) MPI_Wait(&req, MPI_STATUS_IGNORE);
            const double t = (MPI_Wtime() - t0) * 1e6;
            if (i < 0) continue;
            /* (the late rank's own time, negated, so that the slowest on-time rank is the max) */
            times[i] = rank == late ? -t : t;
            host += cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - cpu0;
            all += cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - all0;
        }
        double on_time = median_of_slowest(times, slowest, iterations);
        for (int i = 0; i < iterations; ++i) times[i] = -times[i];
        double own = median_of_slowest(times, slowest, iterations); /* the late rank's */
        double cpu[2] = {rank == late ? 0.0 : 1e6 * host / iterations,
                         rank == late ? 0.0 : 1e6 * (all - host) / iterations};
        double sum[2];
        MPI_Reduce(cpu, sum, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (0 == rank) {
            print_size(bytes);
            printf("%*d%*.2f%*.2f%*.2f%*.2f\n", FIELD, late, FIELD, on_time, FIELD, own, FIELD,
                   sum[0] / (size - 1), FIELD, sum[1] / (size - 1));
            fflush(stdout);
        }
    }
    return (long) size * (warmup + iterations);
}

/* One row of a nonblocking collective's table, into `v`; returns the calls made. */
static long bench_nonblocking(long bytes, int iterations, int warmup, double *times,
                              double *slowest, double *ends, double *v)
{
    MPI_Request req;
    for (int i = 0; i < warmup; ++i) {
        start(bytes, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    /* pure communication */
    double pure = 0.0;
    for (int i = 0; i < iterations; ++i) {
        separate();
        double t0 = MPI_Wtime();
        start(bytes, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        ends[i] = MPI_Wtime();
        times[i] = (ends[i] - t0) * 1e6;
        pure += times[i];
    }
    pure /= iterations;
    v[MEDIAN_NONBLOCKING] = median_of_slowest(times, slowest, iterations);
    const double pure_period = period(ends, iterations);
    /* the same, computing for as long as the pure communication took on this rank */
    double overall = 0.0, comp = 0.0, comp_cpu = 0.0, init = 0.0, test = 0.0, wait = 0.0;
    for (int i = 0; i < iterations; ++i) {
        separate();
        double t0 = MPI_Wtime();
        start(bytes, &req);
        double t1 = MPI_Wtime();
        const double cpu0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
        double in_test = compute(pure, opt.test_calls, &req);
        comp_cpu += cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - cpu0; /* (less in_test, below) */
        double t2 = MPI_Wtime();
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        double t3 = MPI_Wtime();
        init += t1 - t0;
        comp += t2 - t1 - in_test;
        test += in_test;
        wait += t3 - t2;
        overall += t3 - t0;
    }
    double scale = 1e6 / iterations,
           mine[7] = {overall * scale, comp * scale, init * scale, test * scale,
                      wait * scale,    pure,         (comp_cpu - test) * scale};
    double mean[7];
    MPI_Reduce(mine, mean, 7, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (0 != rank) return 2L * iterations + warmup;
    for (int k = 0; k < 7; ++k) mean[k] /= size;
    v[OVERALL] = mean[0];
    v[COMPUTE] = mean[1];
    v[INIT] = mean[2];
    v[TEST] = mean[3];
    v[WAIT] = mean[4];
    v[PURE] = mean[5];
    v[COMPUTE_CPU] = mean[6];
    v[PERIOD] = pure_period;
    v[OVERLAP] = mean[5] > 0 ? 100.0 - 100.0 * (mean[0] - mean[1]) / mean[5] : 0.0;
    if (v[OVERLAP] < 0) v[OVERLAP] = 0.0;
    return 2L * iterations + warmup;
}

/* Nodes (as MPI_COMM_TYPE_SHARED splits MPI_COMM_WORLD) and the fewest and most ranks on one. */
static void layout(int *nodes, int *least, int *most)
{
    MPI_Comm node;
    int here = 1, place = 0;
    if (MPI_SUCCESS == MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank,
                                           MPI_INFO_NULL, &node)) {
        MPI_Comm_size(node, &here);
        MPI_Comm_rank(node, &place);
        MPI_Comm_free(&node);
    }
    const int first = 0 == place;
    MPI_Allreduce(&first, nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&here, least, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&here, most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
}

static void print_header(int nodes, int least, int most)
{
    printf("# nicoll-bench %s: %s, %d ranks\n", names[opt.coll], mpi_names[opt.coll], size);
    if (least == most) {
        printf("# layout: %d node%s, %d ranks per node\n", nodes, 1 == nodes ? "" : "s", least);
    } else {
        printf("# layout: %d nodes, %d-%d ranks per node\n", nodes, least, most);
    }
    if (nonblocking()) {
        printf("# Overall = Coll. Init + Compute + MPI_Test + MPI_Wait\n");
    }
    if (opt.skew > 0) {
        printf("# one rank %ld us late (asleep) before each call, each rank in turn; On-time: "
               "median of the slowest on-time rank's time; Late: the late rank's; CPU per call: "
               "the calling thread's, the other threads'\n\n", opt.skew);
        printf("%-10s%*s%*s%*s%*s%*s\n", BARRIER != base() ? "# Size" : "#", FIELD, "Late rank",
               FIELD, "On-time(us)", FIELD, "Late(us)", FIELD, "Host CPU(us)", FIELD,
               "Other CPU(us)");
        fflush(stdout);
        return;
    }
    printf("# Median(us): median over the iterations of the slowest rank's %stime\n",
           nonblocking() ? "pure communication " : "");
    printf("# Period(us): an iteration of the %sloop, %s: from one call's end to the next's, its "
           "median over the iterations, the mean over ranks\n",
           nonblocking() ? "pure communication " : "",
           BARRIER == opt.coll ? "barriers back to back, no separator" : "its separator included");
    if (opt.paired) {
        printf("# paired: nicoll's communicator and the default's (coll_nicoll_priority -1 at its "
               "creation) in turn, %d rounds per size; medians over the rounds; ratio = nicoll / "
               "default\n\n", opt.paired);
        printf("%-10s", BARRIER != base() ? "# Size" : "#");
        const char *headline[2] = {nonblocking() ? "Pure Comm." : "Avg Latency", "Median"};
        char label[64];
        for (int c = 0; c < 2; ++c) {
            snprintf(label, sizeof label, "%s nicoll(us)", headline[c]);
            printf("%*s", PAIRED_FIELD, label);
            snprintf(label, sizeof label, "%s default(us)", headline[c]);
            printf("%*s%*s", PAIRED_FIELD, label, RATIO_FIELD, "Ratio");
        }
        if (nonblocking()) printf("%*s%*s", PAIRED_FIELD, "Overlap nicoll(%)", PAIRED_FIELD,
                                  "Overlap default(%)");
        printf("%*s%*s%*s\n", PAIRED_FIELD, "Period nicoll(us)", PAIRED_FIELD,
               "Period default(us)", RATIO_FIELD, "Ratio");
        fflush(stdout);
        return;
    }
    printf("\n");
    if (BARRIER != base()) {
        printf("%-10s", "# Size");
    } else {
        printf("# ");
    }
    int w = BARRIER != base() ? FIELD : FIELD - 2;
    if (nonblocking()) {
        printf("%*s%*s", w, "Overall(us)", FIELD, "Compute(us)");
        if (opt.full) {
            printf("%*s%*s%*s%*s", FIELD, "Compute CPU(us)", FIELD, "Coll. Init(us)", FIELD,
                   "MPI_Test(us)", FIELD, "MPI_Wait(us)");
        }
        printf("%*s%*s", FIELD, "Pure Comm.(us)", FIELD, "Overlap(%)");
    } else {
        printf("%*s", w, "Avg Latency(us)");
        if (opt.full) {
            printf("%*s%*s%*s", FIELD, "Min Latency(us)", FIELD, "Max Latency(us)", FIELD,
                   "Iterations");
        }
    }
    printf("%*s%*s\n", FIELD, "Period(us)", FIELD, "Median(us)");
    fflush(stdout);
}

/* A communicator over MPI_COMM_WORLD that Open MPI's default components serve: made while
 * coll_nicoll_priority is negative (nicoll declines communicators made then), written through
 * MPI_T on every rank alike and set back after. Returns 0, or -1 where nicoll is not loaded or
 * the variable cannot be written. */
static int dup_without_nicoll(MPI_Comm *without)
{
    int index, count, priority, off = -1;
    MPI_T_cvar_handle h;
    const int have = MPI_SUCCESS == MPI_T_cvar_get_index("coll_nicoll_priority", &index) &&
                     MPI_SUCCESS == MPI_T_cvar_handle_alloc(index, NULL, &h, &count);
    int ok = have && MPI_SUCCESS == MPI_T_cvar_read(h, &priority) &&
             MPI_SUCCESS == MPI_T_cvar_write(h, &off);
    int everywhere;
    MPI_Allreduce(&ok, &everywhere, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (everywhere) MPI_Comm_dup(MPI_COMM_WORLD, without);
    if (ok) MPI_T_cvar_write(h, &priority);
    if (have) MPI_T_cvar_handle_free(&h);
    return everywhere ? 0 : -1;
}

/* The median over `n` rounds of value `k` of rows[round][N_VALUES]. */
static double median_over(double (*rows)[N_VALUES], int n, int k)
{
    double v[MAX_ROUNDS];
    for (int r = 0; r < n; ++r) v[r] = rows[r][k];
    return median(v, n);
}

/* nicoll's and the default's medians over the rounds of value `k`, and their ratio. */
static void print_compared(double (*with)[N_VALUES], double (*without)[N_VALUES], int k)
{
    const double a = median_over(with, opt.paired, k), b = median_over(without, opt.paired, k);
    printf("%*.2f%*.2f%*.2f", PAIRED_FIELD, a, PAIRED_FIELD, b, RATIO_FIELD, b > 0 ? a / b : 0.0);
}

static void print_paired(long bytes, double (*with)[N_VALUES], double (*without)[N_VALUES])
{
    print_size(bytes);
    if (BARRIER == base()) printf("%-10s", "");
    print_compared(with, without, nonblocking() ? PURE : AVG);
    print_compared(with, without, nonblocking() ? MEDIAN_NONBLOCKING : MEDIAN_BLOCKING);
    if (nonblocking()) {
        printf("%*.1f%*.1f", PAIRED_FIELD, median_over(with, opt.paired, OVERLAP), PAIRED_FIELD,
               median_over(without, opt.paired, OVERLAP));
    }
    print_compared(with, without, PERIOD);
    printf("\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    comm = MPI_COMM_WORLD;

    char why[256] = "";
    int parsed = parse_options(argc, argv, why, sizeof why);
    if (0 != parsed) {
        if (0 == rank) {
            if (parsed < 0) {
                fprintf(stderr, "nicoll-bench: %s (nicoll-bench --help for the options)\n", why);
            } else {
                fputs(usage_text, stdout);
            }
        }
        MPI_T_finalize();
        MPI_Finalize();
        return parsed < 0 ? 2 : 0;
    }
    if (opt.idle_compute) { /* the sleeping compute wakes on time, not up to 50 us late */
        prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    }

    long sizes[MAX_SIZES + 32];
    int nsizes = 0;
    if (BARRIER == base()) {
        sizes[nsizes++] = 0;
    } else if (opt.nsizes > 0) {
        memcpy(sizes, opt.sizes, opt.nsizes * sizeof(long));
        nsizes = opt.nsizes;
    } else {
        for (long s = opt.min_size; s <= opt.max_size; s = s ? 2 * s : 1) sizes[nsizes++] = s;
    }
    long largest = 0;
    for (int i = 0; i < nsizes; ++i) {
        if (sizes[i] > largest) largest = sizes[i];
    }
    sendbuf = malloc(largest ? largest : 1);
    recvbuf = malloc(ALLGATHER == base() ? (size_t) largest * size + 1 : 1);
    double *times = malloc(opt.iterations * sizeof(double));
    double *slowest = malloc(opt.iterations * sizeof(double));
    double *ends = malloc(opt.iterations * sizeof(double));
    if (NULL == sendbuf || NULL == recvbuf || NULL == times || NULL == slowest || NULL == ends) {
        fprintf(stderr, "nicoll-bench: out of memory for %ld-byte messages\n", largest);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(sendbuf, 'a' + rank % 26, largest ? largest : 1);

    int nodes, least, most;
    layout(&nodes, &least, &most); /* (before the counter: it calls collectives) */

    char counter_name[64];
    snprintf(counter_name, sizeof counter_name, "coll_nicoll_%s_calls", names[opt.coll]);
    nicoll_counter_t counter;
    int counted = 0 == nicoll_counter_open(&counter, counter_name);
    unsigned long long by_nicoll = 0;

    /* --paired: comms[0] nicoll's (MPI_COMM_WORLD), comms[1] the default components'. */
    MPI_Comm comms[2] = {MPI_COMM_WORLD, MPI_COMM_NULL};
    if (opt.paired && 0 != dup_without_nicoll(&comms[1])) {
        if (0 == rank) {
            fprintf(stderr, "nicoll-bench: --paired: cannot write coll_nicoll_priority through "
                            "MPI_T on every rank (is nicoll loaded?)\n");
        }
        if (counted) nicoll_counter_close(&counter);
        MPI_T_finalize();
        MPI_Finalize();
        return 2;
    }
    double (*rows)[N_VALUES] = calloc(2 * (size_t) (opt.paired ? opt.paired : 1), sizeof(*rows));
    if (NULL == rows) MPI_Abort(MPI_COMM_WORLD, 1);

    if (0 == rank) print_header(nodes, least, most);
    long calls[2] = {0, 0};
    unsigned long long by_default = 0; /* nicoll's calls counted while the default's ran */
    for (int i = 0; i < nsizes; ++i) {
        int large = sizes[i] > LARGE_MESSAGE;
        int iterations = large ? (opt.iterations + 9) / 10 : opt.iterations;
        int warmup = large ? (opt.warmup + 9) / 10 : opt.warmup;
        if (opt.skew > 0) {
            iterations = opt.iterations_given ? iterations : 100;
            warmup = opt.warmup_given ? warmup : 10;
        }
        for (int r = 0; r < (opt.paired ? 2 * opt.paired : 1); ++r) {
            /* rounds alternate, nicoll first in every other pair: neither always goes first */
            const int which = (r + r / 2) % 2;
            comm = comms[which];
            double *v = rows[opt.paired ? which * opt.paired + r / 2 : 0];
            unsigned long long before = 0, after = 0;
            if (which && counted) nicoll_counter_read(&counter, &before);
            if (!opt.osu || BARRIER != opt.coll) separate(); /* (else a barrier the counter sees) */
            calls[which] +=
                opt.skew > 0    ? bench_skew(sizes[i], iterations, warmup, times, slowest)
                : nonblocking()
                    ? bench_nonblocking(sizes[i], iterations, warmup, times, slowest, ends, v)
                    : bench_blocking(sizes[i], iterations, warmup, times, slowest, ends, v);
            if (which && counted) {
                nicoll_counter_read(&counter, &after);
                by_default += after - before;
            }
        }
        if (0 == rank && opt.skew == 0) {
            if (opt.paired) {
                print_paired(sizes[i], rows, rows + opt.paired);
            } else {
                print_row(sizes[i], rows[0]);
            }
        }
    }

    if (counted) {
        counted = 0 == nicoll_counter_read(&counter, &by_nicoll);
        nicoll_counter_close(&counter);
        by_nicoll -= by_default;
    }
    if (0 == rank && opt.paired) {
        printf("# run by nicoll on the default's communicator: %llu of %ld %s calls (rank 0)\n",
               counted ? by_default : 0ull, calls[1], mpi_names[opt.coll]);
    }
    if (0 == rank) {
        if (counted) {
            printf("# run by nicoll: %llu of %ld %s calls (rank 0, MPI_T %s)\n", by_nicoll,
                   calls[0], mpi_names[opt.coll], counter_name);
        } else {
            printf("# run by nicoll: 0 of %ld %s calls (no MPI_T counter %s: nicoll not "
                   "loaded, or older)\n", calls[0], mpi_names[opt.coll], counter_name);
        }
    }
    if (MPI_COMM_NULL != comms[1]) MPI_Comm_free(&comms[1]);
    free(rows);
    free(ends);
    free(slowest);
    free(times);
    free(recvbuf);
    free(sendbuf);
    MPI_T_finalize();
    MPI_Finalize();
    return 0;
}
