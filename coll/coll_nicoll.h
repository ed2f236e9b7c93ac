/*
 * nicoll: the Open MPI collectives component that runs collectives on the nicsim engine.
 *
 * This folder is glue only: registration and MCA variables, comm_query/enable, the collective
 * entry points, and the transport that carries the engine's packets over Open MPI's PML. The
 * protocols live in the engine, reached only through nicsim/include/nicsim/nicsim.h.
 */
#ifndef MCA_COLL_NICOLL_H
#define MCA_COLL_NICOLL_H

#include "ompi_config.h"

#include "mpi.h"
#include "ompi/communicator/communicator.h"
#include "ompi/mca/coll/coll.h"
#include "ompi/request/request.h"
#include "opal/util/output.h"

#include "nicsim/nicsim.h"

BEGIN_C_DECLS

/*
 * The engine's packets travel on the user's communicator with PML tags from this range. Tags
 * below zero are never matched by MPI_ANY_TAG, so applications cannot intercept them, and Open MPI
 * 4.1 leaves -2..-6 unused: MPI_ANY_TAG is -1, coll/base and libnbc start at -10, and the
 * communicator code uses -31078..-31080. nicoll uses -2 today and keeps -3..-6 for later use.
 */
#define NICOLL_TAG_FIRST (-2)
#define NICOLL_TAG_LAST (-6)
#define NICOLL_TAG_PACKET NICOLL_TAG_FIRST

/* Receives posted, and sends in flight, per communicator. */
#define NICOLL_PACKET_SLOTS 8

/* Counters exported as MPI_T performance variables (coll_nicoll_<name>); see nicoll_stats[]. */
typedef struct nicoll_stats {
    unsigned long long barriers;
    unsigned long long packets_sent;
    unsigned long long packets_received;
} nicoll_stats_t;

typedef struct nicoll_component {
    mca_coll_base_component_2_0_0_t super;

    /* MCA variables (declared in coll_nicoll_component.c, nicoll_params[]) */
    int priority;
    int verbose;
    char *barrier_algorithm_name;

    /* derived */
    int barrier_algorithm; /* index into the engine's barrier table */
    int output;            /* opal_output stream at `verbose` */

    nicoll_stats_t stats;
} nicoll_component_t;

OMPI_MODULE_DECLSPEC extern nicoll_component_t mca_coll_nicoll_component;

/* The engine group of one communicator and the PML transport under it. */
typedef struct nicoll_transport {
    struct ompi_communicator_t *comm;
    nicsim_group_t *group;
    nicsim_status_t error;  /* set once the group cannot go on; every later collective fails */
    size_t packet_bytes;
    unsigned char *buffers; /* NICOLL_PACKET_SLOTS receive, then NICOLL_PACKET_SLOTS send */
    bool receiving;         /* receives posted (lazily, at the first collective) */
    int recv_head;          /* oldest posted receive: packets are taken in posting order */
    ompi_request_t *recv[NICOLL_PACKET_SLOTS]; /* NULL: not posted */
    ompi_request_t *send[NICOLL_PACKET_SLOTS]; /* NULL: free */
} nicoll_transport_t;

/* On failure the transport is left with `error` set, so the communicator's collectives fail
 * with that error on this rank instead of running elsewhere while its peers run nicoll. */
nicsim_status_t nicoll_transport_init(nicoll_transport_t *t, struct ompi_communicator_t *comm);
void nicoll_transport_fini(nicoll_transport_t *t);
/* Progresses Open MPI and the engine until `request` is complete; returns its final status. */
nicsim_status_t nicoll_transport_wait(nicoll_transport_t *t, const nicsim_request_t *request);

typedef struct nicoll_module {
    mca_coll_base_module_t super;
    nicoll_transport_t transport;

    /* The module this one replaced, kept for fallback: a call nicoll declines runs there. Every
     * rank must decline the same calls, so only decisions all ranks make alike (arguments, MCA
     * values) may use it; no barrier is declined today. */
    mca_coll_base_module_barrier_fn_t previous_barrier;
    mca_coll_base_module_t *previous_barrier_module;
} nicoll_module_t;

OBJ_CLASS_DECLARATION(nicoll_module_t);

mca_coll_base_module_t *nicoll_comm_query(struct ompi_communicator_t *comm, int *priority);

int nicoll_barrier(struct ompi_communicator_t *comm, mca_coll_base_module_t *module);

/* Reports a failed collective in one line and returns the matching OMPI error code. */
int nicoll_error(struct ompi_communicator_t *comm, const char *operation, nicsim_status_t status);

#define NICOLL_VERBOSE(level, ...) \
    opal_output_verbose((level), mca_coll_nicoll_component.output, "nicoll: " __VA_ARGS__)

END_C_DECLS

#endif /* MCA_COLL_NICOLL_H */
