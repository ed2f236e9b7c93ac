/*
 * Messages of more than 2 GiB: an MPI_Bcast of 2100 x a 1 MiB contiguous type (2.05 GiB) from
 * each root, and an MPI_Allgather of 1050 x 1 MiB per rank (2.05 GiB gathered on 2 ranks), where
 * count x extent passes what an int can count in bytes. Each rank checks the received bytes
 * against the pattern it computes itself, at a prime stride and at both ends, and the MPI_T
 * counters must show that nicoll ran every call. TAP lines on rank 0.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

#include "../../examples/nicoll_pvar.h"
#include "mpi_test.h"

static unsigned char pattern(int origin, size_t i) { return (unsigned char) (origin * 37 + i % 251); }

/* The first byte of buf[0, bytes) whose value differs from the origin's pattern, or bytes. */
static size_t first_bad(const unsigned char *buf, size_t bytes, int origin, size_t offset)
{
    for (size_t i = 0; i < bytes; i = i + 4093 < bytes || i == bytes - 1 ? i + 4093 : bytes - 1) {
        if (buf[i] != pattern(origin, offset + i)) {
            return i;
        }
    }
    return bytes;
}

int main(int argc, char **argv)
{
    int rank, size, provided;
    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const size_t mib = (size_t) 1 << 20;
    MPI_Datatype block;
    MPI_Type_contiguous((int) mib, MPI_BYTE, &block);
    MPI_Type_commit(&block);

    nicoll_counter_t bcasts, allgathers;
    int have = 0 == nicoll_counter_open(&bcasts, "coll_nicoll_bcast_calls") &&
               0 == nicoll_counter_open(&allgathers, "coll_nicoll_allgather_calls");

    const int count = 2100;
    const size_t bytes = count * mib;
    unsigned char *buf = malloc(bytes);
    int ok = NULL != buf;
    for (int root = 0; root < size && ok; ++root) {
        for (size_t i = 0; i < bytes; ++i) {
            buf[i] = rank == root ? pattern(root, i) : 0xee;
        }
        ok = MPI_SUCCESS == MPI_Bcast(buf, count, block, root, MPI_COMM_WORLD) &&
             first_bad(buf, bytes, root, 0) == bytes;
    }
    free(buf);
    char what[160];
    snprintf(what, sizeof what, "MPI_Bcast of %zu bytes (%d x 1 MiB type) from every root", bytes,
             count);
    tap_report(ok, what);

    const int per_rank = 2100 / size;
    const size_t block_bytes = per_rank * mib;
    buf = malloc(block_bytes * size);
    ok = NULL != buf;
    if (ok) {
        for (size_t i = 0; i < block_bytes * size; ++i) {
            buf[i] = i / block_bytes == (size_t) rank ? pattern(rank, i % block_bytes) : 0xee;
        }
        ok = MPI_SUCCESS == MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, per_rank, block,
                                          MPI_COMM_WORLD);
        for (int o = 0; o < size && ok; ++o) {
            ok = first_bad(buf + o * block_bytes, block_bytes, o, 0) == block_bytes;
        }
    }
    free(buf);
    snprintf(what, sizeof what, "MPI_Allgather in place of %zu bytes in all (%d x 1 MiB per rank)",
             block_bytes * size, per_rank);
    tap_report(ok, what);

    unsigned long long ran_bcasts = 0, ran_allgathers = 0;
    ok = have && 0 == nicoll_counter_read(&bcasts, &ran_bcasts) &&
         0 == nicoll_counter_read(&allgathers, &ran_allgathers) &&
         ran_bcasts >= (unsigned long long) size && ran_allgathers == 1;
    if (have) {
        nicoll_counter_close(&bcasts);
        nicoll_counter_close(&allgathers);
    }
    /* (At least: coll/basic's MPI_Allreduce of the reports broadcasts through nicoll too.) */
    tap_report(ok, "nicoll ran them all (MPI_T counters coll_nicoll_bcast_calls, _allgather_calls)");
    if (0 == rank) {
        printf("1..3\n");
    }
    MPI_Type_free(&block);
    MPI_T_finalize();
    MPI_Finalize();
    return 0;
}
