/*
 * The per-communicator module: comm_query decides whether nicoll takes a communicator (and says
 * why not), enable saves the modules it replaces and creates the engine group, the destructor
 * undoes both.
 */
#include "coll_nicoll.h"

#include <stdio.h>
#include <string.h>

#include "ompi/attribute/attribute.h"
#include "ompi/runtime/mpiruntime.h"

const char *const nicoll_coll_names[NICOLL_COLLS] = {"barrier",  "bcast",  "allgather",
                                                     "ibarrier", "ibcast", "iallgather"};

static void nicoll_module_construct(nicoll_module_t *m)
{
    m->transport.group = NULL;
    m->transport.recv = m->transport.send = NULL;
    m->transport.buffers = NULL;
    m->transport.shm = NULL;
    m->previous_bcast_module = m->previous_allgather_module = m->previous_barrier_module = NULL;
    m->previous_ibcast_module = m->previous_iallgather_module = m->previous_ibarrier_module = NULL;
    m->previous_allreduce_module = NULL;
    m->nodes = m->ppn = 0;
    m->fabric = NICOLL_TUNING_FABRIC_UNKNOWN;
    memset(m->decided, 0, sizeof(m->decided));
    m->errors_said = 0;
}

static void nicoll_module_destruct(nicoll_module_t *m)
{
    nicoll_lock(); /* the progress thread polls no freed transport */
    nicoll_transport_fini(&m->transport);
    nicoll_unlock();
    mca_coll_base_module_t *previous[] = {m->previous_bcast_module,  m->previous_allgather_module,
                                          m->previous_barrier_module, m->previous_ibcast_module,
                                          m->previous_iallgather_module,
                                          m->previous_ibarrier_module,
                                          m->previous_allreduce_module};
    for (size_t i = 0; i < sizeof(previous) / sizeof(previous[0]); ++i) {
        if (NULL != previous[i]) {
            OBJ_RELEASE(previous[i]);
        }
    }
}

OBJ_CLASS_INSTANCE(nicoll_module_t, mca_coll_base_module_t, nicoll_module_construct,
                   nicoll_module_destruct);

/* Modules are enabled in increasing priority, so comm->c_coll holds the best lower one. */
#define NICOLL_SAVE(m, comm, name)                                          \
    do {                                                                    \
        (m)->previous_##name = (comm)->c_coll->coll_##name;                 \
        (m)->previous_##name##_module = (comm)->c_coll->coll_##name##_module; \
        if (NULL != (m)->previous_##name##_module) {                        \
            OBJ_RETAIN((m)->previous_##name##_module);                      \
        }                                                                   \
    } while (0)

static const char *algorithm_name(nicsim_collective_t coll, int algorithm)
{
    return NICOLL_AUTO == algorithm ? "auto" : nicsim_algorithm_name(coll, algorithm);
}

/* MPI_Comm_free deletes a communicator's attributes before it lets go of it: nicoll's attribute,
 * the module, tells the transport (nicoll_transport_freed). Not at MPI_Finalize, which frees
 * every communicator there is at once. */
static int freed_keyval = MPI_KEYVAL_INVALID;

static int comm_freed(MPI_Comm comm, int keyval, void *attribute, void *extra)
{
    (void) comm, (void) keyval, (void) extra;
    if (ompi_mpi_state < OMPI_MPI_STATE_FINALIZE_STARTED) {
        nicoll_lock();
        nicoll_transport_freed(attribute);
        nicoll_unlock();
    }
    return OMPI_SUCCESS;
}

/* A duplicate has a module of its own. */
static int not_copied(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *copied,
                      MPI_Comm duplicate)
{
    (void) comm, (void) keyval, (void) extra, (void) in, (void) out, (void) duplicate;
    *copied = 0;
    return OMPI_SUCCESS;
}

/* Asks to be told when `comm` is freed (comm_freed); where that fails, its transport over the
 * PML stays until MPI_Finalize, as a communicator's would without it. */
static void watch_free(nicoll_module_t *m, struct ompi_communicator_t *comm)
{
    if (MPI_KEYVAL_INVALID == freed_keyval) {
        ompi_attribute_fn_ptr_union_t copy = {.attr_communicator_copy_fn = not_copied};
        ompi_attribute_fn_ptr_union_t delete = {.attr_communicator_delete_fn = comm_freed};
        if (OMPI_SUCCESS !=
            ompi_attr_create_keyval(COMM_ATTR, copy, delete, &freed_keyval, NULL, 0, NULL)) {
            freed_keyval = MPI_KEYVAL_INVALID;
            return;
        }
    }
    (void) ompi_attr_set_c(COMM_ATTR, comm, &comm->c_keyhash, freed_keyval, m, false);
}

static int nicoll_module_enable(mca_coll_base_module_t *module, struct ompi_communicator_t *comm)
{
    nicoll_module_t *m = (nicoll_module_t *) module;
    const nicoll_component_t *c = &mca_coll_nicoll_component;

    NICOLL_SAVE(m, comm, bcast);
    NICOLL_SAVE(m, comm, allgather);
    NICOLL_SAVE(m, comm, barrier);
    NICOLL_SAVE(m, comm, ibcast);
    NICOLL_SAVE(m, comm, iallgather);
    NICOLL_SAVE(m, comm, ibarrier);
    NICOLL_SAVE(m, comm, allreduce);

    /* Failing here would drop nicoll on this rank only, leaving its peers waiting for packets it
     * never sends; a failed transport is reported at the first collective's set-up instead, which
     * every rank then declines. */
    nicsim_status_t s = nicoll_transport_init(&m->transport, comm);
    if (NICSIM_OK != s) {
        opal_output(0, "nicoll: communicator %s (cid %u): cannot create the transport: %s",
                    nicoll_comm_name(comm), (unsigned) comm->c_contextid, nicsim_status_string(s));
        return OMPI_SUCCESS;
    }
    watch_free(m, comm);
    char k[16] = "auto";
    if (NICOLL_AUTO != c->bcast_k) {
        snprintf(k, sizeof(k), "%d", c->bcast_k);
    }
    NICOLL_VERBOSE(10,
                   "communicator %s (cid %u, size %d): bcast=%s k=%s allgather=%s barrier=%s "
                   "packet_size=%zu credits=%d",
                   nicoll_comm_name(comm), (unsigned) comm->c_contextid, ompi_comm_size(comm),
                   algorithm_name(NICSIM_COLL_BCAST, c->bcast_algorithm), k,
                   algorithm_name(NICSIM_COLL_ALLGATHER, c->allgather_algorithm),
                   algorithm_name(NICSIM_COLL_BARRIER, c->barrier_algorithm),
                   m->transport.packet_size, m->transport.recv_slots / (ompi_comm_size(comm) - 1));
    return OMPI_SUCCESS;
}

mca_coll_base_module_t *nicoll_comm_query(struct ompi_communicator_t *comm, int *priority)
{
    const char *why = NULL;
    if (mca_coll_nicoll_component.priority < 0) {
        why = "coll_nicoll_priority is negative";
    } else if (OMPI_COMM_IS_INTER(comm)) {
        why = "intercommunicators are not supported";
    } else if (ompi_comm_size(comm) < 2) {
        why = "size 1 needs no communication";
    }
    if (NULL != why) {
        NICOLL_VERBOSE(10, "declining communicator %s (cid %u): %s", nicoll_comm_name(comm),
                       (unsigned) comm->c_contextid, why);
        return NULL;
    }

    nicoll_module_t *m = OBJ_NEW(nicoll_module_t);
    if (NULL == m) {
        return NULL;
    }
    *priority = mca_coll_nicoll_component.priority;
    m->super.coll_module_enable = nicoll_module_enable;
    m->super.coll_bcast = nicoll_bcast;
    m->super.coll_allgather = nicoll_allgather;
    m->super.coll_barrier = nicoll_barrier;
    m->super.coll_ibcast = nicoll_ibcast;
    m->super.coll_iallgather = nicoll_iallgather;
    m->super.coll_ibarrier = nicoll_ibarrier;
    return &m->super;
}

int nicoll_error(nicoll_module_t *m, nicoll_coll_t coll, nicsim_status_t status)
{
    const struct ompi_communicator_t *comm = m->transport.comm;
    const unsigned bit = 1u << (unsigned) (-status & 31);
    if (0 == (m->errors_said & bit)) {
        m->errors_said |= bit;
        opal_output(0, "nicoll: %s on communicator %s (cid %u) failed: %s (said once per "
                    "communicator)", nicoll_coll_names[coll], nicoll_comm_name(comm),
                    (unsigned) comm->c_contextid, nicsim_status_string(status));
    }
    return NICSIM_ERR_NO_MEMORY == status ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_ERROR;
}
