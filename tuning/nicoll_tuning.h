/*
 * nicoll tuning: the C API the component (coll/) uses to read tuning files and ask for decisions.
 *
 * Narrow on purpose, like nicsim.h: an opaque table, a load that either takes a whole file or
 * reports why not, one decision call, and the packet size `auto` comes to where no rule sets one.
 * The C++ side is tuning/table.h.
 */
#ifndef NICOLL_TUNING_H
#define NICOLL_TUNING_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A tuning file's sections, in the order of the component's nicoll_coll_t, then the
 * communicator-wide transport settings. */
typedef enum nicoll_tuning_section {
    NICOLL_TUNING_BARRIER = 0,
    NICOLL_TUNING_BCAST,
    NICOLL_TUNING_ALLGATHER,
    NICOLL_TUNING_IBARRIER,
    NICOLL_TUNING_IBCAST,
    NICOLL_TUNING_IALLGATHER,
    NICOLL_TUNING_TRANSPORT
} nicoll_tuning_section_t;

typedef struct nicoll_tuning nicoll_tuning_t;

/* The largest k-binomial fanout and packet size a rule or the component's variables may set
 * (coll_nicoll_bcast_k, coll_nicoll_packet_size); credits go to NICSIM_CREDITS_MAX. */
#define NICOLL_TUNING_MAX_K 64
#define NICOLL_TUNING_MAX_PACKET_SIZE (1L << 26)

/* What carries a communicator's packets, for rules with a fabric: every rank reaches every peer
 * through shared memory (one node), UCX or the PML; several (shared memory inside nodes, another
 * fabric between them); or not known yet (before its first collective). */
typedef enum nicoll_tuning_fabric {
    NICOLL_TUNING_FABRIC_UNKNOWN = 0,
    NICOLL_TUNING_FABRIC_SHM,
    NICOLL_TUNING_FABRIC_UCX,
    NICOLL_TUNING_FABRIC_PML,
    NICOLL_TUNING_FABRIC_MIXED
} nicoll_tuning_fabric_t;
/* "unknown", "shm", "ucx", "pml", "mixed". */
const char *nicoll_tuning_fabric_name(nicoll_tuning_fabric_t fabric);

/* What a rule decided; 0 or -1 mean auto, as in the MCA variables. */
typedef struct nicoll_tuning_decision {
    int algorithm;            /* engine table index (nicsim_algorithm_find), -1: auto */
    int k;                    /* kbinomial fanout, 0: auto (Theorem 3 for the packet count) */
    size_t packet_size;       /* 0: auto */
    int credits;              /* transport only, 0: auto */
    const char *rule;         /* which rule, "bcast[2]"; lives as long as the table */
} nicoll_tuning_decision_t;

/* Reads and validates a tuning file. NULL when it cannot be used, with its first error in
 * `error` ("FILE:LINE:COL: PATH: REASON", and how many more there are). */
nicoll_tuning_t *nicoll_tuning_load(const char *path, char *error, size_t error_size);
void nicoll_tuning_free(nicoll_tuning_t *table);
/* The table compiled into the component (tuning/default.json), never NULL. */
const nicoll_tuning_t *nicoll_tuning_embedded(void);
/* Where the table came from: its path, or "embedded default"; and its provenance line. */
const char *nicoll_tuning_name(const nicoll_tuning_t *table);
const char *nicoll_tuning_provenance(const nicoll_tuning_t *table);
/* A digest of the table's text: ranks that must decide alike compare it. */
unsigned long long nicoll_tuning_digest(const nicoll_tuning_t *table);

/* The decision of the first rule matching (section, comm_size, bytes, nodes, ppn, fabric); nodes
 * and ppn 0 when unknown. Returns 1 with *decision set, or 0 when the table has no rules for the
 * section (then the caller asks the next table). */
int nicoll_tuning_decide(const nicoll_tuning_t *table, nicoll_tuning_section_t section,
                         int comm_size, size_t bytes, int nodes, int ppn,
                         nicoll_tuning_fabric_t fabric, nicoll_tuning_decision_t *decision);

/* A size as tuning files spell it ("65536", "64k", "4M": k, M and G are 2^10, 2^20, 2^30): 1
 * with *bytes set, else 0. */
int nicoll_tuning_parse_size(const char *text, unsigned long long *bytes);

/* An integer variable's value (coll_nicoll_credits, bcast_k, shm_limit): decimal digits only, no
 * sign or space, within [min, max]. 1 with *value set, else 0. */
int nicoll_tuning_parse_integer(const char *text, long min, long max, long *value);

/* The packet size `auto` comes to where no rule of any table sets one (coll_nicoll_packet_size's
 * auto, which nicoll-tune show reports): 65536, since where ranks forward, packets pipeline a
 * message down a tree; 4 MiB between two ranks, where nothing is forwarded and every packet costs
 * a PML or UCX message more. (Over shared memory two ranks' staged packets pipeline the sender's
 * copy in with the receiver's copy out: the embedded table's rules for that fabric say so,
 * docs/tuning.md.) */
size_t nicoll_tuning_auto_packet_size(int comm_size);

#ifdef __cplusplus
}
#endif

#endif /* NICOLL_TUNING_H */
