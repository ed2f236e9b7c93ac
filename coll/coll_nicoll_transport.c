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

/* ompi_request_free() leaves MPI_REQUEST_NULL behind; our slots say NULL for "none". */
static int release(ompi_request_t **req)
{
    int rc = (*req)->req_status.MPI_ERROR;
    ompi_request_free(req);
    *req = NULL;
    return rc;
}

static nicsim_status_t pml_status(int rc)
{
    return OMPI_SUCCESS == rc ? NICSIM_OK
           : OMPI_ERR_OUT_OF_RESOURCE == rc ? NICSIM_ERR_AGAIN
                                            : NICSIM_ERR_TRANSPORT;
}

static nicsim_status_t post_recv(nicoll_transport_t *t, int slot)
{
    nicsim_status_t s = pml_status(MCA_PML_CALL(irecv(recv_buffer(t, slot), t->packet_bytes,
                                                      MPI_BYTE, MPI_ANY_SOURCE, NICOLL_TAG_PACKET,
                                                      t->comm, &t->recv[slot])));
    if (NICSIM_OK != s) {
        t->recv[slot] = NULL;
    }
    return s;
}

static nicsim_status_t send_packet(void *context, int dst, const void *packet, size_t bytes)
{
    nicoll_transport_t *t = context;
    if (bytes > t->packet_bytes) {
        return NICSIM_ERR_INVALID;
    }
    for (int slot = 0; slot < NICOLL_PACKET_SLOTS; ++slot) {
        ompi_request_t **req = &t->send[slot];
        if (NULL != *req) {
            if (!REQUEST_COMPLETE(*req)) {
                continue;
            }
            if (MPI_SUCCESS != release(req)) {
                return NICSIM_ERR_TRANSPORT;
            }
        }
        memcpy(send_buffer(t, slot), packet, bytes);
        nicsim_status_t s = pml_status(MCA_PML_CALL(isend(send_buffer(t, slot), bytes, MPI_BYTE,
                                                          dst, NICOLL_TAG_PACKET,
                                                          MCA_PML_BASE_SEND_STANDARD, t->comm,
                                                          req)));
        if (NICSIM_OK == s) {
            ++mca_coll_nicoll_component.stats.packets_sent;
        } else {
            *req = NULL;
        }
        return s;
    }
    return NICSIM_ERR_AGAIN;
}

nicsim_status_t nicoll_transport_init(nicoll_transport_t *t, struct ompi_communicator_t *comm)
{
    memset(t, 0, sizeof(*t));
    t->comm = comm;
    t->packet_bytes = nicsim_packet_max_bytes();
    t->buffers = malloc(2 * NICOLL_PACKET_SLOTS * t->packet_bytes);
    nicsim_transport_t ops = {.context = t, .send = send_packet};
    t->error = NULL == t->buffers ? NICSIM_ERR_NO_MEMORY
                                  : nicsim_group_create(ompi_comm_rank(comm), ompi_comm_size(comm),
                                                        &ops, &t->group);
    return t->error;
}

void nicoll_transport_fini(nicoll_transport_t *t)
{
    /* Packets still queued in the engine belong to collectives this rank completed and their
     * receivers wait for them: hand them over first. */
    while (NULL != t->group && NICSIM_IN_PROGRESS == nicsim_group_progress(t->group)) {
        opal_progress();
    }
    /* Every packet addressed to us belongs to a collective this rank completed, so the posted
     * receives are idle: cancel them. Sends complete because their receivers needed them. */
    for (int i = 0; i < NICOLL_PACKET_SLOTS; ++i) {
        if (NULL != t->recv[i]) {
            ompi_request_cancel(t->recv[i]);
            ompi_request_wait(&t->recv[i], MPI_STATUS_IGNORE);
        }
        if (NULL != t->send[i]) {
            ompi_request_wait(&t->send[i], MPI_STATUS_IGNORE);
        }
    }
    nicsim_group_free(t->group);
    t->group = NULL;
    free(t->buffers);
    t->buffers = NULL;
}

/* Hands completed receives to the engine, oldest first, and reposts them; then lets the engine
 * retry queued sends. */
static nicsim_status_t poll(nicoll_transport_t *t)
{
    if (!t->receiving) {
        for (int i = 0; i < NICOLL_PACKET_SLOTS; ++i) {
            if (NULL == t->recv[i] && NICSIM_OK != post_recv(t, i)) {
                return NICSIM_ERR_TRANSPORT;
            }
        }
        t->receiving = true;
    }
    while (REQUEST_COMPLETE(t->recv[t->recv_head])) {
        int slot = t->recv_head;
        int src = t->recv[slot]->req_status.MPI_SOURCE;
        size_t bytes = t->recv[slot]->req_status._ucount;
        if (MPI_SUCCESS != release(&t->recv[slot])) {
            return NICSIM_ERR_TRANSPORT;
        }
        ++mca_coll_nicoll_component.stats.packets_received;
        nicsim_status_t delivered = nicsim_group_deliver(t->group, src, recv_buffer(t, slot), bytes);
        if (NICSIM_OK != post_recv(t, slot)) {
            return NICSIM_ERR_TRANSPORT;
        }
        t->recv_head = (slot + 1) % NICOLL_PACKET_SLOTS;
        if (NICSIM_OK != delivered) {
            return delivered;
        }
    }
    nicsim_status_t s = nicsim_group_progress(t->group);
    return NICSIM_IN_PROGRESS == s ? NICSIM_OK : s;
}

nicsim_status_t nicoll_transport_wait(nicoll_transport_t *t, const nicsim_request_t *request)
{
    nicsim_status_t s;
    while (NICSIM_IN_PROGRESS == (s = nicsim_request_test(request))) {
        s = poll(t);
        if (NICSIM_OK != s) {
            break;
        }
        if (NICSIM_IN_PROGRESS == nicsim_request_test(request)) {
            opal_progress();
        }
    }
    if (NICSIM_OK != s) {
        /* A lost receive, a failed send or a packet that broke the protocol: the ranks no longer
         * agree on this group's state, so it cannot go on. */
        t->error = s;
    }
    return s;
}
