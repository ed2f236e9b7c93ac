/* MPI_Bcast and MPI_Ibcast through the engine: a k-binomial (or binomial, binary, chain, flat)
 * tree, packets forwarded as they arrive. */
#include "coll_nicoll.h"

#include <stdlib.h>

NICOLL_HOT_PATH
static int bcast(void *buf, int count, struct ompi_datatype_t *type, int root,
                 struct ompi_communicator_t *comm, ompi_request_t **request, nicoll_module_t *m)
{
    const nicoll_coll_t coll = NULL == request ? NICOLL_BCAST : NICOLL_IBCAST;
    size_t type_size;
    ompi_datatype_type_size(type, &type_size);
    const size_t bytes = (size_t) count * type_size;

    nicoll_lock(); /* (coll_nicoll_progress.c) */
    nicoll_request_t on_stack;
    nicoll_request_t *req = nicoll_request_new(m, coll, NULL == request, &on_stack);
    if (NULL == req) {
        nicoll_abort_unwaited(m);
        nicoll_unlock();
        return nicoll_error(m, coll, NICSIM_ERR_NO_MEMORY);
    }
    req->bytes = bytes;
    nicsim_status_t s = nicoll_transport_ready(m);
    if (NICSIM_OK != s && bytes > 0) {
        s = nicoll_abort(m, s, &req->engine); /* a transport broken since set-up: others told */
    } else if (NICSIM_OK == s && bytes > 0) { /* matching signatures: every rank agrees on 0 */
        const int rank = ompi_comm_rank(comm);
        void *flat = nicoll_data_start(buf, type);
        if (!nicoll_contiguous(type, count)) {
            flat = req->packed = nicoll_fault(NICOLL_FAULT_PACK) ? NULL : malloc(bytes);
            if (NULL == flat) {
                s = NICSIM_ERR_NO_MEMORY;
            } else if (rank == root) {
                s = OMPI_SUCCESS == nicoll_pack(buf, count, type, flat, bytes)
                        ? NICSIM_OK
                        : NICSIM_ERR_INVALID;
            } else {
                req->unpack_to = buf;
                req->unpack_count = count;
                req->unpack_type = type;
            }
        }
        if (NICSIM_OK == s) {
            nicoll_decision_t d;
            nicoll_decide(m, coll, bytes, &d);
            const nicoll_post_t post = {.coll = NICSIM_COLL_BCAST, .algorithm = d.algorithm,
                                        .k = d.k, .root = root, .buffer = flat, .bytes = bytes,
                                        .packet_size = d.packet_size};
            s = nicoll_post(req, &post);
        } else {
            s = nicoll_abort(m, s, &req->engine); /* the other ranks are told */
        }
    }
    const int rc = nicoll_start(req, s, request);
    nicoll_unlock();
    nicoll_call_returns();
    return rc;
}

NICOLL_HOT_PATH
int nicoll_bcast(void *buf, int count, struct ompi_datatype_t *type, int root,
                 struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    nicoll_module_t *m = (nicoll_module_t *) module;
    if (m->transport.starting) { /* the previous allgather gathering locality, on every rank */
        return m->previous_bcast(buf, count, type, root, comm, m->previous_bcast_module);
    }
    if (nicoll_declined(m)) {
        ++mca_coll_nicoll_component.stats.coll[NICOLL_BCAST].fallbacks;
        return m->previous_bcast(buf, count, type, root, comm, m->previous_bcast_module);
    }
    return bcast(buf, count, type, root, comm, NULL, m);
}

NICOLL_HOT_PATH
int nicoll_ibcast(void *buf, int count, struct ompi_datatype_t *type, int root,
                  struct ompi_communicator_t *comm, ompi_request_t **request,
                  mca_coll_base_module_t *module)
{
    nicoll_module_t *m = (nicoll_module_t *) module;
    if (nicoll_declined(m)) {
        ++mca_coll_nicoll_component.stats.coll[NICOLL_IBCAST].fallbacks;
        return m->previous_ibcast(buf, count, type, root, comm, request, m->previous_ibcast_module);
    }
    return bcast(buf, count, type, root, comm, request, m);
}
