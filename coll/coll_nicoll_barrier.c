/* MPI_Barrier through the engine. */
#include "coll_nicoll.h"

int nicoll_barrier(struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    nicoll_module_t *m = (nicoll_module_t *) module;
    nicsim_request_t *request;

    nicsim_status_t s = m->transport.error;
    if (NICSIM_OK == s) {
        s = nicsim_barrier_post(m->transport.group, mca_coll_nicoll_component.barrier_algorithm,
                                &request);
    }
    if (NICSIM_OK == s) {
        s = nicoll_transport_wait(&m->transport, request);
        nicsim_request_free(request);
    }
    if (NICSIM_OK != s) {
        return nicoll_error(comm, "MPI_Barrier", s);
    }
    ++mca_coll_nicoll_component.stats.barriers;
    NICOLL_VERBOSE(20, "MPI_Barrier on %s (cid %u) done, %llu so far", comm->c_name,
                   (unsigned) comm->c_contextid, mca_coll_nicoll_component.stats.barriers);
    return OMPI_SUCCESS;
}
