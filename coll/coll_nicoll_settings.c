/*
 * The settings every rank of a communicator must share. Each rank builds its trees, cuts its
 * packets and sizes its flow-control window from its own MCA values and tuning table; ranks that
 * differ would wait for packets that are never sent (a window of 2 on one rank and 16 on another
 * hangs the first broadcast). So each rank brings its settings to the exchange at the
 * communicator's setup (coll_nicoll_locality.c), every rank compares all of them alike, and where
 * any differs every rank declines the communicator: its collectives go to the previous component.
 * Rank 0 of the communicator names the first setting that differs, the ranks and their values.
 * A communicator whose ranks run with MPI_THREAD_MULTIPLE is declined too (verbose 10 says so).
 */
#include "coll_nicoll.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "nicoll_tuning.h"
#include "ompi/runtime/mpiruntime.h"

#define NICOLL_C (&mca_coll_nicoll_component)

/* How a setting's value reads in the warning. */
typedef enum { AS_NUMBER, AS_BCAST, AS_ALLGATHER, AS_BARRIER, AS_TRANSPORT, AS_DIGEST } shown_as_t;

static const struct {
    const char *name; /* the MCA variable, or what else it is */
    size_t offset;    /* an int64_t in nicoll_settings_t */
    shown_as_t as;
} settings[] = {
    {"coll_nicoll_packet_size", offsetof(nicoll_settings_t, packet_size), AS_NUMBER},
    {"coll_nicoll_credits", offsetof(nicoll_settings_t, credits), AS_NUMBER},
    {"coll_nicoll_bcast_algorithm", offsetof(nicoll_settings_t, bcast_algorithm), AS_BCAST},
    {"coll_nicoll_bcast_k", offsetof(nicoll_settings_t, bcast_k), AS_NUMBER},
    {"coll_nicoll_allgather_algorithm", offsetof(nicoll_settings_t, allgather_algorithm),
     AS_ALLGATHER},
    {"coll_nicoll_barrier_algorithm", offsetof(nicoll_settings_t, barrier_algorithm), AS_BARRIER},
    {"coll_nicoll_transport", offsetof(nicoll_settings_t, transport), AS_TRANSPORT},
    {"coll_nicoll_tuning_file", offsetof(nicoll_settings_t, tuning), AS_DIGEST},
    {"MPI_THREAD_MULTIPLE", offsetof(nicoll_settings_t, thread_multiple), AS_NUMBER},
};

void nicoll_settings_mine(const nicoll_transport_t *t, nicoll_settings_t *s)
{
    const nicoll_tuning_t *file = NICOLL_C->tuning, *embedded = nicoll_tuning_embedded();
    /* rules the file lacks come from the embedded table, so both are in force */
    uint64_t tuning = nicoll_tuning_digest(embedded);
    if (NULL != file && file != embedded) {
        tuning = tuning * 31 + nicoll_tuning_digest(file);
    }
    *s = (nicoll_settings_t){.packet_size = (int64_t) t->packet_size,
                             .credits = t->credits,
                             .bcast_algorithm = NICOLL_C->bcast_algorithm,
                             .bcast_k = NICOLL_C->bcast_k,
                             .allgather_algorithm = NICOLL_C->allgather_algorithm,
                             .barrier_algorithm = NICOLL_C->barrier_algorithm,
                             .transport = NICOLL_C->transport,
                             .tuning = (int64_t) tuning,
                             .thread_multiple = ompi_mpi_thread_multiple,
                             .table_source = nicoll_tuning_source()};
}

static int64_t value(const nicoll_settings_t *s, size_t i)
{
    int64_t v;
    memcpy(&v, (const char *) s + settings[i].offset, sizeof(v));
    return v;
}

/* Setting i of a rank's settings `s` as rank 0 names it; the tuning table by where it came from,
 * with the path where it is rank 0's own (`own`). */
static void show(char *out, size_t n, size_t i, const nicoll_settings_t *s, bool own)
{
    const int64_t v = value(s, i);
    const nicsim_collective_t tables[] = {[AS_BCAST] = NICSIM_COLL_BCAST,
                                          [AS_ALLGATHER] = NICSIM_COLL_ALLGATHER,
                                          [AS_BARRIER] = NICSIM_COLL_BARRIER};
    const shown_as_t as = settings[i].as;
    if (NICOLL_AUTO == v && AS_DIGEST != as) {
        snprintf(out, n, "auto");
    } else if (AS_BCAST == as || AS_ALLGATHER == as || AS_BARRIER == as) {
        snprintf(out, n, "%s", nicsim_algorithm_name(tables[as], (int) v));
    } else if (AS_TRANSPORT == as && 0 <= v && v <= NICOLL_TRANSPORT_UCX) {
        snprintf(out, n, "%s", nicoll_transport_names[v]);
    } else if (AS_DIGEST == as && NICOLL_TABLE_FILE == s->table_source) {
        if (own) {
            snprintf(out, n, "the table of %s", NICOLL_C->tuning_file);
        } else {
            snprintf(out, n, "the table of its tuning file");
        }
    } else if (AS_DIGEST == as) {
        snprintf(out, n, "the embedded default table (%s)",
                 NICOLL_TABLE_EMBEDDED == s->table_source ? "no tuning file"
                                                           : "its tuning file did not load");
    } else {
        snprintf(out, n, "%" PRId64, v);
    }
}

bool nicoll_settings_agree(const nicoll_module_t *m, const nicoll_settings_t *of, size_t stride)
{
    const int size = ompi_comm_size(m->transport.comm);
#define OF(r) ((const nicoll_settings_t *) ((const char *) of + (size_t) (r) * stride))
    for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); ++i) {
        int first = 0, differing = 0;
        for (int r = 1; r < size; ++r) {
            if (value(OF(r), i) != value(OF(0), i)) {
                first = 0 == differing++ ? r : first;
            }
        }
        if (0 == differing) {
            continue;
        }
        if (0 == ompi_comm_rank(m->transport.comm)) {
            char mine[512], theirs[64];
            show(mine, sizeof(mine), i, OF(0), true);
            show(theirs, sizeof(theirs), i, OF(first), false);
            opal_output(0,
                        "nicoll: communicator %s (cid %u): %s differs across ranks: "
                        "%s on rank 0, %s on rank %d (%d of %d ranks differ from rank 0); "
                        "nicoll declines this communicator, the next component serves it",
                        nicoll_comm_name(m->transport.comm),
                        (unsigned) m->transport.comm->c_contextid, settings[i].name, mine, theirs,
                        first, differing, size);
        } else if (AS_DIGEST == settings[i].as && first == ompi_comm_rank(m->transport.comm)) {
            nicoll_tuning_tell_failure(); /* why its table is not rank 0's, if its file failed */
        }
        return false;
    }
    /* Alike on every rank, but nicoll's requests, counters and transports are not yet safe
     * against collectives from several threads. */
    if (OF(0)->thread_multiple) {
        NICOLL_VERBOSE(10, "declining communicator %s (cid %u): MPI_THREAD_MULTIPLE",
                       nicoll_comm_name(m->transport.comm),
                       (unsigned) m->transport.comm->c_contextid);
        return false;
    }
#undef OF
    return true;
}
