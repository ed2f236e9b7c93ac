/*
 * Tuning: where each collective's algorithm, k and packet size, and each communicator's packet
 * size and credits come from. In order: the MCA variable when it is not auto, the rule of the
 * tuning file (coll_nicoll_tuning_file) that matches the communicator size and message size, the
 * rule of the embedded default table (tuning/default.json, measured on the machine named in its
 * provenance), and, where a rule says auto, the engine's model-based choice. The tables and their
 * validation live in tuning/ (nicoll_tuning.h); this is glue.
 *
 * Every rank must decide alike, and does: the inputs (communicator size, message bytes, MCA
 * values, the file) are the same on every rank. A file that is unreadable on some nodes only
 * would break that; the man page says so.
 */
#include "coll_nicoll.h"

#include <stdio.h>

#include "ompi/proc/proc.h"

#include "nicoll_tuning.h"

#define NICOLL_C (&mca_coll_nicoll_component)

static nicoll_tuning_t *loaded; /* the file's table, owned here */
static nicoll_table_source_t source;
static char failure[600]; /* the warning of a file that did not load */

void nicoll_tuning_open(void)
{
    const char *path = NICOLL_C->tuning_file;
    NICOLL_C->tuning = nicoll_tuning_embedded();
    source = NICOLL_TABLE_EMBEDDED;
    if (NULL == path || '\0' == path[0]) {
        NICOLL_VERBOSE(10, "no tuning file (coll_nicoll_tuning_file is empty): using the embedded "
                           "default table (%s)", nicoll_tuning_provenance(NICOLL_C->tuning));
        return;
    }
    char why[512];
    loaded = nicoll_tuning_load(path, why, sizeof(why));
    if (NULL == loaded) {
        source = NICOLL_TABLE_FILE_FAILED;
        snprintf(failure, sizeof(failure), "nicoll: tuning file %s; using the embedded default "
                 "table", why);
        /* One warning per job where every rank reads the same file and finds the same error;
         * a rank whose file alone did not load says so once its table is found to differ. */
        if (0 == OMPI_PROC_MY_NAME->vpid) {
            opal_output(0, "%s", failure);
        }
        NICOLL_VERBOSE(10, "tuning file %s not loaded: %s", path, why);
        return;
    }
    source = NICOLL_TABLE_FILE;
    NICOLL_C->tuning = loaded;
    NICOLL_VERBOSE(10, "tuning file %s loaded (%s)", path, nicoll_tuning_provenance(loaded));
}

nicoll_table_source_t nicoll_tuning_source(void)
{
    return source;
}

void nicoll_tuning_tell_failure(void)
{
    static bool told;
    if (NICOLL_TABLE_FILE_FAILED == source && 0 != OMPI_PROC_MY_NAME->vpid && !told) {
        told = true;
        opal_output(0, "%s (rank %u of MPI_COMM_WORLD)", failure,
                    (unsigned) OMPI_PROC_MY_NAME->vpid);
    }
}

void nicoll_tuning_close(void)
{
    nicoll_tuning_free(loaded);
    loaded = NULL;
    NICOLL_C->tuning = NULL;
}

/* The table's rule, from the loaded file or else the embedded default: 1 when one matched. */
static int rule(nicoll_tuning_section_t section, int comm_size, size_t bytes, int nodes, int ppn,
                nicoll_tuning_fabric_t fabric, nicoll_tuning_decision_t *d, const char **from)
{
    const nicoll_tuning_t *t =
        NULL != NICOLL_C->tuning ? NICOLL_C->tuning : nicoll_tuning_embedded();
    if (nicoll_tuning_decide(t, section, comm_size, bytes, nodes, ppn, fabric, d)) {
        *from = nicoll_tuning_name(t);
        return 1;
    }
    t = nicoll_tuning_embedded();
    *from = nicoll_tuning_name(t);
    return nicoll_tuning_decide(t, section, comm_size, bytes, nodes, ppn, fabric, d);
}

/* The engine's algorithm table of each collective. */
static const nicsim_collective_t engine_table[NICOLL_COLLS] = {
    [NICOLL_BARRIER] = NICSIM_COLL_BARRIER,     [NICOLL_IBARRIER] = NICSIM_COLL_BARRIER,
    [NICOLL_BCAST] = NICSIM_COLL_BCAST,         [NICOLL_IBCAST] = NICSIM_COLL_BCAST,
    [NICOLL_ALLGATHER] = NICSIM_COLL_ALLGATHER, [NICOLL_IALLGATHER] = NICSIM_COLL_ALLGATHER};

/* Counts the call under its algorithm (coll_nicoll_<coll>_<algorithm>_calls). */
NICOLL_HOT_PATH
static void count(nicoll_coll_t coll, int algorithm)
{
    if (algorithm >= 0 && algorithm < NICOLL_MAX_ALGORITHMS) {
        ++NICOLL_C->stats.algorithm[engine_table[coll]][algorithm];
    }
}

/* (Only when a communicator's inputs change: nicoll_decide keeps the last decision.) */
static void decide(const nicoll_module_t *m, nicoll_coll_t coll, size_t bytes, nicoll_decision_t *d)
{
    const int size = ompi_comm_size(m->transport.comm);
    nicoll_tuning_decision_t r = {.algorithm = -1, .k = 0, .packet_size = 0, .credits = 0,
                                  .rule = "none"};
    const char *from = "auto";
    /* nodes, ppn and the fabric are known once the communicator is set up, at its first
     * collective (before an allgather decides, after a bcast or barrier does): the same on every
     * rank either way. */
    if (!rule((nicoll_tuning_section_t) coll, size, bytes, m->nodes, m->ppn, m->fabric, &r,
              &from)) {
        from = "auto";
    }
    int mca_algorithm, mca_k = NICOLL_AUTO;
    switch (coll) {
    case NICOLL_BCAST:
    case NICOLL_IBCAST:
        mca_algorithm = NICOLL_C->bcast_algorithm;
        mca_k = NICOLL_C->bcast_k;
        break;
    case NICOLL_ALLGATHER:
    case NICOLL_IALLGATHER:
        mca_algorithm = NICOLL_C->allgather_algorithm;
        break;
    default:
        mca_algorithm = NICOLL_C->barrier_algorithm;
        break;
    }
    const nicsim_collective_t table = engine_table[coll];
    const bool is_bcast = NICSIM_COLL_BCAST == table, is_allgather = NICSIM_COLL_ALLGATHER == table;
    d->k = NICOLL_AUTO != mca_k ? mca_k : r.k;
    d->packet_size = NICOLL_AUTO == NICOLL_C->packet_size && 0 != r.packet_size
                         ? r.packet_size
                         : m->transport.packet_size;
    /* auto: kbinomial with Theorem 3's k; for allgather Yu et al.'s finding (Fig. 6, and the
     * model's crossover, nicsim allgather): recursive doubling while the whole result fits in one
     * packet, where its combining saves packets, all-to-all broadcast once blocks span packets,
     * where its pipelined hops win; barrier dissemination (no more rounds than recursive
     * doubling). */
    d->algorithm = NICOLL_AUTO != mca_algorithm ? mca_algorithm
                   : r.algorithm >= 0           ? r.algorithm
                   : is_bcast                   ? NICOLL_C->bcast_kbinomial
                   : is_allgather && bytes * (size_t) size > d->packet_size
                       ? NICOLL_C->allgather_ab
                       : 0;
    if (NICOLL_C->verbose >= 20) {
        char k[16] = "auto";
        if (0 != d->k) {
            snprintf(k, sizeof(k), "%d", d->k);
        }
        NICOLL_VERBOSE(20, "%s on %s (cid %u), %zu bytes: algorithm %s k %s packet_size %zu "
                           "(rule %s of %s, nodes %d ppn %d fabric %s; MCA variables "
                           "override)",
                       nicoll_coll_names[coll], nicoll_comm_name(m->transport.comm),
                       (unsigned) m->transport.comm->c_contextid, bytes,
                       nicsim_algorithm_name(table, d->algorithm), k, d->packet_size,
                       r.rule, from, m->nodes, m->ppn, nicoll_tuning_fabric_name(m->fabric));
    }
}

NICOLL_HOT_PATH
void nicoll_decide(nicoll_module_t *m, nicoll_coll_t coll, size_t bytes, nicoll_decision_t *d)
{
    /* The same inputs decide alike: a repeated call takes the last decision (not at verbosity
     * 20, which reports every decision's rule). */
    nicoll_decided_t *last = &m->decided[coll];
    if (last->valid && last->bytes == bytes && last->nodes == m->nodes &&
        last->fabric == m->fabric && NICOLL_C->verbose < 20) {
        *d = last->decision;
    } else {
        decide(m, coll, bytes, d);
        last->valid = true;
        last->bytes = bytes;
        last->nodes = m->nodes;
        last->fabric = m->fabric;
        last->decision = *d;
    }
    count(coll, d->algorithm);
}

void nicoll_decide_transport(int comm_size, size_t *packet_size, int *credits)
{
    nicoll_tuning_decision_t r = {.algorithm = -1, .k = 0, .packet_size = 0, .credits = 0,
                                  .rule = "none"};
    const char *from = NULL;
    /* before the locality is known: transport rules match on the communicator size only */
    (void) rule(NICOLL_TUNING_TRANSPORT, comm_size, 0, 0, 0, NICOLL_TUNING_FABRIC_UNKNOWN, &r,
                &from);
    *packet_size = r.packet_size;
    *credits = r.credits;
}
