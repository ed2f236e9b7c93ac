/* MPI_Barrier and MPI_Ibarrier through the engine. */
#include "coll_nicoll.h"

NICOLL_HOT_PATH
static int barrier(ompi_request_t **request, nicoll_module_t *m)
{
    nicoll_lock(); /* (coll_nicoll_progress.c) */
    nicoll_request_t on_stack;
    nicoll_request_t *req =
        nicoll_request_new(m, NULL == request ? NICOLL_BARRIER : NICOLL_IBARRIER, NULL == request,
                           &on_stack);
    if (NULL == req) {
        nicoll_abort_unwaited(m);
        nicoll_unlock();
        return nicoll_error(m, NULL == request ? NICOLL_BARRIER : NICOLL_IBARRIER,
                            NICSIM_ERR_NO_MEMORY);
    }
    nicsim_status_t s = nicoll_transport_ready(m);
    if (NICSIM_OK != s) {
        s = nicoll_abort(m, s, &req->engine); /* a transport broken since set-up: others told */
    } else {
        nicoll_decision_t d;
        nicoll_decide(m, NULL == request ? NICOLL_BARRIER : NICOLL_IBARRIER, 0, &d);
        const nicoll_post_t post = {.coll = NICSIM_COLL_BARRIER, .algorithm = d.algorithm};
        s = nicoll_post(req, &post);
    }
    const int rc = nicoll_start(req, s, request);
    nicoll_unlock();
    return rc;
}

NICOLL_HOT_PATH
int nicoll_barrier(struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    nicoll_module_t *m = (nicoll_module_t *) module;
    if (m->transport.starting) { /* the previous allgather gathering locality, on every rank */
        return m->previous_barrier(comm, m->previous_barrier_module);
    }
    if (nicoll_declined(m)) {
        ++mca_coll_nicoll_component.stats.coll[NICOLL_BARRIER].fallbacks;
        return m->previous_barrier(comm, m->previous_barrier_module);
    }
    return barrier(NULL, m);
}

NICOLL_HOT_PATH
int nicoll_ibarrier(struct ompi_communicator_t *comm, ompi_request_t **request,
                    mca_coll_base_module_t *module)
{
    nicoll_module_t *m = (nicoll_module_t *) module;
    if (nicoll_declined(m)) {
        ++mca_coll_nicoll_component.stats.coll[NICOLL_IBARRIER].fallbacks;
        return m->previous_ibarrier(comm, request, m->previous_ibarrier_module);
    }
    return barrier(request, m);
}
