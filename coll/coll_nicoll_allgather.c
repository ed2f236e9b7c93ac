/* MPI_Allgather and MPI_Iallgather through the engine: recursive doubling with combined packets,
 * or all-to-all broadcast with hopping packets (Yu et al.), for any communicator size. */
#include "coll_nicoll.h"

#include <stdlib.h>

/* The engine numbers an allgather's packets in 24 bits per transfer (nic/allgather_op.h). */
#define NICOLL_ALLGATHER_MAX_PACKETS (1ull << 24)

NICOLL_HOT_PATH
static int allgather(const void *sbuf, int scount, struct ompi_datatype_t *stype, void *rbuf,
                     int rcount, struct ompi_datatype_t *rtype, struct ompi_communicator_t *comm,
                     ompi_request_t **request, nicoll_module_t *m)
{
    const int rank = ompi_comm_rank(comm), size = ompi_comm_size(comm);
    size_t type_size;
    ompi_datatype_type_size(rtype, &type_size);
    const size_t block = (size_t) rcount * type_size, total = block * (size_t) size;

    /* Declined, or beyond the engine's packet numbering: every rank sees the same settings and
     * sizes, so all fall back. (total / packet_size >= MAX, divided by the constant: a shift.) */
    const bool declined = nicoll_declined(m);
    nicoll_decision_t d;
    const nicoll_coll_t coll = NULL == request ? NICOLL_ALLGATHER : NICOLL_IALLGATHER;
    nicoll_decide(m, coll, block, &d);
    if (declined || total / NICOLL_ALLGATHER_MAX_PACKETS >= d.packet_size) {
        ++mca_coll_nicoll_component.stats.coll[coll].fallbacks;
        return NULL == request
                   ? m->previous_allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm,
                                           m->previous_allgather_module)
                   : m->previous_iallgather(sbuf, scount, stype, rbuf, rcount, rtype, comm,
                                            request, m->previous_iallgather_module);
    }

    nicoll_lock(); /* (coll_nicoll_progress.c) */
    nicoll_request_t on_stack;
    nicoll_request_t *req = nicoll_request_new(m, coll, NULL == request, &on_stack);
    if (NULL == req) {
        nicoll_abort_unwaited(m);
        nicoll_unlock();
        return nicoll_error(m, coll, NICSIM_ERR_NO_MEMORY);
    }
    req->bytes = total;
    nicsim_status_t s = nicoll_transport_ready(m);
    if (NICSIM_OK != s && block > 0) {
        s = nicoll_abort(m, s, &req->engine); /* a transport broken since set-up: others told */
    } else if (NICSIM_OK == s && block > 0) {
        ptrdiff_t lb, extent;
        ompi_datatype_get_extent(rtype, &lb, &extent);
        void *own = (char *) rbuf + (ptrdiff_t) rank * rcount * extent; /* rank's block, in place */
        unsigned char *flat = nicoll_data_start(rbuf, rtype);
        const bool contiguous = nicoll_contiguous(rtype, (size_t) rcount * size);
        /* A contiguous send buffer is sent from as it is, and the engine copies it into place
         * once its first packets are out: the peers read memory this rank does not write. */
        const void *send_from = MPI_IN_PLACE != sbuf && contiguous &&
                                        nicoll_contiguous(stype, (size_t) scount)
                                    ? nicoll_data_start(sbuf, stype)
                                    : NULL;
        if (!contiguous) {
            flat = req->packed = nicoll_fault(NICOLL_FAULT_PACK) ? NULL : malloc(total);
            req->unpack_to = rbuf;
            req->unpack_count = (size_t) rcount * size;
            req->unpack_type = rtype;
        }
        if (NULL == flat) {
            s = NICSIM_ERR_NO_MEMORY;
        } else if (NULL == send_from && (MPI_IN_PLACE != sbuf || !contiguous)) {
            const bool packed_ok =
                MPI_IN_PLACE == sbuf
                    ? OMPI_SUCCESS == nicoll_pack(own, rcount, rtype, flat + rank * block, block)
                    : OMPI_SUCCESS == nicoll_pack(sbuf, scount, stype, flat + rank * block, block);
            s = packed_ok ? NICSIM_OK : NICSIM_ERR_INVALID;
        }
        if (NICSIM_OK == s) {
            const nicoll_post_t post = {.coll = NICSIM_COLL_ALLGATHER, .algorithm = d.algorithm,
                                        .buffer = flat, .bytes = block,
                                        .packet_size = d.packet_size, .own = send_from};
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
int nicoll_allgather(const void *sbuf, int scount, struct ompi_datatype_t *stype, void *rbuf,
                     int rcount, struct ompi_datatype_t *rtype, struct ompi_communicator_t *comm,
                     mca_coll_base_module_t *module)
{
    return allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, NULL,
                     (nicoll_module_t *) module);
}

NICOLL_HOT_PATH
int nicoll_iallgather(const void *sbuf, int scount, struct ompi_datatype_t *stype, void *rbuf,
                      int rcount, struct ompi_datatype_t *rtype, struct ompi_communicator_t *comm,
                      ompi_request_t **request, mca_coll_base_module_t *module)
{
    return allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, request,
                     (nicoll_module_t *) module);
}
