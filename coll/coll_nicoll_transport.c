/*
 * The real fabric's transport: engine packets over Open MPI's PML on the user's communicator,
 * with tag NICOLL_TAG_PACKET (see coll_nicoll.h for why that tag is private).
 *
 * Receives: NICOLL_PACKET_SLOTS receives from MPI_ANY_SOURCE stay posted, in a ring. The PML
 * matches arriving packets to receives in posting order, so taking completed receives from the
 * head of the ring, and reposting each at the tail, hands the engine every sender's packets in
 * the order they were sent.
 *
 * Sends: the engine's send callback copies the packet into a free send slot and starts a
 * nonblocking send. With every slot busy it answers NICSIM_ERR_AGAIN and the engine keeps the
 * packet in its transmit queue until nicsim_group_progress() offers it again.
 */
#include "coll_nicoll.h"

#include <stdlib.h>
#include <string.h>

#include "ompi/mca/pml/pml.h"
#include "opal/runtime/opal_progress.h"

static unsigned char *recv_buffer(nicoll_transport_t *t, int slot)
{
    return t->buffers + (size_t) slot * t->packet_bytes;
}

static unsigned char *send_buffer(nicoll_transport_t *t, int slot)
{
    return t->buffers + (size_t) (NICOLL_PACKET_SLOTS + slot) * t->packet_bytes;
}

static nicsim_status_t pml_status(int rc)
{
    return OMPI_SUCCESS == rc ? NICSIM_OK
           : OMPI_ERR_OUT_OF_RESOURCE == rc ? NICSIM_ERR_AGAIN
                                            : NICSIM_ERR_TRANSPORT;
}

static nicsim_status_t post_recv(nicoll_transport_t *t, int slot)
{
    return pml_status(MCA_PML_CALL(irecv(recv_buffer(t, slot), t->packet_bytes, MPI_BYTE,
                                         MPI_ANY_SOURCE, NICOLL_TAG_PACKET, t->comm,
                                         &t->recv[slot])));
}

static nicsim_status_t send_packet(void *context, int dst, const void *packet, size_t bytes)
{
    nicoll_transport_t *t = context;
    if (bytes > t->packet_bytes) {
        return NICSIM_ERR_INVALID;
    }
    for (int i = 0; i < NICOLL_PACKET_SLOTS; ++i) {
        int slot = (t->send_next + i) % NICOLL_PACKET_SLOTS;
        ompi_request_t **req = &t->send[slot];
        if (NULL != *req) {
            if (!REQUEST_COMPLETE(*req)) {
                continue;
            }
            int rc = (*req)->req_status.MPI_ERROR;
            ompi_request_free(req);
            if (MPI_SUCCESS != rc) {
                return NICSIM_ERR_TRANSPORT;
            }
        }
        memcpy(send_buffer(t, slot), packet, bytes);
        nicsim_status_t s = pml_status(MCA_PML_CALL(isend(send_buffer(t, slot), bytes, MPI_BYTE,
                                                          dst, NICOLL_TAG_PACKET,
                                                          MCA_PML_BASE_SEND_STANDARD, t->comm,
                                                          req)));
        if (NICSIM_OK == s) {
            t->send_next = (slot + 1) % NICOLL_PACKET_SLOTS;
            ++mca_coll_nicoll_component.stats.packets_sent;
        }
        return s;
    }
    return NICSIM_ERR_AGAIN;
}

int nicoll_transport_init(nicoll_transport_t *t, struct ompi_communicator_t *comm)
{
    memset(t, 0, sizeof(*t));
    t->comm = comm;
    t->packet_bytes = nicsim_packet_max_bytes();
    t->buffers = malloc(2 * NICOLL_PACKET_SLOTS * t->packet_bytes);
    if (NULL == t->buffers) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    nicsim_transport_t ops = {.context = t, .send = send_packet};
    nicsim_status_t s = nicsim_group_create(ompi_comm_rank(comm), ompi_comm_size(comm), &ops,
                                            &t->group);
    if (NICSIM_OK != s) {
        free(t->buffers);
        t->buffers = NULL;
        return NICSIM_ERR_NO_MEMORY == s ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_ERR_BAD_PARAM;
    }
    return OMPI_SUCCESS;
}

void nicoll_transport_fini(nicoll_transport_t *t)
{
    if (NULL == t->group) {
        return;
    }
    /* Every packet addressed to us belongs to a collective this rank completed, so the posted
     * receives are idle: cancel them. Sends complete because their receivers needed them. */
    for (int i = 0; i < NICOLL_PACKET_SLOTS; ++i) {
        if (NULL == t->recv[i]) {
            continue;
        }
        ompi_request_cancel(t->recv[i]);
        ompi_request_wait(&t->recv[i], MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < NICOLL_PACKET_SLOTS; ++i) {
        if (NULL != t->send[i]) {
            ompi_request_wait(&t->send[i], MPI_STATUS_IGNORE);
        }
    }
    nicsim_group_free(t->group);
    t->group = NULL;
    free(t->buffers);
    t->buffers = NULL;
}

/* Hands completed receives to the engine, oldest first, and reposts them. */
static nicsim_status_t poll_receives(nicoll_transport_t *t)
{
    if (!t->receiving) {
        for (int i = 0; i < NICOLL_PACKET_SLOTS; ++i) {
            if (NULL == t->recv[i] && NICSIM_OK != post_recv(t, i)) {
                return NICSIM_ERR_TRANSPORT;
            }
        }
        t->receiving = true;
    }
    while (NULL != t->recv[t->recv_head] && REQUEST_COMPLETE(t->recv[t->recv_head])) {
        int slot = t->recv_head;
        ompi_request_t *req = t->recv[slot];
        int rc = req->req_status.MPI_ERROR;
        int src = req->req_status.MPI_SOURCE;
        size_t bytes = req->req_status._ucount;
        ompi_request_free(&t->recv[slot]);
        if (MPI_SUCCESS != rc) {
            return NICSIM_ERR_TRANSPORT;
        }
        ++mca_coll_nicoll_component.stats.packets_received;
        nicsim_status_t delivered = nicsim_group_deliver(t->group, src, recv_buffer(t, slot), bytes);
        if (NICSIM_OK != post_recv(t, slot)) {
            return NICSIM_ERR_TRANSPORT; /* the ring has a hole: this group cannot go on */
        }
        t->recv_head = (slot + 1) % NICOLL_PACKET_SLOTS;
        if (NICSIM_OK != delivered) {
            return delivered;
        }
    }
    return nicsim_group_progress(t->group);
}

nicsim_status_t nicoll_transport_wait(nicoll_transport_t *t, const nicsim_request_t *request)
{
    nicsim_status_t s;
    while (NICSIM_IN_PROGRESS == (s = nicsim_request_test(request))) {
        s = poll_receives(t);
        if (NICSIM_OK != s) {
            return s;
        }
        if (NICSIM_IN_PROGRESS == nicsim_request_test(request)) {
            opal_progress();
        }
    }
    return s;
}
