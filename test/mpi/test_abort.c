/* A local failure inside a collective, on one rank: run by faults.sh with coll_nicoll_fault=pack
 * (pack:2) on that rank only, so that the packing buffer of its MPI_Bcast (MPI_Allgather) of
 * strided ints is not allocated; the argument names that collective. With MPI_ERRORS_RETURN,
 * every rank must return from it: the faulty rank with an error, every other rank either with an
 * error (it was told before it was done) or with the right bytes. Nothing hangs, the other
 * collective runs right everywhere, and so do the communicator's later collectives.
 *
 * With the argument "fetch", run with coll_nicoll_fault=fetch on one rank, over UCX or the PML:
 * the rank's transport breaks right after it started to fetch (receive) its first payload, in
 * 2 x size rounds of 4 MiB MPI_Bcast (MPI_Ibcast every other round; rotating root), so that
 * payloads are still on their way in and out. Every rank returns from every call, every success
 * is right, no failed call's buffer is written after the call returned (this rank's first one
 * is filled with a sentinel then, checked after a new communicator's traffic), and that
 * communicator runs right.
 *
 * With the argument "free", run with coll_nicoll_fault=pack on one rank: that rank's MPI_Bcast
 * of 4 MiB in a strided type fails (the others' is contiguous) and it frees the communicator at
 * once, before the root's payloads reach it; every rank still returns (the root, whose call
 * fails too once told, waited before for that rank to read the payloads it sent in place).
 *
 * With the argument "send", run with coll_nicoll_fault=send:N on one rank: the Nth packet that
 * rank sends fails, somewhere in 40 rounds of MPI_Bcast (rotating root), MPI_Allgather and
 * MPI_Barrier on MPI_COMM_WORLD. The rank's transport is then broken for that communicator:
 * every rank returns from every call, every success has the right bytes, the faulty rank fails
 * every call from its first failure on, and a communicator made afterwards runs right.
 *
 * Prints TAP (one line per check, agreed over MPI_COMM_WORLD) and each rank's outcome as a
 * comment: "# rank R: MPI_Bcast failed|right".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_test.h"

#define COUNT 5000 /* ints, every second one: 20 KB of payload */
#define BIG ((size_t) 4 << 20) /* the "fetch" mode's broadcasts: fetched, not sent eagerly */
#define SENTINEL 0x5a

static int value(int round, int origin, int i)
{
    return round * 1000003 + origin * 7919 + i;
}

/* Rounds of MPI_Bcast, MPI_Allgather and MPI_Barrier on comm, each checked: how many calls
 * failed here, and whether every success was right and (`broken_after`) every call failed from
 * the first failure on. */
static void rounds(MPI_Comm comm, int count, int *failures, int *right, int *broken_after)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *buf = malloc(200 * sizeof(int)), *all = malloc((size_t) size * 200 * sizeof(int));
    *failures = 0;
    *right = *broken_after = 1;
    for (int round = 0; round < count; ++round) {
        const int root = round % size;
        for (int i = 0; i < 200; ++i) buf[i] = rank == root ? value(round, root, i) : -1;
        int rc[3];
        rc[0] = MPI_Bcast(buf, 200, MPI_INT, root, comm);
        for (int i = 0; MPI_SUCCESS == rc[0] && i < 200; ++i) *right &= buf[i] == value(round, root, i);
        for (int i = 0; i < 200; ++i) buf[i] = value(round, rank, i);
        rc[1] = MPI_Allgather(buf, 200, MPI_INT, all, 200, MPI_INT, comm);
        for (int i = 0; MPI_SUCCESS == rc[1] && i < size * 200; ++i)
            *right &= all[i] == value(round, i / 200, i % 200);
        rc[2] = MPI_Barrier(comm);
        for (int c = 0; c < 3; ++c) {
            if (*failures > 0) *broken_after &= MPI_SUCCESS != rc[c];
            *failures += MPI_SUCCESS != rc[c];
        }
    }
    free(all);
    free(buf);
}

/* The "send" mode (see the top). */
static int broken_transport(void)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *fault = getenv("OMPI_MCA_coll_nicoll_fault");
    const int faulty = NULL != fault && 0 == strncmp(fault, "send", 4);
    int failures, right, broken_after;
    rounds(MPI_COMM_WORLD, 40, &failures, &right, &broken_after);
    printf("# rank %d: %d of 120 calls failed%s%s\n", rank, failures,
           right ? "" : ", a success with WRONG bytes",
           faulty && !broken_after ? ", one after the first failure succeeded" : "");
    fflush(stdout);
    int any;
    MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int checks = 0, passed = 0;
    ++checks;
    passed += tap_report(right && any > 0 && (!faulty || (failures > 0 && broken_after)),
                         "a send failing on one rank: every rank returned from every call, every "
                         "success right, the faulty rank failing every call from its first failure");
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    rounds(dup, 4, &failures, &right, &broken_after);
    ++checks;
    passed += tap_report(right && 0 == failures, "a communicator made afterwards runs right");
    MPI_Comm_free(&dup);
    if (0 == rank) {
        printf("# checks %d\n# passed %d\n", checks, passed);
    }
    return checks == passed;
}

/* The "fetch" mode (see the top). */
static int late_writes(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned char *kept = NULL; /* the buffer of this rank's first failed call */
    int failures = 0, right = 1;
    for (int round = 0; round < 2 * size; ++round) {
        const int root = round % size;
        unsigned char *buf = malloc(BIG);
        for (size_t i = 0; i < BIG; ++i) {
            buf[i] = rank == root ? (unsigned char) value(round, root, (int) i) : 0;
        }
        int rc;
        if (round % 2) { /* nonblocking every other round */
            MPI_Request request;
            rc = MPI_Ibcast(buf, BIG, MPI_BYTE, root, MPI_COMM_WORLD, &request);
            if (MPI_SUCCESS == rc) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
        } else {
            rc = MPI_Bcast(buf, BIG, MPI_BYTE, root, MPI_COMM_WORLD);
        }
        if (MPI_SUCCESS == rc) {
            size_t i = 0;
            while (i < BIG && buf[i] == (unsigned char) value(round, root, (int) i)) ++i;
            if (i < BIG && right) {
                printf("# rank %d: round %d (root %d) wrong from byte %zu of %zu: %d\n", rank,
                       round, root, i, BIG, buf[i]);
                right = 0;
            }
            free(buf);
        } else if (NULL == kept) {
            ++failures;
            memset(buf, SENTINEL, BIG); /* the caller's again: nothing may write to it now */
            kept = buf;
        } else {
            ++failures;
            free(buf);
        }
    }
    /* Later traffic: a new communicator's broadcasts of the same size, which progress every
     * transport the failed calls used. */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    int later = 1;
    unsigned char *buf = malloc(BIG);
    for (int round = 0; round < size; ++round) {
        for (size_t i = 0; i < BIG; ++i) buf[i] = rank == round ? (unsigned char) (round + i) : 0;
        later &= MPI_SUCCESS == MPI_Bcast(buf, BIG, MPI_BYTE, round, dup);
        for (size_t i = 0; i < BIG; ++i) later &= buf[i] == (unsigned char) (round + i);
    }
    free(buf);
    MPI_Comm_free(&dup);
    int intact = 1;
    for (size_t i = 0; NULL != kept && i < BIG; ++i) intact &= SENTINEL == kept[i];
    free(kept);
    printf("# rank %d: %d of %d calls failed%s%s\n", rank, failures, 2 * size,
           right ? "" : ", a success with WRONG bytes",
           intact ? "" : ", a failed call's buffer WRITTEN after it returned");
    fflush(stdout);
    int mine[3] = {failures > 0, right, intact}, all[3];
    MPI_Allreduce(mine, all, 3, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    int any;
    MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int checks = 0, passed = 0;
    ++checks;
    passed += tap_report(any > 0 && all[1], "the transport broken with a payload on its way in: "
                         "every rank returned from every call, every success right");
    ++checks;
    passed += tap_report(all[2], "no failed call's buffer was written after the call returned");
    MPI_Allreduce(&later, &any, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    ++checks;
    passed += tap_report(any, "a communicator made afterwards runs right");
    if (0 == rank) {
        printf("# checks %d\n# passed %d\n", checks, passed);
    }
    return checks == passed;
}

/* The "free" mode (see the top). */
static int freed_early(void)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *fault = getenv("OMPI_MCA_coll_nicoll_fault");
    const int faulty = NULL != fault && 0 == strncmp(fault, "pack", 4);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    MPI_Datatype strided; /* BIG bytes, every second one */
    MPI_Type_vector((int) BIG, 1, 2, MPI_BYTE, &strided);
    MPI_Type_commit(&strided);
    unsigned char *buf = malloc(2 * BIG);
    for (size_t i = 0; i < BIG; ++i) buf[i] = (unsigned char) value(0, 0, (int) i);
    int rc = faulty ? MPI_Bcast(buf, 1, strided, 0, dup) : MPI_Bcast(buf, BIG, MPI_BYTE, 0, dup);
    if (faulty) {
        MPI_Comm_free(&dup);
    }
    int right = 1;
    for (size_t i = 0; MPI_SUCCESS == rc && !faulty && i < BIG; ++i) {
        right &= buf[i] == (unsigned char) value(0, 0, (int) i);
    }
    printf("# rank %d: MPI_Bcast %s\n", rank, MPI_SUCCESS != rc ? "failed" : right ? "right" : "WRONG");
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    if (!faulty) {
        MPI_Comm_free(&dup);
    }
    int all;
    MPI_Allreduce(&right, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    const int ok = tap_report(all, "a rank that failed to pack frees the communicator at once: "
                                   "every rank returns, every success right");
    if (0 == rank) {
        printf("# checks 1\n# passed %d\n", ok);
    }
    MPI_Type_free(&strided);
    free(buf);
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    static const struct {
        const char *name;
        int (*run)(void);
    } modes[] = {{"send", broken_transport}, {"fetch", late_writes}, {"free", freed_early}};
    for (size_t i = 0; argc > 1 && i < sizeof modes / sizeof modes[0]; ++i) {
        if (0 == strcmp(argv[1], modes[i].name)) {
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
            const int ok = modes[i].run();
            MPI_Finalize();
            return ok ? 0 : 1;
        }
    }
    const int failing = argc > 1 && 0 == strcmp(argv[1], "allgather") ? 1 : 0;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype strided;
    MPI_Type_vector(COUNT, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    MPI_Aint lb, extent;
    MPI_Type_get_extent(strided, &lb, &extent);
    int *buf = calloc((size_t) size * (size_t) extent, 1);
    int *own = malloc(2 * COUNT * sizeof(int));
    int checks = 0, passed = 0;

    /* The broadcast, then the allgather, of strided ints: each rank's first and second pass
     * through the packing step. */
    for (int round = 0; round < 2; ++round) {
        const char *name = 0 == round ? "MPI_Bcast" : "MPI_Allgather";
        int rc;
        if (0 == round) {
            for (int i = 0; i < COUNT; ++i) buf[2 * i] = 0 == rank ? value(round, 0, i) : -1;
            rc = MPI_Bcast(buf, 1, strided, 0, MPI_COMM_WORLD);
        } else {
            for (int i = 0; i < COUNT; ++i) own[2 * i] = value(round, rank, i);
            rc = MPI_Allgather(own, 1, strided, buf, 1, strided, MPI_COMM_WORLD);
        }
        int right = MPI_SUCCESS == rc;
        const int origins = 0 == round ? 1 : size;
        for (int o = 0; right && o < origins; ++o) {
            const int *block = (const int *) ((const char *) buf + (MPI_Aint) o * extent);
            for (int i = 0; right && i < COUNT; ++i) right = block[2 * i] == value(round, o, i);
        }
        printf("# rank %d: %s %s\n", rank, name,
               MPI_SUCCESS != rc ? "failed" : right ? "right" : "WRONG");
        fflush(stdout);
        int failed = MPI_SUCCESS != rc, any_failed;
        MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
        char what[160];
        if (round == failing) {
            snprintf(what, sizeof what, "%s with one rank failing to pack: every rank returned, "
                     "every success with the right bytes, at least one failure", name);
        } else {
            snprintf(what, sizeof what, "%s: right on every rank", name);
        }
        ++checks;
        passed += tap_report(round == failing ? (MPI_SUCCESS != rc || right) && any_failed : right,
                             what);
    }

    /* Afterwards, the same communicator runs as before. */
    int ok = 1;
    for (int round = 2; round < 6; ++round) {
        int v[4] = {value(round, rank, 0), 0, 0, 0};
        int *all = malloc((size_t) size * sizeof(int));
        ok &= MPI_SUCCESS == MPI_Barrier(MPI_COMM_WORLD);
        v[1] = 0 == rank ? value(round, 0, 1) : -1;
        ok &= MPI_SUCCESS == MPI_Bcast(&v[1], 1, MPI_INT, 0, MPI_COMM_WORLD) && v[1] == value(round, 0, 1);
        ok &= MPI_SUCCESS == MPI_Allgather(&v[0], 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
        for (int o = 0; o < size; ++o) ok &= all[o] == value(round, o, 0);
        free(all);
    }
    ++checks;
    passed += tap_report(ok, "later MPI_Barrier, MPI_Bcast and MPI_Allgather run right on every rank");

    if (0 == rank) {
        printf("# checks %d\n# passed %d\n", checks, passed);
    }
    MPI_Type_free(&strided);
    free(own);
    free(buf);
    MPI_Finalize();
    return checks == passed ? 0 : 1;
}
