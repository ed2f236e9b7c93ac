/*
 * Who moves the packets of nonblocking collectives (coll_nicoll_progress): the caller, inside its
 * MPI calls (opal_progress runs nicoll's callback), or also a progress thread of the process, its
 * "NIC core", which forwards packets and carries collectives to completion while the host
 * computes, as the NICs of LFC (Bhoedjang et al.) and of Yu, Buntinas and Panda do.
 *
 * The thread serves the nonblocking collectives of communicators whose packets travel over shared
 * memory and UCX only. It never calls the PML: Open MPI's point-to-point layer is safe from a
 * second thread only under MPI_THREAD_MULTIPLE, which nicoll declines.
 *
 * Where the machine has a core for it, the thread is bound there, posts each nonblocking collective
 * itself (the caller's call returns at once, and the first packets' copies run on the thread's
 * core) and is woken by every post. Where it shares its process's core, the caller posts, and the
 * thread is woken by its peers' packets, taking the core from the computation that follows;
 * except posts that copy payloads over NICOLL_INLINE_BYTES (coll_nicoll_request.c): an
 * allgather's, which the thread makes woken by the post but first sleeping
 * NICOLL_PROGRESS_POST_DELAY_US, so that the kernel preempts the caller's computation for it when
 * the timer fires, not the caller's call (which would then take as long as the post); and a
 * broadcast's root's: so too at real-time priority, else at once where the caller left its core
 * idle after the last one. (Where the caller waited at once after the last such post, it makes
 * the next itself.)
 *
 * At normal priority, on a core it shares with a computation, a woken thread waits for the
 * kernel to preempt the computation (here 16-80 us, where the computation's time slice protects
 * it); at real-time priority (coll_nicoll_progress_priority, SCHED_FIFO) it runs at once, as a
 * NIC's interrupt handler would, and the computation gets the core back when it sleeps.
 *
 * It sleeps on futexes: its process's post counter and a doorbell per shared-memory segment
 * (coll_nicoll_shm.c), which a peer rings after each packet for, or slot freed by, a rank that
 * said it sleeps. UCX's worker signals an event fd instead, once armed; a second thread, the
 * waker, sleeps in poll() on it and turns its signal into one more futex. Where UCX has no event
 * fd, the thread sleeps in growing steps while it waits for a UCX packet. With no collective in
 * flight it sleeps until the next post, so an idle job burns no CPU.
 *
 * Every collective's state (engine groups, transports, the request list, counters) is touched
 * under one lock, taken only in thread mode: the caller takes it in each collective and lets go
 * of it whenever it runs Open MPI's progress, so that a collective of another component that
 * needs nicoll's to progress never waits for a lock the caller holds; nicoll's progress callback
 * waits for the thread's round to end rather than poll beside it. The thread never completes
 * MPI requests: it leaves that, and any unpacking, to the caller's next MPI call (a request's
 * completion callbacks belong to the threads that call MPI).
 */
#include "coll_nicoll.h"

#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "opal/mca/hwloc/base/base.h"
#include "opal/util/proc.h"

bool nicoll_locking;
bool nicoll_progress_realtime;
int nicoll_node_cores, nicoll_node_ranks;

/* Rounds in which nothing moved that the thread polls through before it sleeps. */
#define NICOLL_PROGRESS_SPIN 64
/* While it waits for a packet that rings no doorbell, it sleeps in steps that double from 1 us
 * up to the first; on doorbells alone, at most the second (a safety net: every packet it waits
 * for rings one). */
#define NICOLL_PROGRESS_STEP_US 200
#define NICOLL_PROGRESS_SAFETY_US 100000
/* On a core it shares, how long the thread woken to post a collective sleeps before it does: long
 * enough for the caller to leave its MPI call (2 ranks, MPI_Iallgather of 64 KiB-1 MiB: after
 * 5 us the post's copies still landed in the call, after 20 us in the computation; at real-time
 * priority after 5 and 10 us too, the call taking 50-240 us, 4 runs). */
#define NICOLL_PROGRESS_POST_DELAY_US 20
/* The most doorbells it sleeps on (futex_waitv takes 128 futexes). */
#define NICOLL_PROGRESS_BELLS 63

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t thread;
static bool running, stopping, failed;
static uint32_t posts;   /* counts the posts the thread is woken for: a futex it sleeps on */
static bool post_unseen; /* one to wake it for once the lock is let go */
static int waiting;      /* callers waiting for the lock */
static bool asleep; /* the thread sleeps, or is about to (under the lock) */
/* The transports the thread watches for packets, with their doorbells (under the lock). */
static nicoll_transport_t *watched[NICOLL_PROGRESS_BELLS];
static int watched_count;
static int watched_ucx;     /* of them, those with UCX peers */
static int unbelled;        /* transports to watch past the doorbells: the thread sleeps in steps */
/* The waker: it polls UCX's event fd after each time the thread armed the worker. */
static pthread_t waker;
static bool waker_running, waker_failed;
static int waker_stop = -1;  /* an eventfd that ends it */
static uint32_t armed;       /* bumped after each arm: a futex the waker sleeps on */
static uint32_t ucx_signals; /* bumped by the waker when the fd signalled: one the thread does */
static int ucx_callers;      /* callers in a blocking collective over UCX, polling it themselves */
static bool ucx_held;        /* a signal came meanwhile: the last of them passes it on */

static void futex_bump(uint32_t *futex)
{
    __atomic_add_fetch(futex, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, futex, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static __thread bool mine; /* this caller thread holds the lock */

void nicoll_lock_now(void)
{
    __atomic_add_fetch(&waiting, 1, __ATOMIC_RELAXED);
    pthread_mutex_lock(&lock);
    __atomic_sub_fetch(&waiting, 1, __ATOMIC_RELAXED);
    mine = true;
}

bool nicoll_lock_unless_mine(void)
{
    if (mine) {
        return false;
    }
    nicoll_lock_now();
    return true;
}

void nicoll_unlock_now(void)
{
    const bool wake = post_unseen;
    post_unseen = false;
    mine = false;
    pthread_mutex_unlock(&lock);
    if (wake) { /* after the lock is free: woken, the thread goes straight to work */
        futex_bump(&posts);
    }
}

/* The job's processes on this machine, counted in a word of shared memory named after the job:
 * each adds itself at component open, which MPI_Init runs before its exchange (a barrier), and
 * reads the count at init_query, after it. Open MPI's own count is per host name, and nodes
 * emulated on one machine (each in a UTS namespace of its own, as test/mpi/nodes.sh does) have
 * names of their own but share the cores (and /dev/shm). */
static uint64_t *on_machine;
static char on_machine_name[64];

void nicoll_progress_count_in(void)
{
    snprintf(on_machine_name, sizeof(on_machine_name), "/nicoll-%u-%u-processes",
             (unsigned) getuid(), (unsigned) OPAL_PROC_MY_NAME.jobid);
    on_machine = nicoll_shm_map(on_machine_name, sizeof(*on_machine));
    if (NULL == on_machine) { /* counted per host name, as Open MPI does */
        NICOLL_VERBOSE(10, "progress: cannot count the job's processes on this machine (%s: %s); "
                       "counting this node's", on_machine_name, strerror(errno));
    } else {
        __atomic_add_fetch(on_machine, 1, __ATOMIC_RELAXED);
    }
}

/* The count, once: the name goes (every process unlinks it; each reads through its own map). */
static int processes_on_machine(void)
{
    if (NULL == on_machine) {
        return 0;
    }
    const int n = (int) __atomic_load_n(on_machine, __ATOMIC_RELAXED);
    munmap(on_machine, sizeof(uint64_t));
    on_machine = NULL;
    (void) shm_unlink(on_machine_name);
    return n;
}

void nicoll_progress_open(void)
{
    if (NULL == opal_hwloc_topology) {
        (void) opal_hwloc_base_get_topology(); /* (loaded later in MPI_Init otherwise) */
    }
    hwloc_topology_t topology = opal_hwloc_topology;
    nicoll_node_cores = NULL == topology ? 0 : hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
    nicoll_node_ranks = (int) opal_process_info.num_local_peers + 1;
    const int machine = processes_on_machine();
    if (machine > nicoll_node_ranks) {
        nicoll_node_ranks = machine;
    }
    int mode = mca_coll_nicoll_component.progress;
    if (NICOLL_AUTO == mode) {
        mode = nicoll_spare_core() ? NICOLL_PROGRESS_THREAD : NICOLL_PROGRESS_CALLER;
    }
    nicoll_locking = NICOLL_PROGRESS_THREAD == mode;
    const int priority = mca_coll_nicoll_component.progress_priority;
    nicoll_progress_realtime =
        nicoll_locking && (NICOLL_PRIORITY_REALTIME == priority ||
                           (NICOLL_AUTO == priority && !nicoll_spare_core()));
    NICOLL_VERBOSE(10, "progress: %s%s (coll_nicoll_progress %s, coll_nicoll_progress_priority "
                   "%s; %d cores, %d processes of the job on this machine)",
                   !nicoll_locking      ? "caller"
                   : nicoll_spare_core() ? "thread, on a core of its own"
                                         : "thread, sharing its process's core",
                   nicoll_progress_realtime ? ", at real-time priority" : "",
                   mca_coll_nicoll_component.progress_name,
                   mca_coll_nicoll_component.progress_priority_name, nicoll_node_cores,
                   nicoll_node_ranks);
}

/* Creates one of nicoll's threads (the progress thread, the waker): at real-time priority where
 * nicoll_progress_realtime, SCHED_FIFO at 1, below any real-time thread of the system; where the
 * kernel refuses (no CAP_SYS_NICE, RLIMIT_RTPRIO 0, a cgroup without real-time time), at normal
 * priority from then on, said once: in one line where coll_nicoll_progress_priority asked for
 * realtime, at verbose 10 where auto did. */
static int create_thread(pthread_t *t, void *(*fn)(void *))
{
    if (nicoll_progress_realtime) {
        const struct sched_param lowest = {.sched_priority = 1};
        pthread_attr_t attr;
        int rc = pthread_attr_init(&attr);
        if (0 == rc) {
            rc = pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
            rc = 0 != rc ? rc : pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
            rc = 0 != rc ? rc : pthread_attr_setschedparam(&attr, &lowest);
            rc = 0 != rc ? rc : pthread_create(t, &attr, fn, NULL);
            pthread_attr_destroy(&attr);
        }
        if (0 == rc) {
            return 0;
        }
        nicoll_progress_realtime = false;
        if (NICOLL_PRIORITY_REALTIME == mca_coll_nicoll_component.progress_priority) {
            opal_output(0, "nicoll: coll_nicoll_progress_priority realtime: the kernel refuses "
                        "the progress thread real-time priority (%s; it needs CAP_SYS_NICE or "
                        "an RLIMIT_RTPRIO of 1 or more); it runs at normal priority",
                        strerror(rc));
        } else {
            NICOLL_VERBOSE(10, "progress: the kernel refuses the thread real-time priority "
                           "(%s); it runs at normal priority", strerror(rc));
        }
    }
    return pthread_create(t, NULL, fn, NULL);
}

static void *run(void *arg);
static void *wake_on_ucx(void *arg);

/* Starts the thread, once; false when it cannot run (said once). */
static bool start_thread(void)
{
    if (!running && !failed) {
        int rc = create_thread(&thread, run);
        if (0 != rc) {
            failed = true;
            opal_output(0, "nicoll: coll_nicoll_progress: cannot start the progress thread (%s); "
                        "nonblocking collectives progress in MPI calls only", strerror(rc));
        }
        running = 0 == rc;
    }
    return running;
}

/* Starts the waker, once; false when UCX has no event fd or it cannot run (said once). */
static bool start_waker(void)
{
    if (!waker_running && !waker_failed && nicoll_ucx_efd() >= 0) {
        waker_stop = eventfd(0, EFD_CLOEXEC);
        int rc = waker_stop < 0 ? errno : create_thread(&waker, wake_on_ucx);
        if (0 != rc) {
            waker_failed = true;
            opal_output(0, "nicoll: coll_nicoll_progress: cannot start the thread that waits for "
                        "UCX's events (%s); the progress thread polls UCX in steps",
                        strerror(rc));
            if (waker_stop >= 0) {
                close(waker_stop);
            }
        }
        waker_running = 0 == rc;
    }
    return waker_running;
}

bool nicoll_progress_ucx_signals(void)
{
    return waker_running;
}

void nicoll_progress_watch(nicoll_transport_t *t, bool watch)
{
    if (!nicoll_locking) {
        return;
    }
    if (!watch) {
        unbelled -= t->unbelled;
        t->unbelled = false;
        for (int i = 0; t->watched && i < watched_count; ++i) {
            if (watched[i] == t) {
                if (NULL != t->shm) {
                    nicoll_shm_sleeping(t->shm, false);
                }
                watched_ucx -= NULL != t->ucx && waker_running; /* (as counted in) */
                watched[i] = watched[--watched_count];
                t->watched = false;
            }
        }
        return;
    }
    if (t->watched || t->unbelled || !start_thread()) {
        return;
    }
    if (watched_count < NICOLL_PROGRESS_BELLS) {
        watched[watched_count++] = t;
        t->watched = true;
        watched_ucx += NULL != t->ucx && start_waker();
    } else {
        t->unbelled = true;
        ++unbelled;
    }
    post_unseen = true; /* the thread sleeps on one more bell */
}

void nicoll_progress_caller_polls(nicoll_transport_t *t, bool polling)
{
    if (NULL != t->ucx &&
        0 == __atomic_add_fetch(&ucx_callers, polling ? 1 : -1, __ATOMIC_SEQ_CST) &&
        __atomic_exchange_n(&ucx_held, false, __ATOMIC_SEQ_CST)) {
        /* A signal came while the caller polled: it takes a last look itself and arms the
         * worker again for the waker (the first arm after a signal finds it pending), or,
         * where events keep coming, wakes the thread. */
        bool armed_again = false;
        for (int tries = 0; tries < 2 && !armed_again; ++tries) {
            for (int i = 0; i < watched_count; ++i) {
                (void) nicoll_transport_poll(watched[i]);
            }
            armed_again = nicoll_ucx_arm();
        }
        futex_bump(armed_again ? &armed : &ucx_signals);
    }
    if (NULL == t->shm || !t->watched) { /* (no thread sleeps on its doorbell: no peer rings it) */
        return;
    }
    t->caller_polls = polling;
    if (asleep) {
        nicoll_shm_sleeping(t->shm, !polling);
        if (!polling) { /* a last look: what came after the caller's last poll rang no bell */
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
            (void) nicoll_transport_poll(t);
        }
    }
}

/* Where the node has a spare core, the processors the thread (and the waker) run on, away from
 * its process's computation when the process is bound: a hardware thread of the process's core
 * that the process does not use, or else the node's processors outside the process's set.
 * Without a spare core, or in an unbound process, none: the threads stay where their process
 * is, taking time only from the process they serve. Chosen once, before either is bound (the
 * process's binding then includes theirs). */
static hwloc_bitmap_t thread_set;
static pthread_once_t thread_set_once = PTHREAD_ONCE_INIT;

static void choose_thread_set(void)
{
    hwloc_topology_t topology = opal_hwloc_topology;
    if (NULL == topology || !nicoll_spare_core()) {
        return;
    }
    hwloc_bitmap_t mine = hwloc_bitmap_alloc(), set = hwloc_bitmap_alloc();
    hwloc_const_cpuset_t all = hwloc_topology_get_allowed_cpuset(topology);
    if (NULL != mine && NULL != set &&
        0 == hwloc_get_cpubind(topology, mine, HWLOC_CPUBIND_PROCESS) &&
        !hwloc_bitmap_isincluded(all, mine)) {
        hwloc_obj_t core =
            hwloc_get_next_obj_covering_cpuset_by_type(topology, mine, HWLOC_OBJ_CORE, NULL);
        if (NULL != core && hwloc_bitmap_isincluded(mine, core->cpuset)) {
            hwloc_bitmap_andnot(set, core->cpuset, mine);
        }
        if (hwloc_bitmap_iszero(set)) {
            hwloc_bitmap_andnot(set, all, mine);
        }
        if (!hwloc_bitmap_iszero(set)) {
            char where[64] = "";
            hwloc_bitmap_list_snprintf(where, sizeof(where), set);
            NICOLL_VERBOSE(10, "progress thread bound to processors %s", where);
            thread_set = set;
            set = NULL;
        }
    }
    hwloc_bitmap_free(mine);
    hwloc_bitmap_free(set);
}

static void bind_thread(void)
{
    pthread_once(&thread_set_once, choose_thread_set);
    if (NULL != thread_set) {
        (void) hwloc_set_cpubind(opal_hwloc_topology, thread_set, HWLOC_CPUBIND_THREAD);
    }
}

/* Sleeps until a futex of `w` no longer holds its value (the first private, the others shared),
 * or `us` microseconds passed when not 0: futex_waitv, or nanosleep where the kernel lacks it
 * (before Linux 5.16). */
static void sleep_on(const struct futex_waitv *w, int n, long us)
{
    struct timespec at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    at.tv_nsec += 1000 * us;
    at.tv_sec += at.tv_nsec / 1000000000 + (us > 0 ? 0 : 3600);
    at.tv_nsec %= 1000000000;
    if (syscall(SYS_futex_waitv, w, n, 0, &at, CLOCK_MONOTONIC) < 0 && ENOSYS == errno) {
        const struct timespec step = {0, 1000 * (us > 0 && us < 50 ? us : 50)};
        nanosleep(&step, NULL);
    }
}

/* One round: every watched transport polled (packets of collectives not posted yet included),
 * then the nonblocking collectives the thread may progress; whether one is still in progress. */
static bool advance(void)
{
    nicoll_requests_post_deferred(); /* before the polls: a peer's packet then finds it posted */
    for (int i = 0; i < watched_count; ++i) {
        (void) nicoll_transport_poll(watched[i]); /* (an error is the next collective's) */
    }
    return nicoll_requests_advance();
}

/* Says on every watched transport the caller does not poll itself that the thread sleeps. */
static void say_asleep(bool sleeping)
{
    asleep = sleeping;
    for (int i = 0; i < watched_count; ++i) {
        if (NULL != watched[i]->shm) {
            nicoll_shm_sleeping(watched[i]->shm, sleeping && !watched[i]->caller_polls);
        }
    }
}

/* The waker: each time the thread armed UCX's worker, it sleeps until the worker's fd signals,
 * then wakes the thread. (It only polls the fd: the worker itself is the thread's and the
 * caller's, in turns under the lock.) */
static void *wake_on_ucx(void *arg)
{
    (void) arg;
    bind_thread();
    struct pollfd fds[2] = {{.fd = nicoll_ucx_efd(), .events = POLLIN},
                            {.fd = waker_stop, .events = POLLIN}};
    uint32_t seen = 0;
    for (;;) {
        uint32_t now;
        while ((now = __atomic_load_n(&armed, __ATOMIC_ACQUIRE)) == seen) {
            syscall(SYS_futex, &armed, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
        }
        seen = now;
        while (poll(fds, 2, -1) < 0 && EINTR == errno) {
        }
        if (0 != fds[1].revents) {
            return NULL;
        }
        /* (as the doorbells are not rung while the caller polls: its packets need not wake the
         * thread; the seq_cst pair orders against nicoll_progress_caller_polls) */
        __atomic_store_n(&ucx_held, true, __ATOMIC_SEQ_CST);
        if (0 == __atomic_load_n(&ucx_callers, __ATOMIC_SEQ_CST) &&
            __atomic_exchange_n(&ucx_held, false, __ATOMIC_SEQ_CST)) {
            futex_bump(&ucx_signals);
        }
    }
}

/* The progress thread: rounds while packets move; then it says on its doorbells that it sleeps,
 * takes a last look, arms UCX's worker, and sleeps until a peer rings, UCX signals, the caller
 * posts, or, while it waits for a packet that wakes it by none of these, a step of time passed. */
static void *run(void *arg)
{
    (void) arg;
    bind_thread();
    if (!nicoll_spare_core()) { /* its delayed posts to the microsecond, not the default 50 */
        (void) prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
    }
    struct futex_waitv w[NICOLL_PROGRESS_BELLS + 2];
    unsigned idle = 0, step_us = 1, unarmed_rounds = 0;
    pthread_mutex_lock(&lock);
    while (!stopping) {
        const uint32_t posted = __atomic_load_n(&posts, __ATOMIC_ACQUIRE);
        unsigned long long moved = nicoll_packets_moved();
        bool pending = advance();
        idle = nicoll_packets_moved() != moved ? 0 : idle + 1;
        step_us = 0 == idle ? 1 : step_us;
        const bool caller_waits = __atomic_load_n(&waiting, __ATOMIC_RELAXED) > 0;
        /* A caller waits for the lock: at normal priority the thread yields it its core; at
         * real-time priority a yield would not, so once a round moved nothing it sleeps and
         * leaves the polling to the caller. */
        if (pending && idle < NICOLL_PROGRESS_SPIN &&
            !(nicoll_progress_realtime && caller_waits && idle > 0)) {
            pthread_mutex_unlock(&lock);
            if (caller_waits) {
                sched_yield(); /* the caller's turn */
            }
            pthread_mutex_lock(&lock);
            continue;
        }
        int n = 0;
        w[n++] = (struct futex_waitv) {.val = posted, .uaddr = (uintptr_t) &posts,
                                       .flags = FUTEX_32 | FUTEX_PRIVATE_FLAG};
        for (int i = 0; i < watched_count; ++i) {
            if (NULL != watched[i]->shm) {
                uint32_t *bell = nicoll_shm_bell(watched[i]->shm);
                w[n++] = (struct futex_waitv) {.val = __atomic_load_n(bell, __ATOMIC_ACQUIRE),
                                               .uaddr = (uintptr_t) bell, .flags = FUTEX_32};
            }
        }
        say_asleep(true);
        __atomic_thread_fence(__ATOMIC_SEQ_CST); /* said before the last look */
        moved = nicoll_packets_moved();
        pending = advance();
        if (nicoll_packets_moved() != moved) {
            say_asleep(false);
            idle = 0;
            continue;
        }
        /* UCX's worker armed, the waker polls its fd from now on. Where events keep it from
         * being armed, the thread looks once more, then sleeps a step at a time. */
        bool unarmed = false;
        if (watched_ucx > 0) {
            const uint32_t signals = __atomic_load_n(&ucx_signals, __ATOMIC_ACQUIRE);
            unarmed = !nicoll_ucx_arm();
            if (unarmed && 0 == unarmed_rounds++) {
                say_asleep(false);
                continue;
            }
            unarmed_rounds = 0;
            if (!unarmed) {
                w[n++] = (struct futex_waitv) {.val = signals, .uaddr = (uintptr_t) &ucx_signals,
                                               .flags = FUTEX_32 | FUTEX_PRIVATE_FLAG};
                futex_bump(&armed);
            }
        }
        const bool stepping = unbelled > 0 || unarmed || (pending && !nicoll_requests_rung());
        pthread_mutex_unlock(&lock);
        sleep_on(w, n, stepping ? step_us : pending ? NICOLL_PROGRESS_SAFETY_US : 0);
        if (stepping) {
            step_us = step_us < NICOLL_PROGRESS_STEP_US ? 2 * step_us : step_us;
        }
        pthread_mutex_lock(&lock);
        if (!nicoll_spare_core() && nicoll_requests_delayed()) {
            pthread_mutex_unlock(&lock); /* the caller leaves its call meanwhile */
            const struct timespec delay = {0, 1000L * NICOLL_PROGRESS_POST_DELAY_US};
            nanosleep(&delay, NULL);
            pthread_mutex_lock(&lock);
        }
        say_asleep(false);
        idle = 0;
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

bool nicoll_progress_runs(void)
{
    return start_thread();
}

void nicoll_progress_posted(bool wake)
{
    if (start_thread() && (wake || unbelled > 0)) {
        post_unseen = true;
    }
}

void nicoll_progress_close(void)
{
    (void) processes_on_machine(); /* (opened, never initialized: ompi_info) */
    if (!running) {
        return;
    }
    pthread_mutex_lock(&lock);
    stopping = true;
    pthread_mutex_unlock(&lock);
    futex_bump(&posts);
    pthread_join(thread, NULL);
    if (waker_running) {
        const uint64_t one = 1;
        (void) !write(waker_stop, &one, sizeof(one));
        futex_bump(&armed);
        pthread_join(waker, NULL);
        close(waker_stop);
        waker_running = false;
    }
    running = stopping = false;
}
