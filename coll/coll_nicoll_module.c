/*
 * The per-communicator module: comm_query decides whether nicoll takes a communicator (and says
 * why not), enable saves the module it replaces and creates the engine group, the destructor
 * undoes both.
 */
#include "coll_nicoll.h"

static void nicoll_module_construct(nicoll_module_t *m)
{
    m->transport.group = NULL;
    m->previous_barrier = NULL;
    m->previous_barrier_module = NULL;
}

static void nicoll_module_destruct(nicoll_module_t *m)
{
    nicoll_transport_fini(&m->transport);
    if (NULL != m->previous_barrier_module) {
        OBJ_RELEASE(m->previous_barrier_module);
    }
}

OBJ_CLASS_INSTANCE(nicoll_module_t, mca_coll_base_module_t, nicoll_module_construct,
                   nicoll_module_destruct);

static int nicoll_module_enable(mca_coll_base_module_t *module, struct ompi_communicator_t *comm)
{
    nicoll_module_t *m = (nicoll_module_t *) module;

    /* Modules are enabled in increasing priority, so comm->c_coll holds the best lower one. */
    m->previous_barrier = comm->c_coll->coll_barrier;
    m->previous_barrier_module = comm->c_coll->coll_barrier_module;
    if (NULL != m->previous_barrier_module) {
        OBJ_RETAIN(m->previous_barrier_module);
    }

    /* Failing here would drop nicoll on this rank only, leaving its peers waiting for packets it
     * never sends; a failed transport fails this communicator's collectives instead. */
    nicsim_status_t s = nicoll_transport_init(&m->transport, comm);
    if (NICSIM_OK != s) {
        opal_output(0, "nicoll: communicator %s (cid %u): cannot create the engine group: %s",
                    comm->c_name, (unsigned) comm->c_contextid, nicsim_status_string(s));
        return OMPI_SUCCESS;
    }
    NICOLL_VERBOSE(10, "communicator %s (cid %u, size %d): barrier=%s",
                   comm->c_name, (unsigned) comm->c_contextid, ompi_comm_size(comm),
                   nicsim_algorithm_name(NICSIM_COLL_BARRIER,
                                         mca_coll_nicoll_component.barrier_algorithm));
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
        NICOLL_VERBOSE(10, "declining communicator %s (cid %u): %s", comm->c_name,
                       (unsigned) comm->c_contextid, why);
        return NULL;
    }

    nicoll_module_t *m = OBJ_NEW(nicoll_module_t);
    if (NULL == m) {
        return NULL;
    }
    *priority = mca_coll_nicoll_component.priority;
    m->super.coll_module_enable = nicoll_module_enable;
    m->super.coll_barrier = nicoll_barrier;
    return &m->super;
}

int nicoll_error(struct ompi_communicator_t *comm, const char *operation, nicsim_status_t status)
{
    opal_output(0, "nicoll: %s on communicator %s (cid %u) failed: %s", operation, comm->c_name,
                (unsigned) comm->c_contextid, nicsim_status_string(status));
    return NICSIM_ERR_NO_MEMORY == status ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_ERROR;
}
