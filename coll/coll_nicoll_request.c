/*
 * Collectives in flight. A blocking call waits for its engine request here, polling its
 * transport and Open MPI's progress engine in turn. A nonblocking call becomes an MPI request on
 * a list that nicoll's progress callback (registered with opal_progress while the list is not
 * empty, as libnbc does) walks: it polls each request's transport and completes what is done, in
 * whatever order that happens. With the progress thread (coll_nicoll_progress.c), the thread
 * walks the list too and moves the packets; the callback still completes the MPI requests.
 */
#include "coll_nicoll.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "opal/runtime/opal_progress.h"

static nicoll_request_t *active_head; /* nonblocking requests in flight, oldest first */
static nicoll_request_t **active_tail = &active_head;
static bool progressing; /* the callback does not re-enter itself */

static int request_free(ompi_request_t **request)
{
    nicoll_request_t *req = (nicoll_request_t *) *request;
    if (!REQUEST_COMPLETE(*request)) {
        return MPI_ERR_REQUEST; /* erroneous for a collective in flight (MPI 4.1 §6.12) */
    }
    (*request)->req_state = OMPI_REQUEST_INVALID;
    OBJ_RELEASE(req);
    *request = MPI_REQUEST_NULL;
    return OMPI_SUCCESS;
}

static int request_cancel(ompi_request_t *request, int complete)
{
    (void) request;
    (void) complete;
    return MPI_ERR_REQUEST; /* collectives cannot be cancelled */
}

/* A nonblocking request holds its communicator: MPI_Comm_free may come while it is in flight, and
 * the communicator (with nicoll's module and transport) lives on until the request is freed. */
static void request_destruct(nicoll_request_t *req)
{
    OBJ_RELEASE(req->super.req_mpi_object.comm);
}

OBJ_CLASS_INSTANCE(nicoll_request_t, ompi_request_t, NULL, request_destruct);

NICOLL_HOT_PATH
nicoll_request_t *nicoll_request_new(nicoll_module_t *m, nicoll_coll_t coll, bool blocking,
                                     nicoll_request_t *on_stack)
{
    /* A blocking call never shows its request to MPI: only nicoll's fields are used. */
    nicoll_request_t *req = on_stack;
    if (!blocking) {
        req = OBJ_NEW(nicoll_request_t);
        if (NULL == req) {
            return NULL;
        }
        ompi_request_t *r = &req->super;
        memset(req->nbc_fields, 0, sizeof(req->nbc_fields));
        OMPI_REQUEST_INIT(r, false);
        r->req_type = OMPI_REQUEST_COLL;
        r->req_state = OMPI_REQUEST_ACTIVE;
        r->req_free = request_free;
        r->req_cancel = request_cancel;
        r->req_mpi_object.comm = m->transport.comm; /* held: request_destruct() */
        OBJ_RETAIN(m->transport.comm);
    }
    req->next = NULL;
    req->engine = NULL;
    req->packed = NULL;
    req->unpack_to = NULL;
    req->module = m;
    req->coll = coll;
    req->bytes = 0;
    req->asked_at = ~0ul;
    req->engine_status = NICSIM_IN_PROGRESS;
    req->offloaded = false;
    req->deferred = false;
    return req;
}

NICOLL_HOT_PATH
void nicoll_request_cleanup(nicoll_request_t *req)
{
    if (NULL != req->engine) {
        nicsim_request_free(req->engine);
        req->engine = NULL;
    }
    if (NULL != req->packed) {
        free(req->packed);
        req->packed = NULL;
    }
}

bool nicoll_requests_in_flight(const nicoll_transport_t *t)
{
    for (const nicoll_request_t *req = active_head; NULL != req; req = req->next) {
        if (&req->module->transport == t) {
            return true;
        }
    }
    return false;
}

/* The previous blocking collective's engine request (finish()), released once a rank has time. */
NICOLL_HOT_PATH
void nicoll_release_retired(nicoll_transport_t *t)
{
    if (NULL != t->retired) {
        nicsim_request_free(t->retired);
        t->retired = NULL;
    }
}

/* The engine is done with the request: unpack, count, release. A blocking call's engine request
 * is not released here but kept as the transport's `retired` one until the communicator's next
 * blocking collective waits for its packets (nicoll_start): that work then falls where the rank
 * is idle, not between the last packet's arrival and the return to the caller, nor between a
 * call and its first packet. */
NICOLL_HOT_PATH
static nicsim_status_t finish(nicoll_request_t *req, nicsim_status_t s, bool blocking)
{
    nicoll_transport_t *t = &req->module->transport;
    if (NICSIM_OK == s && NULL != req->unpack_to &&
        OMPI_SUCCESS != nicoll_unpack(req->packed, req->bytes, req->unpack_to, req->unpack_count,
                                      req->unpack_type)) {
        s = NICSIM_ERR_INVALID;
    }
    if (blocking) {
        nicoll_release_retired(t); /* unless nicoll_start() had time to */
        t->retired = req->engine;
        req->engine = NULL;
    }
    nicoll_request_cleanup(req);
    if (NICSIM_OK == s) {
        nicoll_coll_stats_t *c = &mca_coll_nicoll_component.stats.coll[req->coll];
        ++c->calls;
        c->bytes += req->bytes;
        nicoll_transport_count(t);
    }
    NICOLL_VERBOSE(20, "%s on %s (cid %u): %zu bytes, %s", nicoll_coll_names[req->coll],
                   nicoll_comm_name(t->comm), (unsigned) t->comm->c_contextid, req->bytes,
                   nicsim_status_string(s));
    return s;
}

/* (ask(), test() and engine_post() are inlined: they are the hot path of every collective, and
 * are called from several places.) */
#define NICOLL_ALWAYS_INLINE static inline __attribute__((always_inline))

/* Asks the engine about the request, only when packets moved since it last answered (its answer
 * cannot change otherwise): NICSIM_OK once it is done, NICSIM_IN_PROGRESS, or its error. */
NICOLL_ALWAYS_INLINE nicsim_status_t ask(nicoll_request_t *req, const nicoll_transport_t *t)
{
    if (NICSIM_IN_PROGRESS == req->engine_status && req->asked_at != t->events) {
        req->asked_at = t->events;
        req->engine_status = nicsim_request_test(req->engine);
    }
    return req->engine_status;
}

/* Whether the progress thread may poll the request's transport: not where a peer is reached
 * through the PML, which only MPI's own threads may call. */
static bool thread_may_progress(const nicoll_request_t *req)
{
    return 0 == req->module->transport.pml_peers;
}

/* Whether every packet the transport brings wakes the progress thread: shared memory rings its
 * doorbell; UCX signals its worker's event fd where it has one. */
static bool rings_bell(const nicoll_transport_t *t)
{
    return NULL == t->ucx || nicoll_progress_ucx_signals();
}

NICOLL_ALWAYS_INLINE nicsim_status_t engine_post(nicsim_group_t *group, const nicoll_post_t *p,
                                                 nicsim_request_t **engine)
{
    switch (p->coll) {
    case NICSIM_COLL_BARRIER:
        return nicsim_barrier_post(group, p->algorithm, engine);
    case NICSIM_COLL_BCAST:
        return nicsim_bcast_post(group, p->algorithm, p->k, p->root, p->buffer, p->bytes,
                                 p->packet_size, engine);
    case NICSIM_COLL_ALLGATHER:
        return nicsim_allgather_post(group, p->algorithm, p->buffer, p->bytes, p->packet_size,
                                     p->own, engine);
    }
    return NICSIM_ERR_INVALID;
}

/* Posts the transport's collectives handed to the progress thread and not posted yet, in call
 * order. One that fails to post is given up, everywhere, in its place (as nicoll_abort). */
NICOLL_HOT_PATH
static void post_deferred(nicoll_transport_t *t)
{
    for (nicoll_request_t *req = active_head; t->deferred > 0 && NULL != req; req = req->next) {
        if (!req->deferred || &req->module->transport != t) {
            continue;
        }
        req->deferred = false;
        --t->deferred;
        const nicsim_status_t s = engine_post(t->group, &req->post, &req->engine);
        if (NICSIM_OK != s && NICSIM_OK != nicsim_abort_post(t->group, s, &req->engine)) {
            req->engine_status = s;
        }
    }
}

/* On a core the progress thread shares with its process, what the caller did after its last
 * post that copies payloads the thread could copy later (nicoll_post's `copies`), until its
 * next MPI call that progresses (nicoll's progress callback: its MPI_Wait, an MPI_Test, another
 * collective). Back within NICOLL_CALLER_GAP_US: it waits at once, so the thread, woken only to
 * post later, would post nothing the caller's wait does not, and its wake costs the call (2
 * ranks at real-time priority: 14-24 us, where the thread arms its timer;
 * docs/measurements.md); the next such post is the caller's, made in its call. Back
 * NICOLL_CALLER_GAP_US or more after, having left its core (it blocked, and ran for less than
 * half the time; read after a broadcast staged at normal priority only): it slept, as a rank
 * waiting on an accelerator or on I/O does, and the thread may stage the next such broadcast in
 * that window at once. (Less than half alone is not enough: a computation that keeps its core
 * but shares it with other processes' threads gets as little; it is preempted, never blocked.) */
#define NICOLL_CALLER_GAP_US 20
static bool returning;             /* the call's post was such a post */
static struct timespec posted_at; /* when the caller left that call; tv_sec 0: back since */
static struct rusage posted_usage; /* its usage then, read where usage_read */
static bool usage_read;
static bool waited_at_once, caller_idles;

static long long us(struct timeval t)
{
    return t.tv_sec * 1000000LL + t.tv_usec;
}

/* `progressed`: the caller's call progresses (it may wait); else it is the next post, which says
 * nothing of waiting. */
__attribute__((cold, noinline)) static void caller_returned(bool progressed)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    const long long gap = (now.tv_sec - posted_at.tv_sec) * 1000000LL +
                          (now.tv_nsec - posted_at.tv_nsec) / 1000;
    if (progressed) {
        waited_at_once = gap < NICOLL_CALLER_GAP_US;
    }
    if (usage_read) {
        struct rusage usage;
        getrusage(RUSAGE_THREAD, &usage);
        const long long ran = us(usage.ru_utime) + us(usage.ru_stime) -
                              us(posted_usage.ru_utime) - us(posted_usage.ru_stime);
        caller_idles = gap >= NICOLL_CALLER_GAP_US && usage.ru_nvcsw > posted_usage.ru_nvcsw &&
                       2 * ran < gap;
    }
    posted_at.tv_sec = 0;
}

/* The caller is in an MPI call (nicoll's progress, a collective's post). */
NICOLL_ALWAYS_INLINE void caller_back(bool progressed)
{
    if (0 != posted_at.tv_sec) {
        caller_returned(progressed);
    }
}

/* Whether the collective is a nonblocking one the progress thread may progress (thread mode, no
 * peer through the PML). */
static bool offloads(const nicoll_request_t *req)
{
    return nicoll_locking && req->coll >= NICOLL_IBARRIER && thread_may_progress(req);
}

/* Whether a broadcast the thread offloads is one, on a core the thread shares, whose post stages
 * the message: this rank is its root, and its payloads go apart from their headers. */
static bool stages_bcast(const nicoll_request_t *req, const nicoll_post_t *p)
{
    return NICSIM_COLL_BCAST == p->coll && p->bytes > NICOLL_INLINE_BYTES &&
           !nicoll_spare_core() && p->root == ompi_comm_rank(req->module->transport.comm);
}

/* Whether the progress thread posts the collective rather than the caller (coll_nicoll_progress.c):
 * one it offloads, where it has a core of its own. On the core it shares with its process, a post
 * that copies payloads over NICOLL_INLINE_BYTES, which the thread can make in the computation's
 * window instead of the caller's call: an allgather's (its own block into place, the blocks
 * already there), and a broadcast's root's (it stages the message) where the thread runs at
 * real-time priority, which takes the core from a computation that keeps it (those it makes
 * NICOLL_PROGRESS_POST_DELAY_US after the call: `delayed`), or, at once, where the caller left
 * its core the last time. (2 ranks, OSU's overlap loop, the time an iteration took
 * beyond its computation: MPI_Iallgather of 16-128 KiB 30-75 us with the caller posting, 14-34
 * with the thread, 11 runs alternating; its pure communication, waited for at once, took 1.1-1.6
 * times as long. A root whose computation sleeps: MPI_Ibcast of 1 / 4 MiB 18 / 50 us with the
 * thread staging, 52 / 184 with the caller, 5 runs alternating, nicoll-bench --idle-compute. One
 * whose computation keeps the core, at real-time priority: MPI_Ibcast of 64 KiB-4 MiB 8-9 us, at
 * normal priority with the caller staging 20-240, 4 runs alternating; its pure communication
 * 1.3-1.5 times as long up to 1 MiB. A broadcast's receivers already copy in that window, woken
 * by the root's packets, and the thread's post only held them up: MPI_Ibcast of 8-128 KiB 5-11 us
 * against 12-18, 5 runs.) Not the posts it would delay, though, where the caller waited at once
 * after the last such post (caller_returned): its wait would make the post, and the thread's wake
 * only cost the call. (2 ranks at real-time priority, both computing, 8 runs alternating: waited
 * for at once, MPI_Iallgather of 64 KiB / 256 KiB / 1 MiB took 55 / 100 / 224 us against 98 /
 * 128 / 249 with the thread woken, MPI_Ibcast 41 / 72 / 157 against 58 / 103 / 185; in OSU's
 * overlap loop an iteration's time beyond the computation 21-28 and 10-11 us against 25-61 and
 * 8-9.) */
static bool thread_posts(bool offloaded, bool delayed, bool stages)
{
    if (!offloaded || !nicoll_progress_runs()) {
        return false;
    }
    if (nicoll_spare_core()) {
        return true;
    }
    caller_back(false);
    return (delayed && !waited_at_once) || (stages && caller_idles);
}

NICOLL_HOT_PATH
nicsim_status_t nicoll_post(nicoll_request_t *req, const nicoll_post_t *p)
{
    nicoll_transport_t *t = &req->module->transport;
    const bool offloaded = offloads(req), stages = offloaded && stages_bcast(req, p);
    /* A post, on a core the thread shares, that copies payloads the thread could copy later; of
     * them, those the thread makes later (thread_posts). */
    const bool copies = stages || (offloaded && !nicoll_spare_core() &&
                                   NICSIM_COLL_ALLGATHER == p->coll &&
                                   p->bytes > NICOLL_INLINE_BYTES),
               delayed = copies && (!stages || nicoll_progress_realtime);
    nicsim_status_t s = NICSIM_OK;
    if (thread_posts(offloaded, delayed, stages)) {
        req->post = *p;
        req->deferred = true;
        req->delayed = delayed;
        ++t->deferred;
    } else {
        if (t->deferred > 0) { /* (never in caller mode) */
            post_deferred(t);
        }
        s = engine_post(t->group, p, &req->engine);
    }
    /* What the caller does once out of its call tells the next such post (caller_returned). */
    returning = copies;
    usage_read = stages && !nicoll_progress_realtime;
    return s;
}

void nicoll_call_returns(void)
{
    if (returning) {
        returning = false;
        clock_gettime(CLOCK_MONOTONIC, &posted_at);
        if (usage_read) {
            getrusage(RUSAGE_THREAD, &posted_usage);
        }
    }
}

/* NICSIM_OK once the engine is done with the request and every payload the transport sent from
 * the collective's buffer in place has left. A request the engine completed at posting (a
 * broadcast's root whose packets all left) is done without polling the transport. */
NICOLL_ALWAYS_INLINE nicsim_status_t test(nicoll_request_t *req)
{
    nicoll_transport_t *t = &req->module->transport;
    if (req->deferred) {
        post_deferred(t);
    }
    if (NULL == req->engine) {
        return NICSIM_IN_PROGRESS == req->engine_status ? NICSIM_OK : req->engine_status;
    }
    nicsim_status_t s = ask(req, t);
    if (NICSIM_OK == s && nicoll_transport_sent(t)) {
        return NICSIM_OK;
    }
    if (NICSIM_OK != s && NICSIM_IN_PROGRESS != s) {
        return s;
    }
    if (NICSIM_OK != (s = nicoll_transport_poll(t)) ||
        NICSIM_OK != (s = ask(req, t))) {
        return s;
    }
    return nicoll_transport_sent(t) ? NICSIM_OK : NICSIM_IN_PROGRESS;
}

unsigned long long nicoll_packets_moved(void)
{
    return mca_coll_nicoll_component.stats.packets_sent +
           mca_coll_nicoll_component.stats.packets_received;
}

/* The request's communication is over (or failed) with no MPI call of the process's after its
 * start: the progress thread did it, or it was over once posted (its peers' packets had come,
 * and the thread had taken them). The caller's next MPI call completes it. */
static void offloaded(nicoll_request_t *req)
{
    req->offloaded = true;
    ++mca_coll_nicoll_component.stats.offloaded;
}

void nicoll_requests_post_deferred(void)
{
    for (nicoll_request_t *req = active_head; NULL != req; req = req->next) {
        if (req->deferred) {
            post_deferred(&req->module->transport);
        }
    }
}

bool nicoll_requests_delayed(void)
{
    for (nicoll_request_t *req = active_head; NULL != req; req = req->next) {
        if (req->deferred && req->delayed) {
            return true;
        }
    }
    return false;
}

bool nicoll_requests_advance(void)
{
    bool pending = false;
    for (nicoll_request_t *req = active_head; NULL != req; req = req->next) {
        if (!thread_may_progress(req) || req->offloaded) {
            continue;
        }
        if (NICSIM_IN_PROGRESS == test(req)) {
            pending = true;
        } else {
            offloaded(req);
        }
    }
    return pending;
}

bool nicoll_requests_rung(void)
{
    for (nicoll_request_t *req = active_head; NULL != req; req = req->next) {
        if (thread_may_progress(req) && !req->offloaded && !rings_bell(&req->module->transport)) {
            return false;
        }
    }
    return true;
}

/* How many times a collective waiting on `t` polls its rings per yield: per call to Open MPI's
 * progress in a blocking wait, and per yield that nicoll's callback lets MPI_Wait make (once where
 * a peer is reached through the PML or UCX: see nicoll_start). Yielding when idle
 * (mpi_yield_when_idle, on by itself on an oversubscribed node), every such call that finds
 * nothing is a sched_yield, and a packet that lands meanwhile waits for it to return. Where the
 * processes share cores, the yield gives the core to a peer that needs it: yield after every poll,
 * as tuned's waits do. Where each has a core, there is no one to give it to: poll longer between
 * yields. (2 ranks yielding, 9 runs alternating: 1 B-2 KiB broadcasts 1.10-1.53 us polling 64
 * rounds, 1.78-1.95 polling 16, tuned's 1.49-1.76; later, 4 paired jobs: 1-64 B broadcasts
 * 0.95-0.97 us polling 1024 rounds, 1.61-1.65 at most sizes polling 64, the sizes whose packet
 * came during the yield in that job, tuned's 0.97-0.98. 4 oversubscribed ranks: MPI_Barrier 8.7 us
 * polling 16, 15.7 polling 64; nicoll-bench --paired, 4 jobs in each loop, its ratio to tuned's
 * time a median of 1.16 polling 16 and 1.04 polling once, the 1 B-1 MiB broadcasts and allgathers
 * within the jobs' spread.) (Open MPI sets its yield flag late in MPI_Init, after nicoll's set-up:
 * read here.) */
static unsigned polls_per_progress(const nicoll_transport_t *t)
{
    if (t->pml_peers > 0 || NULL != t->ucx || !nicoll_core_each()) {
        return 1;
    }
    return opal_progress_yield_when_idle ? 1024 : 16;
}

/* Open MPI's progress callback: tests the nonblocking collectives and completes those done. In
 * thread mode, where the thread holds the lock, it waits for it: the thread lets go between
 * rounds once a caller waits. Returning at once instead had a caller in MPI_Wait spin on a core
 * the thread needed, and a nonblocking collective then ended well after its computation (2
 * emulated nodes of 1 rank: several times the transfer's own time). */
NICOLL_HOT_PATH
static int progress(void)
{
    if (progressing || (nicoll_locking && !nicoll_lock_unless_mine())) {
        return 0; /* (a release of ours waits for PML requests under the lock) */
    }
    progressing = true;
    caller_back(true);
    const unsigned long long moved_before = nicoll_packets_moved();
    nicoll_request_t *done = NULL, **done_tail = &done;
    unsigned polls = UINT_MAX; /* the rounds between yields that every waiting one allows */
    for (nicoll_request_t **link = &active_head; NULL != *link;) {
        nicoll_request_t *req = *link;
        const unsigned allows = polls_per_progress(&req->module->transport);
        polls = allows < polls ? allows : polls;
        nicsim_status_t s = test(req);
        if (NICSIM_IN_PROGRESS == s ||
            (NICSIM_OK != s && !nicoll_transport_settled(&req->module->transport))) {
            link = &req->next;
            continue;
        }
        *link = req->next;
        if (active_tail == &req->next) {
            active_tail = link;
        }
        s = finish(req, s, false);
        req->super.req_status.MPI_ERROR =
            NICSIM_OK == s
                ? OMPI_SUCCESS
                : nicoll_error(req->module, req->coll, s);
        req->next = NULL;
        *done_tail = req;
        done_tail = &req->next;
    }
    if (NULL == active_head) {
        opal_progress_unregister(progress);
    }
    const bool moved = nicoll_packets_moved() != moved_before;
    progressing = false;
    nicoll_unlock();
    /* Completed outside the lock: a request's completion callback may call MPI. */
    int completed = 0;
    for (nicoll_request_t *next; NULL != done; done = next, ++completed) {
        next = done->next;
        ompi_request_complete(&done->super, true);
    }
    /* Packets moved count as events: Open MPI yields the core (mpi_yield_when_idle) after a
     * progress round that reports none, and a collective whose packets flow is not idle. A round
     * that found nothing counts as one too, but for one in polls_per_progress(): a caller
     * waiting in MPI_Wait then yields as seldom as a blocking collective's wait (2 ranks
     * yielding, 4 paired jobs, MPI_Ibcast of 64 B-2 KiB: 0.66-1.02 of coll/tuned's time against
     * 1.01-1.25 yielding every round; OSU's loop 0.68-0.71 against 0.86-1.00). */
    static unsigned idle; /* rounds since one moved a packet or yielded */
    if (completed + moved > 0 || ++idle >= polls) {
        idle = 0;
        return completed + moved;
    }
    return 1;
}

nicsim_status_t nicoll_abort(nicoll_module_t *m, nicsim_status_t why, nicsim_request_t **engine)
{
    const nicoll_transport_t *t = &m->transport;
    if (!t->set_up || NULL == t->group) {
        return why; /* no group to tell: the failure was agreed on at set-up */
    }
    post_deferred(&m->transport); /* the abort takes the next place in call order */
    /* (after a transport error too: the others are told, past it, through whatever still works) */
    return NICSIM_OK == nicsim_abort_post(t->group, why, engine) ? NICSIM_OK : why;
}

void nicoll_abort_unwaited(nicoll_module_t *m)
{
    nicsim_request_t *engine = NULL;
    (void) nicoll_transport_ready(m);
    if (NICSIM_OK == nicoll_abort(m, NICSIM_ERR_NO_MEMORY, &engine)) {
        nicsim_request_free(engine); /* its packets leave as the group progresses */
    }
}

/* A blocking collective failed: waits until its buffer is the caller's again
 * (nicoll_transport_settled). (A nonblocking one stays active until then: progress().) */
__attribute__((cold, noinline)) static void settle(nicoll_transport_t *t)
{
    while (!nicoll_transport_settled(t)) {
        nicoll_unlock(); /* (nicoll's callback, and other components, take it) */
        opal_progress(); /* (the PML moves payloads there; a peer may need this core) */
        nicoll_lock();
    }
}

NICOLL_HOT_PATH
int nicoll_start(nicoll_request_t *req, nicsim_status_t posted, ompi_request_t **request)
{
    nicoll_module_t *m = req->module;
    const nicoll_coll_t coll = req->coll;
    if (NICSIM_OK != posted) {
        /* Nothing of this one travelled, but peers may still send its packets: drained from now
         * on. */
        (void) nicoll_transport_settled(&req->module->transport);
        nicoll_request_cleanup(req);
        if (NULL != request) {
            OBJ_RELEASE(req);
        }
        return nicoll_error(m, coll, posted);
    }
    nicoll_transport_t *t = &req->module->transport;
    if (NULL == request) {
        /* Shared memory needs only our own polling: Open MPI's progress (other traffic, other
         * nonblocking collectives, yielding an oversubscribed core) runs every few rounds,
         * polls_per_progress(). (Every round, an idle rank of a loaded machine yields to other
         * jobs at each poll and waits for a time slice to see its packet.) The PML moves our
         * packets only in Open MPI's progress, so it runs every round where a peer is reached
         * through it; and so it does where one is reached through UCX: a packet from another
         * node takes microseconds, which a waiting rank spends better giving its core to the one
         * that forwards it than polling (small broadcasts on emulated nodes 0.52-0.95 times
         * coll/tuned's time against 0.95-1.50 polling 16 rounds per yield). */
        if (nicoll_locking) {
            nicoll_progress_caller_polls(t, true);
        }
        nicsim_status_t s;
        unsigned every = 0, left = 0; /* (0: not waited yet; a root done at posting never does) */
        while (NICSIM_IN_PROGRESS == (s = test(req))) {
            nicoll_release_retired(t); /* while the packets are on their way */
            if (0 == every) {
                every = left = polls_per_progress(t);
            }
            if (0 == --left) {
                nicoll_unlock(); /* (nicoll's callback, and other components, take it) */
                opal_progress();
                nicoll_lock();
                left = every;
            }
        }
        if (nicoll_locking) {
            nicoll_progress_caller_polls(t, false);
        }
        if (NICSIM_OK != s) {
            settle(t);
        }
        s = finish(req, s, true);
        return NICSIM_OK == s ? OMPI_SUCCESS : nicoll_error(m, coll, s);
    }
    nicoll_release_retired(t);
    *request = &req->super;
    if (NULL == req->engine && !req->deferred) { /* nothing to communicate: complete at once */
        finish(req, NICSIM_OK, false);
        req->super.req_status.MPI_ERROR = OMPI_SUCCESS;
        ompi_request_complete(&req->super, true);
        return OMPI_SUCCESS;
    }
    if (NULL == active_head) {
        opal_progress_register(progress);
    }
    *active_tail = req;
    active_tail = &req->next;
    if (nicoll_locking && thread_may_progress(req)) {
        if (!req->deferred && NICSIM_IN_PROGRESS != test(req)) {
            offloaded(req);
        }
        nicoll_progress_posted(req->deferred || !rings_bell(t));
    }
    return OMPI_SUCCESS;
}
