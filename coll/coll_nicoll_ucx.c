/*
 * The UCX fabric: engine packets between nodes as UCP active messages, the network's analogue
 * of a NIC's send and receive descriptors, with no MPI matching in between.
 *
 * One UCP context and worker per process, made at the first communicator that asks and shared
 * by all (nicoll_ucx_close() ends them with the component). A communicator's set-up exchanges
 * the workers' addresses and connects an endpoint to each peer this fabric serves that no
 * earlier communicator connected: an endpoint is a connection (over tcp a socket), so there is
 * one per peer process, kept until the component closes, as the PML does, whatever the number
 * of communicators (one per communicator and peer ran out of file descriptors, and UCX aborted
 * the job, after about 1,000 communicators under the usual limit of 1,024). A packet is
 * one active message: its header (which communicator, sender, per-pair number, and the engine's
 * header) in the message's user header, its payload as the message's data, sent from the
 * collective's buffer in place. Payloads up to EAGER_BYTES go eagerly; for larger ones UCX may
 * tell the receiver of the message first, which then fetches the data itself (rendezvous, the
 * NIC's RDMA read) into the place the engine names for it (nicsim_group_place), so the bytes
 * move once.
 *
 * The engine's flow control applies (a window of coll_nicoll_credits packets per peer), so what
 * waits here is bounded. Messages of one pair are numbered and handed to the engine in that
 * order, whatever order UCX delivers them in; a rendezvous being fetched holds its sender's
 * later packets back until it is in. The worker's callbacks only queue what arrives: the engine
 * sees packets only from the fabric's poll, never from inside a send.
 *
 * Set-up is collective and agreed on (first_failing, an allreduce): a rank whose UCX cannot
 * start, or which cannot reach a peer, takes every rank to the PML for those peers, and rank 0
 * names the first such rank.
 */
#include "coll_nicoll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if NICOLL_UCX
#include <ucp/api/ucp.h>

#include "opal/class/opal_hash_table.h"

#define AM_ID 0x6e /* nicoll's active-message handler on the process's worker */
/* Payloads up to this size go eagerly, whatever UCX's own threshold. A rendezvous costs round
 * trips, each of which waits for the peer's next poll: over tcp, between ranks sharing cores,
 * eager 16-256 KiB payloads measured 1.4-2.7x faster than UCX's default choice; above it, the
 * rendezvous's single copy wins. */
#define EAGER_BYTES (256u << 10)

/* What travels in an active message's user header. */
typedef struct am_header {
    uint32_t cid;   /* the communicator's context id... */
    uint32_t nonce; /* ...and its set-up's number: a late packet of a freed one is dropped */
    int32_t src;    /* the sender's rank in it */
    uint32_t seq;   /* the pair's packet number */
    unsigned char packet[NICSIM_HEADER_BYTES];
} am_header_t;

/* A packet that arrived and waits to be handed to the engine in its pair's order. */
typedef struct arrival {
    am_header_t h;
    void *data;       /* the payload: UCX's (release_data), ours (free), or the rendezvous */
    size_t bytes;
    bool rndv;        /* data is a rendezvous descriptor to fetch the payload with */
    bool release;     /* data is UCX's, kept for us: ucp_am_data_release() when done */
} arrival_t;

/* A send in flight, with the header UCX reads until it completes. */
typedef struct send_record {
    struct send_record *next;
    void *request;
    am_header_t h;
} send_record_t;

struct nicoll_ucx {
    nicoll_ucx_t *next; /* the process's communicators on UCX */
    nicoll_transport_t *t;
    uint32_t cid, nonce;
    int size;
    ucp_ep_h *eps;      /* [size], NULL where another fabric serves the peer */
    uint32_t *sent;     /* [size] packets sent to each peer */
    uint32_t *taken;    /* [size] packets from each peer handed to the engine */
    arrival_t *arrivals; /* waiting, in arrival order */
    int arrived, room;
    bool news;          /* a packet queued or a fetch done since the last ucx_poll() */
    send_record_t *in_flight, *spare;
    /* the rendezvous being fetched */
    void *fetch;        /* its request, NULL when it completed at once */
    bool fetching, fetched;
    arrival_t fetch_of;
    void *fetch_at, *fetch_copy;
    nicsim_status_t error; /* from a callback: no memory to queue an arrival, a failed fetch */
};

static struct {
    bool tried;          /* ucp_init was tried (once per process) */
    ucp_context_h context;
    ucp_worker_h worker;
    int efd;             /* the worker's event fd (thread mode), or -1 */
    nicoll_ucx_t *comms;
    opal_hash_table_t eps; /* the endpoint to each peer process, by its name */
    const char *why;     /* why UCX cannot be used in this process */
} ucx;

/* A peer process's name, the endpoints' key. */
static uint64_t peer_key(struct ompi_communicator_t *comm, int rank)
{
    uint64_t key;
    const opal_process_name_t name = ompi_comm_peer_lookup(comm, rank)->super.proc_name;
    memcpy(&key, &name, sizeof(key));
    return key;
}

static nicoll_ucx_t *find(uint32_t cid, uint32_t nonce)
{
    for (nicoll_ucx_t *u = ucx.comms; NULL != u; u = u->next) {
        if (u->cid == cid && u->nonce == nonce) {
            return u;
        }
    }
    return NULL;
}

NICOLL_HOT_PATH
static ucs_status_t on_message(void *arg, const void *header, size_t header_length, void *data,
                               size_t length, const ucp_am_recv_param_t *param)
{
    (void) arg;
    nicoll_ucx_t *u = sizeof(am_header_t) == header_length
                          ? find(((const am_header_t *) header)->cid,
                                 ((const am_header_t *) header)->nonce)
                          : NULL;
    if (NULL == u || NICSIM_OK != u->t->error) {
        /* A late credit return to a communicator freed here, or a packet to a broken one: no one
         * needs it (dropped, a rendezvous's sender is told it is done). */
        return UCS_OK;
    }
    if (u->arrived == u->room) {
        const int room = u->room ? 2 * u->room : 16;
        arrival_t *grown = realloc(u->arrivals, (size_t) room * sizeof(*grown));
        if (NULL == grown) {
            u->error = NICSIM_ERR_NO_MEMORY;
            return UCS_OK;
        }
        u->arrivals = grown;
        u->room = room;
    }
    arrival_t *a = &u->arrivals[u->arrived++];
    u->news = true;
    memcpy(&a->h, header, sizeof(a->h));
    a->bytes = length;
    a->data = data;
    a->rndv = 0 != (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV);
    a->release = !a->rndv && length > 0 && 0 != (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA);
    if (a->rndv || a->release) {
        return UCS_INPROGRESS; /* the descriptor or the data stays ours until we are done */
    }
    a->data = NULL;
    if (length > 0) { /* UCX keeps no copy: take one */
        a->data = malloc(length);
        if (NULL == a->data) {
            --u->arrived;
            u->error = NICSIM_ERR_NO_MEMORY;
            return UCS_OK;
        }
        memcpy(a->data, data, length);
    }
    return UCS_OK;
}

/* Starts UCP in this process, once: false (with ucx.why) when it cannot. */
static bool start(void)
{
    if (ucx.tried) {
        return NULL != ucx.worker;
    }
    ucx.tried = true;
    OBJ_CONSTRUCT(&ucx.eps, opal_hash_table_t);
    if (OPAL_SUCCESS != opal_hash_table_init(&ucx.eps, 64)) {
        ucx.why = "out of memory";
        return false;
    }
    /* Over tcp an active message travels in fragments of at most the receive segment (64 KiB
     * by default), which UCP gathers into a buffer of its own: an eager packet of EAGER_BYTES
     * came as five fragments and was copied once more. A segment that holds a whole packet and
     * its headers sends it as one. Set in the environment, where UCX reads it only if it opens
     * tcp (a setting of the configuration that no transport takes draws a warning); where the
     * user chose a size, theirs stands. */
    char bytes[16];
    snprintf(bytes, sizeof(bytes), "%u", EAGER_BYTES + 4096u);
    setenv("UCX_TCP_RX_SEG_SIZE", bytes, 0);
    ucp_config_t *config;
    if (nicoll_fault(NICOLL_FAULT_UCX) || UCS_OK != ucp_config_read(NULL, NULL, &config)) {
        ucx.why = "cannot read UCX's configuration";
        return false;
    }
    /* In thread mode the worker also signals an event fd, on which the progress thread sleeps
     * while it waits for a packet (UCP_FEATURE_WAKEUP); where UCX cannot, the thread polls in
     * steps instead. */
    ucs_status_t st = UCS_ERR_UNSUPPORTED;
    for (int wakeup = nicoll_locking; wakeup >= 0 && UCS_OK != st; --wakeup) {
        ucp_params_t params = {.field_mask = UCP_PARAM_FIELD_FEATURES,
                               .features = UCP_FEATURE_AM | (wakeup ? UCP_FEATURE_WAKEUP : 0)};
        st = ucp_init(&params, config, &ucx.context);
    }
    ucp_config_release(config);
    ucx.efd = -1;
    if (UCS_OK != st) {
        ucx.why = "ucp_init failed (no usable transport?)";
        return false;
    }
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              /* the progress thread's and the caller's turns, under the lock */
                              .thread_mode = nicoll_locking ? UCS_THREAD_MODE_SERIALIZED
                                                            : UCS_THREAD_MODE_SINGLE};
    if (nicoll_locking) { /* packets and fetched payloads arriving, sends completing */
        wp.field_mask |= UCP_WORKER_PARAM_FIELD_EVENTS;
        wp.events = UCP_WAKEUP_RX | UCP_WAKEUP_TX;
    }
    ucp_am_handler_param_t handler = {
        .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
                      UCP_AM_HANDLER_PARAM_FIELD_CB,
        .id = AM_ID,
        .flags = UCP_AM_FLAG_WHOLE_MSG,
        .cb = on_message};
    if (UCS_OK != ucp_worker_create(ucx.context, &wp, &ucx.worker)) {
        ucx.worker = NULL;
        ucx.why = "ucp_worker_create failed";
    } else if (UCS_OK != ucp_worker_set_am_recv_handler(ucx.worker, &handler)) {
        ucp_worker_destroy(ucx.worker);
        ucx.worker = NULL;
        ucx.why = "the UCP worker takes no active messages";
    } else if (nicoll_locking && UCS_OK != ucp_worker_get_efd(ucx.worker, &ucx.efd)) {
        ucx.efd = -1;
        NICOLL_VERBOSE(10, "UCX: no event fd for the progress thread to sleep on; it polls UCX "
                       "in steps");
    }
    if (NULL == ucx.worker) {
        ucp_cleanup(ucx.context);
        ucx.context = NULL;
    }
    return NULL != ucx.worker;
}

int nicoll_ucx_efd(void)
{
    return NULL != ucx.worker ? ucx.efd : -1;
}

bool nicoll_ucx_arm(void)
{
    /* What a progress brought is queued for the next poll, so then the thread does not sleep:
     * this one's, or one made since the thread polled a communicator it watches (a send's
     * completion checked, another communicator polled), whose event the worker has spent. */
    for (const nicoll_ucx_t *u = ucx.comms; NULL != u; u = u->next) {
        if (u->news && u->t->watched) {
            return false;
        }
    }
    return 0 == ucp_worker_progress(ucx.worker) && UCS_OK == ucp_worker_arm(ucx.worker);
}

/* Every collective completed: nothing is owed to the peer but perhaps a credit. */
static void close_ep(ucp_ep_h ep)
{
    const ucp_request_param_t param = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                                       .flags = UCP_EP_CLOSE_FLAG_FORCE};
    void *req = ucp_ep_close_nbx(ep, &param);
    while (UCS_PTR_IS_PTR(req) && UCS_INPROGRESS == ucp_request_check_status(req)) {
        ucp_worker_progress(ucx.worker);
    }
    if (UCS_PTR_IS_PTR(req)) {
        ucp_request_free(req);
    }
}

void nicoll_ucx_progress(void)
{
    if (NULL != ucx.worker) {
        ucp_worker_progress(ucx.worker);
    }
}

void nicoll_ucx_close(void)
{
    if (NULL != ucx.worker) {
        uint64_t key;
        void *ep;
        OPAL_HASH_TABLE_FOREACH(key, uint64, ep, &ucx.eps) {
            close_ep(ep);
        }
        ucp_worker_destroy(ucx.worker);
        ucp_cleanup(ucx.context);
    }
    if (ucx.tried) {
        OBJ_DESTRUCT(&ucx.eps);
    }
    memset(&ucx, 0, sizeof(ucx));
}

/* What each rank tells the others at set-up: its worker's address, `max` bytes of room. */
typedef struct hello {
    uint64_t bytes; /* the address's length, 0 when this rank cannot use UCX */
    uint32_t nonce;
    uint32_t pad;
    unsigned char address[];
} hello_t;

static void free_records(send_record_t *r)
{
    while (NULL != r) {
        send_record_t *next = r->next;
        free(r);
        r = next;
    }
}

/* Lets go of the packets waiting to be handed to the engine. */
static void drop_arrivals(nicoll_ucx_t *u)
{
    for (int i = 0; i < u->arrived; ++i) {
        arrival_t *a = &u->arrivals[i];
        if (a->release || a->rndv) {
            ucp_am_data_release(ucx.worker, a->data); /* (a rendezvous: its sender is done) */
        } else {
            free(a->data);
        }
    }
    u->arrived = 0;
}

void nicoll_ucx_fini(nicoll_ucx_t *u)
{
    if (NULL == u) {
        return;
    }
    for (nicoll_ucx_t **link = &ucx.comms; NULL != *link; link = &(*link)->next) {
        if (*link == u) {
            *link = u->next;
            break;
        }
    }
    /* Sends finish (their receivers needed them, or took or dropped them after an error); a
     * fetch only after an error. */
    for (send_record_t *r = u->in_flight; NULL != r; r = r->next) {
        while (UCS_INPROGRESS == ucp_request_check_status(r->request)) {
            ucp_worker_progress(ucx.worker);
        }
        ucp_request_free(r->request);
    }
    if (NULL != u->fetch) {
        ucp_request_cancel(ucx.worker, u->fetch);
        while (UCS_INPROGRESS == ucp_request_check_status(u->fetch)) {
            ucp_worker_progress(ucx.worker);
        }
        ucp_request_free(u->fetch);
    }
    drop_arrivals(u);
    free_records(u->in_flight);
    free_records(u->spare);
    free(u->fetch_copy);
    free(u->arrivals);
    free(u->eps);
    free(u->sent);
    free(u->taken);
    free(u);
}

/* The lowest rank for which `why` is set, the communicator's size when none, -1 when the ranks
 * cannot even agree on that (collective). */
static int first_failing(nicoll_module_t *m, const char *why)
{
    struct ompi_communicator_t *comm = m->transport.comm;
    int32_t mine = NULL != why ? ompi_comm_rank(comm) : ompi_comm_size(comm), first = -1;
    return OMPI_SUCCESS == m->previous_allreduce(&mine, &first, 1, MPI_INT32_T, MPI_MIN, comm,
                                                 m->previous_allreduce_module)
               ? first
               : -1;
}

nicoll_ucx_t *nicoll_ucx_setup(nicoll_module_t *m, const bool *reach)
{
    nicoll_transport_t *t = &m->transport;
    struct ompi_communicator_t *comm = t->comm;
    const int size = ompi_comm_size(comm), rank = ompi_comm_rank(comm);
    const char *why = NULL; /* why this rank cannot use UCX */
    char unreachable[64];
    nicoll_ucx_t *u = calloc(1, sizeof(*u));
    ucp_address_t *address = NULL;
    size_t address_bytes = 0;
    if (NULL != u) {
        u->t = t;
        u->size = size;
        u->cid = comm->c_contextid;
        u->eps = calloc((size_t) size, sizeof(*u->eps));
        u->sent = calloc((size_t) size, sizeof(*u->sent));
        u->taken = calloc((size_t) size, sizeof(*u->taken));
    }
    nicoll_lock(); /* the worker is the process's, which the progress thread polls */
    if (NULL == u || NULL == u->eps || NULL == u->sent || NULL == u->taken || NULL == reach) {
        why = "out of memory";
    } else if (!start()) {
        why = ucx.why;
    } else if (UCS_OK != ucp_worker_get_address(ucx.worker, &address, &address_bytes)) {
        why = "the UCP worker has no address";
    }
    nicoll_unlock(); /* (the exchanges below run Open MPI's progress) */
    /* Every rank learns the longest address, then every rank's. */
    int64_t mine = NULL == why ? (int64_t) address_bytes : -1, max = -1;
    int rc = m->previous_allreduce(&mine, &max, 1, MPI_INT64_T, MPI_MAX, comm,
                                   m->previous_allreduce_module);
    const size_t record = sizeof(hello_t) + (size_t) (max > 0 ? max : 0);
    hello_t *hello = OMPI_SUCCESS == rc && max > 0 ? calloc((size_t) size + 1, record) : NULL;
    if (NULL == why && NULL == hello) {
        why = "out of memory";
    }
    int failing = first_failing(m, why);
    if (size == failing) {
        hello_t *me = (hello_t *) ((unsigned char *) hello + (size_t) size * record);
        me->bytes = address_bytes;
        static uint32_t setups;
        me->nonce = (uint32_t) getpid() * 2654435761u + ++setups;
        memcpy(me->address, address, address_bytes);
        if (OMPI_SUCCESS != m->previous_allgather(me, (int) record, MPI_BYTE, hello, (int) record,
                                                  MPI_BYTE, comm, m->previous_allgather_module)) {
            why = "the exchange of addresses failed";
        }
        u->nonce = hello->nonce; /* rank 0's */
        nicoll_lock();
        for (int i = 0; i < size && NULL == why; ++i) {
            if (i == rank || !reach[i]) {
                continue;
            }
            const hello_t *peer = (const hello_t *) ((unsigned char *) hello + (size_t) i * record);
            const uint64_t key = peer_key(comm, i);
            void *known = NULL;
            if (OPAL_SUCCESS == opal_hash_table_get_value_uint64(&ucx.eps, key, &known)) {
                u->eps[i] = known;
                continue;
            }
            const ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
                                        .address = (const ucp_address_t *) peer->address};
            if (0 == peer->bytes || UCS_OK != ucp_ep_create(ucx.worker, &ep, &u->eps[i])) {
                u->eps[i] = NULL;
            } else if (OPAL_SUCCESS != opal_hash_table_set_value_uint64(&ucx.eps, key, u->eps[i])) {
                close_ep(u->eps[i]);
                u->eps[i] = NULL;
            }
            if (NULL == u->eps[i]) {
                snprintf(unreachable, sizeof(unreachable), "cannot reach rank %d", i);
                why = unreachable;
            }
        }
        if (NULL == why) { /* listed before the agreement: a peer past it may send at once */
            u->next = ucx.comms;
            ucx.comms = u;
        }
        nicoll_unlock();
        failing = first_failing(m, why);
    }
    nicoll_lock();
    if (NULL != address) {
        ucp_worker_release_address(ucx.worker, address);
    }
    if (size != failing) {
        nicoll_ucx_fini(u);
        u = NULL;
    }
    nicoll_unlock();
    free(hello);
    if (size != failing) {
        if (NULL != why) {
            NICOLL_VERBOSE(10, "communicator %s (cid %u): this rank cannot use UCX: %s",
                           nicoll_comm_name(comm), (unsigned) comm->c_contextid, why);
        }
        if (0 == rank) {
            char who[128];
            if (failing < 0) {
                snprintf(who, sizeof(who), "the ranks could not agree on it");
            } else if (0 == failing) {
                snprintf(who, sizeof(who), "rank 0: %s", why);
            } else {
                snprintf(who, sizeof(who), "rank %d; with coll_nicoll_verbose 10 it says why",
                         failing);
            }
            opal_output(0, "nicoll: communicator %s (cid %u): a rank cannot use UCX (%s); the PML "
                           "carries the packets UCX would have",
                        nicoll_comm_name(comm), (unsigned) comm->c_contextid, who);
        }
    }
    return u;
}

bool nicoll_ucx_reaches(const nicoll_ucx_t *u, int rank)
{
    return NULL != u && NULL != u->eps[rank];
}

static void recycle(nicoll_ucx_t *u, send_record_t *r)
{
    r->next = u->spare;
    u->spare = r;
}

NICOLL_HOT_PATH
static nicsim_status_t ucx_send(nicoll_transport_t *t, int dst, const void *header,
                                const void *payload, size_t payload_bytes)
{
    nicoll_ucx_t *u = t->ucx;
    send_record_t *r = u->spare;
    if (NULL != r) {
        u->spare = r->next;
    } else if (NULL == (r = malloc(sizeof(*r)))) {
        return NICSIM_ERR_NO_MEMORY;
    }
    r->h.cid = u->cid;
    r->h.nonce = u->nonce;
    r->h.src = ompi_comm_rank(t->comm);
    r->h.seq = u->sent[dst];
    memcpy(r->h.packet, header, NICSIM_HEADER_BYTES);
    const ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_FLAGS,
        .flags = payload_bytes <= EAGER_BYTES ? UCP_AM_SEND_FLAG_EAGER : 0,
        .datatype = ucp_dt_make_contig(1)};
    void *req = ucp_am_send_nbx(u->eps[dst], AM_ID, &r->h, sizeof(r->h), payload, payload_bytes,
                                &param);
    if (UCS_PTR_IS_ERR(req)) {
        recycle(u, r);
        return NICSIM_ERR_TRANSPORT;
    }
    ++u->sent[dst];
    if (NULL == req) { /* done already: the header is free again */
        recycle(u, r);
        return NICSIM_OK;
    }
    r->request = req;
    r->next = u->in_flight;
    u->in_flight = r;
    return NICSIM_OK;
}

NICOLL_HOT_PATH
static bool ucx_sent(nicoll_transport_t *t)
{
    nicoll_ucx_t *u = t->ucx;
    if (NULL != u->in_flight) {
        ucp_worker_progress(ucx.worker);
    }
    for (send_record_t **link = &u->in_flight; NULL != *link;) {
        send_record_t *r = *link;
        const ucs_status_t st = ucp_request_check_status(r->request);
        if (UCS_INPROGRESS == st) {
            link = &r->next;
            continue;
        }
        if (UCS_OK != st && NICSIM_OK == t->error) {
            t->error = NICSIM_ERR_TRANSPORT;
        }
        ucp_request_free(r->request);
        *link = r->next;
        recycle(u, r);
    }
    return NULL == u->in_flight;
}

static bool ucx_landed(nicoll_transport_t *t)
{
    return !t->ucx->fetching || t->ucx->fetched;
}

static void fetched(void *request, ucs_status_t status, size_t length, void *user_data)
{
    (void) request;
    (void) length;
    nicoll_ucx_t *u = user_data;
    u->fetched = true;
    u->news = true;
    if (UCS_OK != status) {
        u->error = NICSIM_ERR_TRANSPORT;
    }
}

/* Hands one packet to the engine and lets go of its payload. */
NICOLL_HOT_PATH
static nicsim_status_t deliver(nicoll_ucx_t *u, const arrival_t *a, const void *payload)
{
    ++u->t->events;
    ++mca_coll_nicoll_component.stats.packets_received;
    ++u->taken[a->h.src];
    return nicsim_group_deliver(u->t->group, a->h.src, a->h.packet, payload, a->bytes);
}

/* Starts fetching a rendezvous payload into where the engine places it (or a copy of ours). */
static nicsim_status_t fetch(nicoll_ucx_t *u, const arrival_t *a)
{
    size_t bytes;
    void *at;
    nicsim_status_t s = nicsim_group_place(u->t->group, a->h.src, a->h.packet, &at, &bytes, NULL);
    if (NICSIM_OK == s && bytes != a->bytes) {
        s = NICSIM_ERR_PROTOCOL;
    }
    if (NICSIM_OK == s && NULL == at && NULL == (at = u->fetch_copy = malloc(bytes))) {
        s = NICSIM_ERR_NO_MEMORY;
    }
    if (NICSIM_OK != s) {
        ucp_am_data_release(ucx.worker, a->data); /* the payload will not be fetched */
        return s;
    }
    u->fetch_of = *a;
    u->fetch_at = at;
    u->fetching = true;
    u->fetched = false;
    const ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                        UCP_OP_ATTR_FIELD_DATATYPE,
        .cb.recv_am = fetched,
        .user_data = u,
        .datatype = ucp_dt_make_contig(1)};
    void *req = ucp_am_recv_data_nbx(ucx.worker, a->data, at, bytes, &param);
    if (UCS_PTR_IS_ERR(req)) { /* (the descriptor is still ours to release) */
        ucp_am_data_release(ucx.worker, a->data);
        u->fetching = false;
        free(u->fetch_copy);
        u->fetch_copy = NULL;
        return NICSIM_ERR_TRANSPORT;
    }
    u->fetch = req;
    u->fetched = NULL == req;
    return nicoll_fault(NICOLL_FAULT_FETCH) ? NICSIM_ERR_TRANSPORT : NICSIM_OK;
}

/* Hands the engine the arrivals that are their pairs' next packets, and starts the fetch of the
 * first rendezvous among them. */
NICOLL_HOT_PATH
static nicsim_status_t hand_over(nicoll_ucx_t *u)
{
    for (;;) {
        if (NICSIM_OK != u->error) {
            return u->error;
        }
        if (u->fetching) {
            if (!u->fetched) {
                return NICSIM_OK; /* its sender's later packets wait for it */
            }
            if (NULL != u->fetch) {
                ucp_request_free(u->fetch);
                u->fetch = NULL;
            }
            u->fetching = false;
            nicsim_status_t s = deliver(u, &u->fetch_of, u->fetch_at);
            free(u->fetch_copy);
            u->fetch_copy = NULL;
            if (NICSIM_OK != s) {
                return s;
            }
            continue;
        }
        /* The oldest arrival that is its pair's next packet. */
        int i = 0;
        while (i < u->arrived && u->arrivals[i].h.seq != u->taken[u->arrivals[i].h.src]) {
            ++i;
        }
        if (i == u->arrived) {
            return NICSIM_OK;
        }
        const arrival_t a = u->arrivals[i];
        memmove(&u->arrivals[i], &u->arrivals[i + 1],
                (size_t) (u->arrived - i - 1) * sizeof(*u->arrivals));
        --u->arrived;
        nicsim_status_t s;
        if (a.rndv) {
            s = fetch(u, &a);
        } else {
            s = deliver(u, &a, a.data);
            if (a.release) {
                ucp_am_data_release(ucx.worker, a.data);
            } else {
                free(a.data);
            }
        }
        if (NICSIM_OK != s) {
            return s;
        }
    }
}

/* Each packet goes to the engine as soon as it is in, between turns of the worker's progress.
 * Draining the wire first held every packet of a burst until its last one was in: a node's
 * leader forwarded nothing of a message before it had all of it, and UCX's reassembly buffers of
 * large eager messages (malloc'd) were all held, then freed together and given back to the
 * kernel, so each burst faulted its pages in afresh (1 MiB in four 256 KiB packets, 2 emulated
 * nodes of 1 rank: 730 us, now 255; docs/measurements.md). */
NICOLL_HOT_PATH
static nicsim_status_t ucx_poll(nicoll_transport_t *t)
{
    nicoll_ucx_t *u = t->ucx;
    if (NICSIM_OK != t->error) { /* a broken group drains: what comes is dropped (on_message) */
        ucp_worker_progress(ucx.worker);
        drop_arrivals(u);
        return NICSIM_OK;
    }
    u->news = false;
    do {
        const nicsim_status_t s = hand_over(u);
        if (NICSIM_OK != s) {
            return s;
        }
    } while (0 != ucp_worker_progress(ucx.worker));
    return NICSIM_OK;
}

const nicoll_fabric_t nicoll_fabric_ucx = {
    .name = "ucx", .send = ucx_send, .poll = ucx_poll, .sent = ucx_sent, .landed = ucx_landed};

#else /* built without UCX */

nicoll_ucx_t *nicoll_ucx_setup(nicoll_module_t *m, const bool *reach)
{
    (void) reach;
    NICOLL_VERBOSE(10, "communicator %s (cid %u): no UCX fabric: nicoll was built without UCX",
                   nicoll_comm_name(m->transport.comm), (unsigned) m->transport.comm->c_contextid);
    return NULL;
}

bool nicoll_ucx_reaches(const nicoll_ucx_t *u, int rank)
{
    (void) u;
    (void) rank;
    return false;
}

void nicoll_ucx_fini(nicoll_ucx_t *u) { (void) u; }

int nicoll_ucx_efd(void) { return -1; }

bool nicoll_ucx_arm(void) { return false; }

void nicoll_ucx_close(void) {}

void nicoll_ucx_progress(void) {}

const nicoll_fabric_t nicoll_fabric_ucx = {.name = "ucx"};

#endif
