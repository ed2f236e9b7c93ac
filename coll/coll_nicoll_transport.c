/*
 * The real fabric's transport: a fabric per peer (coll_nicoll.h, nicoll_fabric_t), chosen when
 * the communicator is set up: shared-memory rings to the ranks of this node (coll_nicoll_shm.c),
 * UCX active messages to the other nodes (coll_nicoll_ucx.c), Open MPI's PML where neither can
 * be used. The engine's flow-control window applies to UCX's and the PML's peers; a ring is its
 * own window.
 *
 * The PML fabric: engine packets over the PML on the user's communicator, with tag
 * NICOLL_TAG_PACKET (see coll_nicoll.h for why that tag is private).
 *
 * Receives: recv_slots receives from MPI_ANY_SOURCE stay posted, in a ring. The engine's flow
 * control lets each peer have at most `credits` packets unconsumed here, and there are
 * credits x pml_peers slots, so every packet finds a posted receive and the PML never queues one
 * as unexpected (LFC's rule, Bhoedjang et al. §3.1). The PML matches arriving packets to receives
 * in posting order, so taking completed receives from the head of the ring, and reposting each at
 * the tail, hands the engine every sender's packets in the order they were sent. The engine
 * consumes a packet when it is handed over (it places the payload or keeps a copy), which frees
 * the slot and earns the sender its credit back.
 *
 * Sends: the engine's send callback copies the packet into a free send slot and starts a
 * nonblocking send. With every slot busy it answers NICSIM_ERR_AGAIN and the engine keeps the
 * packet in its transmit queue until nicsim_group_progress() offers it again.
 *
 * Large payloads (over NICOLL_INLINE_BYTES) are not copied: the slot carries the header alone,
 * and the payload follows as a second message, tag NICOLL_TAG_PAYLOAD, sent straight from the
 * collective's buffer. The receiver, finding a bare header at the head of its ring, asks the
 * engine where the payload belongs (nicsim_group_place: at its offset in the user's buffer, when
 * the collective is posted) and receives it there, so the PML moves the bytes once, as it would
 * for a plain send and receive (with CMA, one copy from process to process). Both messages of a
 * packet leave together and the PML keeps each sender's messages of a tag in order, so payloads
 * match the headers taken from the ring; the ring waits at a header until its payload is in, so
 * the engine still sees every sender's packets in order. A collective whose payloads were sent
 * in place completes only once they have left (nicoll_transport_sent).
 *
 * Closing: the posted receives hold the communicator (ob1 retains it per request), so a freed
 * one would live until MPI_Finalize. Once MPI_Comm_free came (nicoll_transport_freed) and the
 * rank has nothing of the communicator in flight (no nonblocking collective, no packet queued,
 * no payload on its way), it sends each PML peer an end marker, an empty message of the packets'
 * tag, which the PML matches after every packet the rank sent that peer. A rank that has every
 * PML peer's marker, and whose own have left, will receive nothing more: it cancels its
 * receives, lets the transport go, and Open MPI frees the communicator; no late packet can reach
 * the next communicator given the same context id. Each rank's collectives complete only once
 * every packet addressed to it came, so no marker precedes one of its sender's packets.
 */
#include "coll_nicoll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ompi/mca/pml/pml.h"
#include "ompi/runtime/mpiruntime.h"
#include "opal/runtime/opal_progress.h"

static unsigned char *recv_buffer(nicoll_transport_t *t, int slot)
{
    return t->buffers + (size_t) slot * t->slot_bytes;
}

static unsigned char *send_buffer(nicoll_transport_t *t, int slot)
{
    return t->buffers + (size_t) (t->recv_slots + slot) * t->slot_bytes;
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
    nicsim_status_t s = pml_status(MCA_PML_CALL(irecv(recv_buffer(t, slot), t->slot_bytes,
                                                      MPI_BYTE, MPI_ANY_SOURCE, NICOLL_TAG_PACKET,
                                                      t->comm, &t->recv[slot])));
    if (NICSIM_OK != s) {
        t->recv[slot] = NULL;
    }
    return s;
}

/* Room for one more payload sent apart, made before its header leaves: a header whose payload
 * cannot follow would hold up its receiver's ring for good. */
static bool payload_room(nicoll_transport_t *t)
{
    if (t->payload_sends_used == t->payload_sends_size) {
        int size = t->payload_sends_size ? 2 * t->payload_sends_size : 16;
        ompi_request_t **grown = realloc(t->payload_sends, size * sizeof(*grown));
        if (NULL == grown) {
            return false;
        }
        t->payload_sends = grown;
        t->payload_sends_size = size;
    }
    return true;
}

/* Sends a payload in place, apart from its header (payload_room() made room for it). */
static nicsim_status_t send_payload(nicoll_transport_t *t, int dst, const void *payload,
                                    size_t bytes)
{
    ompi_request_t **req = &t->payload_sends[t->payload_sends_used];
    nicsim_status_t s = pml_status(MCA_PML_CALL(isend((void *) payload, bytes, MPI_BYTE, dst,
                                                      NICOLL_TAG_PAYLOAD,
                                                      MCA_PML_BASE_SEND_STANDARD, t->comm, req)));
    if (NICSIM_OK == s) {
        ++t->payload_sends_used;
    }
    /* The header has left: its payload cannot be offered again later. */
    return NICSIM_ERR_AGAIN == s ? NICSIM_ERR_TRANSPORT : s;
}

static bool pml_sent(nicoll_transport_t *t)
{
    int kept = 0;
    for (int i = 0; i < t->payload_sends_used; ++i) {
        ompi_request_t **req = &t->payload_sends[i];
        if (!REQUEST_COMPLETE(*req)) {
            t->payload_sends[kept++] = *req;
        } else if (MPI_SUCCESS != release(req) && NICSIM_OK == t->error) {
            t->error = NICSIM_ERR_TRANSPORT;
        }
    }
    t->payload_sends_used = kept;
    return 0 == kept;
}

NICOLL_HOT_PATH
bool nicoll_transport_sent(nicoll_transport_t *t)
{
    bool sent = true;
    for (int i = 0; i < t->fabric_count; ++i) {
        sent = t->fabrics[i]->sent(t) && sent;
    }
    return sent;
}

/* The engine's send: through the peer's fabric. */
NICOLL_HOT_PATH
static nicsim_status_t send_packet(void *context, int dst, const void *header, const void *payload,
                                   size_t payload_bytes)
{
    nicoll_transport_t *t = context;
    nicsim_status_t s = nicoll_fault(NICOLL_FAULT_SEND)
                            ? NICSIM_ERR_TRANSPORT
                            : t->via[dst]->send(t, dst, header, payload, payload_bytes);
    mca_coll_nicoll_component.stats.packets_sent += NICSIM_OK == s;
    if (NICSIM_ERR_AGAIN == s) { /* the engine keeps the packet until poll() offers it again */
        /* A full ring is a peer's window closing: a credit stall the engine cannot count. */
        mca_coll_nicoll_component.stats.credit_stalls +=
            !t->refused && &nicoll_fabric_shm == t->via[dst];
        t->refused = true;
    }
    return s;
}

static nicsim_status_t pml_send(nicoll_transport_t *t, int dst, const void *header,
                                const void *payload, size_t payload_bytes)
{
    if (t->close_sent) {
        /* (after the end marker, a credit return for a packet that came later: its peer does not
         * wait for it, and it would land on the communicator that next takes this context id) */
        return NICSIM_OK;
    }
    const bool apart = payload_bytes > t->inline_bytes;
    const size_t bytes = NICSIM_HEADER_BYTES + (apart ? 0 : payload_bytes);
    if (apart && !payload_room(t)) {
        return NICSIM_ERR_NO_MEMORY;
    }
    for (int slot = 0; slot < t->send_slots; ++slot) {
        ompi_request_t **req = &t->send[slot];
        if (NULL != *req) {
            if (!REQUEST_COMPLETE(*req)) {
                continue;
            }
            if (MPI_SUCCESS != release(req)) {
                return NICSIM_ERR_TRANSPORT;
            }
        }
        unsigned char *out = send_buffer(t, slot);
        memcpy(out, header, NICSIM_HEADER_BYTES);
        if (payload_bytes > 0 && !apart) {
            memcpy(out + NICSIM_HEADER_BYTES, payload, payload_bytes);
        }
        nicsim_status_t s = pml_status(MCA_PML_CALL(isend(out, bytes, MPI_BYTE, dst,
                                                          NICOLL_TAG_PACKET,
                                                          MCA_PML_BASE_SEND_STANDARD, t->comm,
                                                          req)));
        if (NICSIM_OK != s) {
            *req = NULL;
            return s;
        }
        return apart ? send_payload(t, dst, payload, payload_bytes) : NICSIM_OK;
    }
    return NICSIM_ERR_AGAIN;
}

nicsim_status_t nicoll_transport_init(nicoll_transport_t *t, struct ompi_communicator_t *comm)
{
    const int size = ompi_comm_size(comm);
    const int credits = nicoll_credits(size);
    memset(t, 0, sizeof(*t));
    t->comm = comm;
    t->packet_size = nicoll_packet_size(size);
    t->inline_bytes = t->packet_size < NICOLL_INLINE_BYTES ? t->packet_size : NICOLL_INLINE_BYTES;
    t->slot_bytes = NICSIM_HEADER_BYTES + t->inline_bytes;
    t->recv_slots = credits * (size - 1); /* until set-up finds which peers share this node */
    /* As many sends in flight as a root of a chain or a binomial tree's top keeps busy. */
    t->send_slots = credits < 4 ? 4 * credits : 16;
    t->buffers = nicoll_fault(NICOLL_FAULT_TRANSPORT)
                     ? NULL
                     : malloc((size_t) (t->recv_slots + t->send_slots) * t->slot_bytes);
    t->recv = calloc(t->recv_slots, sizeof(*t->recv));
    t->send = calloc(t->send_slots, sizeof(*t->send));
    t->via = calloc((size_t) size, sizeof(*t->via));
    t->credits = credits;
    t->error = NULL == t->buffers || NULL == t->recv || NULL == t->send || NULL == t->via
                   ? NICSIM_ERR_NO_MEMORY
                   : NICSIM_OK;
    return t->error;
}

/* Each peer's fabric, at set-up (collective): this node's rings where they reach it; between
 * nodes UCX where the transport asks for it and every rank can use it; else the PML, which then
 * keeps receive slots for its own peers only (none at all when it has none). */
static void choose_fabrics(nicoll_module_t *m)
{
    nicoll_transport_t *t = &m->transport;
    const int size = ompi_comm_size(t->comm), rank = ompi_comm_rank(t->comm);
    const int transport = mca_coll_nicoll_component.transport;
    bool *reach = calloc((size_t) size, sizeof(*reach)); /* the peers UCX would serve */
    for (int i = 0; NULL != reach && i < size; ++i) {
        reach[i] = i != rank && !nicoll_shm_reaches(t->shm, i);
    }
    /* Every rank alike: the MCA value, the node count and the previous modules agree. */
    if (NULL != m->previous_allgather && NULL != m->previous_allreduce &&
        (NICOLL_TRANSPORT_UCX == transport || (NICOLL_AUTO == transport && m->nodes > 1))) {
        t->ucx = nicoll_ucx_setup(m, reach); /* (without `reach`, every rank goes without) */
    }
    free(reach);
    int peers[3] = {0, 0, 0}; /* shm, ucx, pml */
    for (int i = 0; i < size; ++i) {
        const int f = nicoll_shm_reaches(t->shm, i) ? 0 : nicoll_ucx_reaches(t->ucx, i) ? 1 : 2;
        t->via[i] = 0 == f ? &nicoll_fabric_shm : 1 == f ? &nicoll_fabric_ucx : &nicoll_fabric_pml;
        peers[f] += i != rank;
    }
    t->pml_peers = peers[2];
    /* For tuning rules, alike on every rank: the locality is gathered, the segment and UCX
     * agreed (but a rank alone on its node has no segment while its node's peers elsewhere do:
     * over several nodes with more than one rank on some, mixed). */
    const nicoll_tuning_fabric_t apart = NULL != t->ucx ? NICOLL_TUNING_FABRIC_UCX
                                                        : NICOLL_TUNING_FABRIC_PML;
    m->fabric = 0 == m->nodes   ? NICOLL_TUNING_FABRIC_UNKNOWN
                : 1 == m->nodes ? (NULL != t->shm ? NICOLL_TUNING_FABRIC_SHM : apart)
                : 1 == m->ppn   ? apart
                                : NICOLL_TUNING_FABRIC_MIXED;
    t->fabric_count = 0;
    if (NULL != t->shm) {
        t->fabrics[t->fabric_count++] = &nicoll_fabric_shm;
    }
    if (NULL != t->ucx) {
        t->fabrics[t->fabric_count++] = &nicoll_fabric_ucx;
    }
    if (t->pml_peers > 0) {
        t->fabrics[t->fabric_count++] = &nicoll_fabric_pml;
    }
    NICOLL_VERBOSE(10, "communicator %s (cid %u): this rank reaches %d peers through shared "
                       "memory, %d through UCX, %d through the PML",
                   nicoll_comm_name(t->comm), (unsigned) t->comm->c_contextid, peers[0], peers[1],
                   peers[2]);
    t->recv_slots = t->credits * t->pml_peers; /* (receives are posted at the first poll) */
    if (0 == t->pml_peers) {
        free(t->buffers);
        free(t->recv);
        free(t->send);
        t->buffers = NULL;
        t->recv = t->send = NULL;
        t->send_slots = 0;
    }
}

/*
 * Sets the communicator up, once, at its first nicoll collective, which every rank calls at the
 * same point:
 *   1. the exchange of places and settings (nicoll_setup_exchange); a rank unfit to take part
 *      (its transport or this function's buffer not allocated) says so first, and every rank
 *      then declines the communicator, as where the settings differ;
 *   2. the fabrics: shared memory inside each node, UCX between nodes where every rank can use
 *      them (nicoll_shm_setup and nicoll_ucx_setup agree), the PML for the other peers;
 *   3. the engine group, which every rank must have made, or every rank declines.
 * Without a previous allgather (on every rank alike) the trees use rank order, the settings go
 * unchecked and a local failure stays local: this rank's collectives return the error.
 */
__attribute__((cold)) nicsim_status_t nicoll_transport_set_up(nicoll_module_t *m)
{
    nicoll_transport_t *t = &m->transport;
    t->set_up = true;
    const int size = ompi_comm_size(t->comm);
    int *order = malloc(2 * (size_t) size * sizeof(*order)); /* then each rank's node */
    int *node_of = NULL == order ? NULL : order + size;
    const bool fit = NICSIM_OK == t->error && NULL != order;
    if (NULL == m->previous_allgather && !fit) {
        free(order);
        return t->error = NICSIM_OK != t->error ? t->error : NICSIM_ERR_NO_MEMORY;
    }
    t->starting = true;
    bool agree = true;
    int rc = NULL == m->previous_allgather ? OMPI_SUCCESS
                                           : nicoll_setup_exchange(m, fit, order, node_of, &agree);
    if (OMPI_SUCCESS == rc && agree) {
        t->shm = nicoll_shm_setup(m);
        choose_fabrics(m);
    }
    if (OMPI_SUCCESS != rc) {
        t->error = NICSIM_ERR_TRANSPORT;
    } else if (agree) {
        nicsim_transport_t ops = {.context = t, .send = send_packet};
        /* A ring is its own window: a sender writes only into a free slot, whose count it reads
         * from the receiver's tail, so the engine keeps windows only for UCX's and the PML's
         * peers. */
        nicsim_group_config_t config = {.credits = t->credits,
                                        .order = NULL == m->previous_allgather ? NULL : order,
                                        .node_of = NULL == m->previous_allgather ? NULL : node_of};
        int *windows = malloc((size_t) size * sizeof(*windows));
        for (int i = 0; NULL != windows && i < size; ++i) {
            windows[i] = &nicoll_fabric_shm == t->via[i] ? 0 : t->credits;
        }
        config.peer_credits = windows;
        t->error = nicoll_fault(NICOLL_FAULT_GROUP) || NULL == windows
                       ? NICSIM_ERR_NO_MEMORY
                       : nicsim_group_create(ompi_comm_rank(t->comm), size, &ops, &config,
                                             &t->group);
        free(windows);
        if (NICSIM_OK != t->error) {
            opal_output(0, "nicoll: communicator %s (cid %u): cannot create the engine group: %s",
                        nicoll_comm_name(t->comm), (unsigned) t->comm->c_contextid,
                        nicsim_status_string(t->error));
        }
        /* (without a previous allgather a failure stays this rank's, as above) */
        agree = NULL == m->previous_allgather || nicoll_all_ok(m, NICSIM_OK == t->error);
        if (!agree && 0 == ompi_comm_rank(t->comm)) {
            opal_output(0, "nicoll: communicator %s (cid %u): a rank could not create its engine "
                           "group; nicoll declines this communicator, the next component serves it",
                        nicoll_comm_name(t->comm), (unsigned) t->comm->c_contextid);
        }
        if (NICSIM_OK == t->error && NULL != config.order && size <= 64) {
            char line[64 * 8] = "";
            for (int i = 0, used = 0; i < size; ++i) {
                used += snprintf(line + used, sizeof(line) - used, " %d", order[i]);
            }
            NICOLL_VERBOSE(10, "communicator %s (cid %u): ranks in locality order:%s",
                           nicoll_comm_name(t->comm), (unsigned) t->comm->c_contextid, line);
        }
    }
    if (!agree) { /* every rank alike: the previous component serves the communicator */
        nicsim_group_free(t->group);
        t->group = NULL;
        nicoll_shm_fini(t->shm);
        t->shm = NULL;
        nicoll_ucx_fini(t->ucx);
        t->ucx = NULL;
        t->declined = true;
        t->error = NICSIM_OK;
    }
    t->starting = false;
    free(order);
    if (NICSIM_OK == t->error && NULL != t->group && (NULL != t->shm || NULL != t->ucx) &&
        0 == t->pml_peers) {
        nicoll_lock(); /* the progress thread takes the packets that come before their call */
        nicoll_progress_watch(t, true);
        nicoll_unlock();
    }
    return t->error;
}

int nicoll_all_min(nicoll_module_t *m, int value)
{
    int32_t mine = value, all = 0;
    return NULL != m->previous_allreduce &&
                   OMPI_SUCCESS == m->previous_allreduce(&mine, &all, 1, MPI_INT32_T, MPI_MIN,
                                                         m->transport.comm,
                                                         m->previous_allreduce_module)
               ? all
               : 0;
}

bool nicoll_all_ok(nicoll_module_t *m, bool ok)
{
    return 1 == nicoll_all_min(m, ok);
}

NICOLL_HOT_PATH
bool nicoll_declined(nicoll_module_t *m)
{
    (void) nicoll_transport_ready(m); /* a failure is the collective's to report */
    return m->transport.declined;
}

/* The transports on which a collective failed (nicoll_transport_settled), drained by Open MPI's
 * progress until the communicator is destroyed; and from the first such one freed that UCX served,
 * UCX's worker too, until the component closes: a peer's payload that comes later waits to be
 * dropped (a rendezvous holds its sender until then). */
static nicoll_transport_t *settled;
static bool ucx_freed;
static int drain_progress(void);

static bool landed(nicoll_transport_t *t)
{
    for (int i = 0; i < t->fabric_count; ++i) {
        if (NULL != t->fabrics[i]->landed && !t->fabrics[i]->landed(t)) {
            return false;
        }
    }
    return true;
}

/* Takes what came: a broken group drops it and offers its notices again; another hands it to the
 * engine, which drops an aborted collective's packets and keeps a later one's. Whether nothing
 * is still written into a collective's buffer nor read from one (nicoll_transport_settled). */
static bool drain(nicoll_transport_t *t)
{
    if (NICSIM_OK == t->error) {
        (void) nicoll_transport_poll(t);
    } else {
        for (int i = 0; i < t->fabric_count; ++i) {
            /* (a poll stops at each packet the broken engine refuses: again, a bounded number
             * of times) */
            for (int round = 0; round < 64 && NICSIM_OK != t->fabrics[i]->poll(t); ++round) {
            }
        }
        (void) nicsim_group_progress(t->group);
    }
    return nicoll_transport_sent(t) && landed(t);
}

static void unsettle(nicoll_transport_t *t)
{
    if (!t->settled) {
        return;
    }
    nicoll_transport_t **link = &settled;
    while (*link != t) {
        link = &(*link)->next_settled;
    }
    *link = t->next_settled;
    t->settled = false;
    if (NULL == settled && !ucx_freed) {
        opal_progress_unregister(drain_progress);
    }
}

/* One of Open MPI's progress callbacks while a transport is settled. */
static int drain_progress(void)
{
    if (nicoll_locking && !nicoll_lock_unless_mine()) {
        return 0; /* (this thread's own collective holds the lock: its wait drains) */
    }
    const unsigned long long moved_before = nicoll_packets_moved();
    for (nicoll_transport_t *t = settled; NULL != t; t = t->next_settled) {
        (void) drain(t);
    }
    if (ucx_freed) {
        nicoll_ucx_progress();
    }
    nicoll_unlock();
    return nicoll_packets_moved() != moved_before;
}

/* The transports closing (nicoll_transport_freed), while Open MPI's progress moves them. */
static nicoll_module_t *closing;
static int close_progress(void);

static void stop_closing(nicoll_transport_t *t)
{
    if (!t->closing) {
        return;
    }
    nicoll_module_t **link = &closing;
    while (&(*link)->transport != t) {
        link = &(*link)->transport.next_closing;
    }
    *link = t->next_closing;
    t->closing = false;
    if (NULL == closing) {
        opal_progress_unregister(close_progress);
    }
}

void nicoll_transport_freed(nicoll_module_t *m)
{
    nicoll_transport_t *t = &m->transport;
    if (NULL == t->group || 0 == t->pml_peers || t->settled || t->closing) {
        return; /* nothing holds it; or a collective failed on it: it drains until the end */
    }
    if (NULL == closing) {
        opal_progress_register(close_progress);
    }
    t->next_closing = closing;
    closing = m;
    t->closing = true;
    /* A rank that never received over the PML (a broadcast's root) posts its receives now: they
     * hold the communicator until its peers' markers came, as everywhere else. */
    (void) nicoll_transport_poll(t);
}

/* Sends the end markers: whether they all left (else the transport stays, as if never freed). */
static bool send_close(nicoll_transport_t *t)
{
    t->close_sends = calloc((size_t) t->pml_peers, sizeof(*t->close_sends));
    if (NULL == t->close_sends) {
        return false;
    }
    ompi_request_t **req = t->close_sends;
    for (int dst = 0; dst < ompi_comm_size(t->comm); ++dst) {
        if (&nicoll_fabric_pml != t->via[dst] || ompi_comm_rank(t->comm) == dst) {
            continue;
        }
        if (OMPI_SUCCESS != MCA_PML_CALL(isend(NULL, 0, MPI_BYTE, dst, NICOLL_TAG_PACKET,
                                               MCA_PML_BASE_SEND_STANDARD, t->comm, req))) {
            *req = NULL;
            return false;
        }
        ++req;
    }
    t->close_sent = true;
    return true;
}

/* Whether every request of `n` is done (or none). */
static bool all_complete(ompi_request_t *const *reqs, int n)
{
    for (int i = 0; NULL != reqs && i < n; ++i) {
        if (NULL != reqs[i] && !REQUEST_COMPLETE(reqs[i])) {
            return false;
        }
    }
    return true;
}

/* Where a transport's closing stands after one step. */
typedef enum { CLOSE_WAITS, CLOSE_GOES, CLOSE_FAILED } close_state_t;

/* One step of a transport's closing. A failed one stops closing: the transport drains until the
 * end instead (nicoll_transport_settled). */
static close_state_t close_step(nicoll_transport_t *t)
{
    if (NICSIM_OK != nicoll_transport_poll(t)) {
        return CLOSE_FAILED;
    }
    if (!t->close_sent) {
        if (nicoll_requests_in_flight(t) || NICSIM_IN_PROGRESS == nicsim_group_progress(t->group) ||
            !nicoll_transport_sent(t)) {
            return NICSIM_OK == t->error ? CLOSE_WAITS : CLOSE_FAILED;
        }
        if (!send_close(t)) {
            return CLOSE_FAILED;
        }
    }
    /* (all sent complete, so that letting it go waits for nothing, inside Open MPI's progress) */
    return t->peers_closed == t->pml_peers && all_complete(t->close_sends, t->pml_peers) &&
                   all_complete(t->send, t->send_slots)
               ? CLOSE_GOES
               : CLOSE_WAITS;
}

/* Open MPI's progress callback while transports are closing. Those that may go, go after the
 * walk, each module held: cancelling its last receive may free the communicator, and with it the
 * communicator's hold on the module. */
static int close_progress(void)
{
    /* Not once MPI_Finalize began: a peer past its fence may have closed its connections (a
     * marker written to a closed TCP socket killed its sender with SIGPIPE), and every
     * communicator goes there anyway. */
    if (ompi_mpi_state >= OMPI_MPI_STATE_FINALIZE_STARTED ||
        (nicoll_locking && !nicoll_lock_unless_mine())) {
        return 0;
    }
    const unsigned long long moved_before = nicoll_packets_moved();
    nicoll_module_t *done = NULL;
    for (nicoll_module_t *m = closing, *next; NULL != m; m = next) {
        next = m->transport.next_closing;
        const close_state_t step = close_step(&m->transport);
        if (CLOSE_WAITS != step) {
            stop_closing(&m->transport);
        }
        if (CLOSE_GOES == step) {
            OBJ_RETAIN(m);
            m->transport.next_closing = done;
            done = m;
        }
    }
    const bool moved = nicoll_packets_moved() != moved_before;
    nicoll_unlock();
    for (nicoll_module_t *next; NULL != done; done = next) {
        next = done->transport.next_closing;
        nicoll_lock();
        nicoll_transport_fini(&done->transport);
        nicoll_unlock();
        OBJ_RELEASE(done); /* (the communicator's last reference, once freed) */
    }
    return moved;
}

/* A group another rank broke (told) sets t->error too: every rank drops its packets then. */
static void note_broken(nicoll_transport_t *t)
{
    if (NICSIM_OK == t->error && NULL != t->group) {
        t->error = nicsim_group_broken(t->group);
    }
}

void nicoll_transport_close(void)
{
    if (NULL != settled || ucx_freed) {
        opal_progress_unregister(drain_progress);
    }
    for (; NULL != settled; settled = settled->next_settled) {
        settled->settled = false; /* (its module, destroyed later, looks for it) */
    }
    ucx_freed = false;
    if (NULL != closing) {
        opal_progress_unregister(close_progress);
    }
    for (; NULL != closing; closing = closing->transport.next_closing) {
        closing->transport.closing = false; /* (its module, destroyed later, looks for it) */
    }
}

bool nicoll_transport_settled(nicoll_transport_t *t)
{
    if (NULL == t->group) {
        return true; /* never set up: nothing travelled */
    }
    note_broken(t);
    if (!t->settled) {
        if (NULL == settled && !ucx_freed) {
            opal_progress_register(drain_progress);
        }
        t->next_settled = settled;
        settled = t;
        t->settled = true;
    }
    return drain(t);
}

void nicoll_transport_fini(nicoll_transport_t *t)
{
    nicoll_progress_watch(t, false); /* (under the lock) */
    ucx_freed |= t->settled && NULL != t->ucx;
    unsettle(t);
    stop_closing(t);
    /* A collective completes only once its packets are handed over, so what the engine may
     * still queue are credit returns, which go to the PML's and UCX's peers only. Both take
     * them. */
    while ((t->pml_peers > 0 || NULL != t->ucx) && NULL != t->group &&
           NICSIM_IN_PROGRESS == nicsim_group_progress(t->group)) {
        nicoll_unlock();
        opal_progress();
        nicoll_lock();
    }
    nicoll_shm_fini(t->shm);
    t->shm = NULL;
    nicoll_ucx_fini(t->ucx);
    t->ucx = NULL;
    /* Every packet addressed to us belongs to a collective this rank completed, so the posted
     * receives are idle: cancel them. Sends complete because their receivers needed them (or,
     * for a collective that failed, took or dropped them: nicoll_transport_settled). */
    for (int i = 0; NULL != t->recv && i < t->recv_slots; ++i) {
        if (NULL != t->recv[i]) {
            ompi_request_cancel(t->recv[i]);
            ompi_request_wait(&t->recv[i], MPI_STATUS_IGNORE);
        }
    }
    for (int i = 0; NULL != t->send && i < t->send_slots; ++i) {
        if (NULL != t->send[i]) {
            ompi_request_wait(&t->send[i], MPI_STATUS_IGNORE);
        }
    }
    for (int i = 0; i < t->payload_sends_used; ++i) {
        ompi_request_wait(&t->payload_sends[i], MPI_STATUS_IGNORE);
    }
    for (int i = 0; NULL != t->close_sends && i < t->pml_peers; ++i) {
        if (NULL != t->close_sends[i]) {
            ompi_request_wait(&t->close_sends[i], MPI_STATUS_IGNORE);
        }
    }
    free(t->close_sends);
    t->close_sends = NULL;
    if (NULL != t->payload_recv) { /* only after an error: the ranks no longer agree */
        ompi_request_cancel(t->payload_recv);
        ompi_request_wait(&t->payload_recv, MPI_STATUS_IGNORE);
    }
    nicoll_release_retired(t);
    free(t->payload_sends);
    free(t->payload_copy);
    t->payload_sends = NULL;
    t->payload_copy = NULL;
    nicsim_group_free(t->group);
    t->group = NULL;
    free(t->buffers);
    free(t->recv);
    free(t->send);
    t->buffers = NULL;
    t->recv = t->send = NULL;
    free(t->via);
    t->via = NULL;
}

/* Receives the head's payload, from t->payload_src, at `at`. */
static nicsim_status_t post_payload_recv(nicoll_transport_t *t, void *at)
{
    t->payload_at = at;
    return pml_status(MCA_PML_CALL(irecv(at, t->payload_bytes, MPI_BYTE, t->payload_src,
                                         NICOLL_TAG_PAYLOAD, t->comm, &t->payload_recv)));
}

/* Receives the head's payload into memory of our own (freed once handed to the engine:
 * deliver_head). */
static nicsim_status_t post_payload_recv_copy(nicoll_transport_t *t)
{
    t->payload_copy = malloc(t->payload_bytes);
    return NULL == t->payload_copy ? NICSIM_ERR_NO_MEMORY
                                   : post_payload_recv(t, t->payload_copy);
}

/* The head slot holds a bare header: receive its payload apart, where the engine says. */
static nicsim_status_t receive_payload(nicoll_transport_t *t, int src, const void *header)
{
    void *at;
    nicsim_status_t s = nicsim_group_place(t->group, src, header, &at, &t->payload_bytes, NULL);
    if (NICSIM_OK != s || 0 == t->payload_bytes) {
        return s; /* a header-only packet: nothing follows */
    }
    t->payload_src = src;
    s = NULL == at ? post_payload_recv_copy(t) : post_payload_recv(t, at);
    return NICSIM_OK == s && nicoll_fault(NICOLL_FAULT_FETCH) ? NICSIM_ERR_TRANSPORT : s;
}

/* Hands the head slot's packet to the engine, reposts the slot and moves the head on. */
static nicsim_status_t deliver_head(nicoll_transport_t *t, int src, const void *payload,
                                    size_t payload_bytes)
{
    const int slot = t->recv_head;
    ++t->events;
    nicsim_status_t delivered =
        nicsim_group_deliver(t->group, src, recv_buffer(t, slot), payload, payload_bytes);
    free(t->payload_copy);
    t->payload_copy = NULL;
    if (NICSIM_OK != post_recv(t, slot)) {
        return NICSIM_ERR_TRANSPORT;
    }
    t->recv_head = (slot + 1) % t->recv_slots;
    return delivered;
}

/* The payload a broken group's head waits for may never come (its sender's send may have
 * failed after its header left), and the collective it belongs to has returned: received unmatched
 * into memory of our own instead of the collective's buffer, whatever comes. */
static void withdraw_payload(nicoll_transport_t *t)
{
    ompi_request_cancel(t->payload_recv);
    if (!REQUEST_COMPLETE(t->payload_recv) || !t->payload_recv->req_status._cancelled) {
        return; /* matched: it is coming */
    }
    (void) release(&t->payload_recv);
    if (NICSIM_OK != post_payload_recv_copy(t)) {
        t->payload_recv = NULL;
    }
}

static nicsim_status_t pml_poll(nicoll_transport_t *t)
{
    if (!t->receiving) {
        for (int i = 0; i < t->recv_slots; ++i) {
            if (NULL == t->recv[i] && NICSIM_OK != post_recv(t, i)) {
                return NICSIM_ERR_TRANSPORT;
            }
        }
        t->receiving = true;
    }
    for (;;) {
        nicsim_status_t s = NICSIM_OK;
        if (NULL != t->payload_recv) {
            if (!REQUEST_COMPLETE(t->payload_recv)) {
                if (NICSIM_OK != t->error && t->payload_at != t->payload_copy) {
                    withdraw_payload(t);
                }
                break;
            }
            const int src = t->payload_recv->req_status.MPI_SOURCE;
            if (MPI_SUCCESS != release(&t->payload_recv)) {
                return NICSIM_ERR_TRANSPORT;
            }
            s = deliver_head(t, src, t->payload_at, t->payload_bytes);
        } else if (t->recv_slots > 0 && NULL == t->recv[t->recv_head]) {
            /* After an error (drain): the head's packet was taken and lost; its slot takes
             * another. */
            if (NICSIM_OK != post_recv(t, t->recv_head)) {
                return NICSIM_ERR_TRANSPORT;
            }
            t->recv_head = (t->recv_head + 1) % t->recv_slots;
        } else if (t->recv_slots > 0 && REQUEST_COMPLETE(t->recv[t->recv_head])) {
            const unsigned char *packet = recv_buffer(t, t->recv_head);
            const int src = t->recv[t->recv_head]->req_status.MPI_SOURCE;
            const size_t bytes = t->recv[t->recv_head]->req_status._ucount;
            if (MPI_SUCCESS != release(&t->recv[t->recv_head]) ||
                (0 != bytes && bytes < NICSIM_HEADER_BYTES)) {
                return NICSIM_ERR_TRANSPORT;
            }
            if (0 == bytes) { /* a peer's end marker: it sends no more */
                ++t->peers_closed;
                if (NICSIM_OK != post_recv(t, t->recv_head)) {
                    return NICSIM_ERR_TRANSPORT;
                }
                t->recv_head = (t->recv_head + 1) % t->recv_slots;
                continue;
            }
            ++mca_coll_nicoll_component.stats.packets_received;
            const size_t inline_bytes = bytes - NICSIM_HEADER_BYTES;
            s = 0 == inline_bytes ? receive_payload(t, src, packet) : NICSIM_OK;
            if (NICSIM_OK == s && NULL == t->payload_recv) {
                s = deliver_head(t, src, packet + NICSIM_HEADER_BYTES, inline_bytes);
            }
        } else {
            break;
        }
        if (NICSIM_OK != s) {
            return s;
        }
    }
    return NICSIM_OK;
}

static bool pml_landed(nicoll_transport_t *t)
{
    return NULL == t->payload_recv || REQUEST_COMPLETE(t->payload_recv);
}

const nicoll_fabric_t nicoll_fabric_pml = {
    .name = "pml", .send = pml_send, .poll = pml_poll, .sent = pml_sent, .landed = pml_landed};

NICOLL_HOT_PATH
static nicsim_status_t poll(nicoll_transport_t *t)
{
    for (int i = 0; i < t->fabric_count; ++i) {
        nicsim_status_t s = t->fabrics[i]->poll(t);
        if (NICSIM_OK != s) {
            return s;
        }
    }
    if (!t->refused) {
        return NICSIM_OK;
    }
    /* The engine queues packets only when a fabric refused them: offer them again, which counts
     * as an event (the engine's answers may change). */
    ++t->events;
    nicsim_status_t s = nicsim_group_progress(t->group);
    if (NICSIM_OK == s) {
        t->refused = false; /* all out */
    }
    return NICSIM_IN_PROGRESS == s ? NICSIM_OK : s;
}

NICOLL_HOT_PATH
nicsim_status_t nicoll_transport_poll(nicoll_transport_t *t)
{
    if (NICSIM_OK != t->error) {
        return t->error;
    }
    /* A lost receive, a failed send or a packet that broke the protocol: the ranks no longer
     * agree on this group's state, so it cannot go on. Its collectives fail, here and, told, on
     * every other rank. */
    t->error = poll(t);
    if (NICSIM_OK != t->error) {
        (void) nicsim_group_fail(t->group, t->error);
    }
    return t->error;
}

NICOLL_HOT_PATH
void nicoll_transport_count(nicoll_transport_t *t)
{
    nicsim_group_stats_t now;
    nicsim_group_stats(t->group, &now);
    mca_coll_nicoll_component.stats.packets_forwarded += now.forwarded - t->seen.forwarded;
    mca_coll_nicoll_component.stats.credit_stalls += now.credit_stalls - t->seen.credit_stalls;
    t->seen = now;
}
