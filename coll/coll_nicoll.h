/*
 * nicoll: the Open MPI collectives component that runs collectives on the nicsim engine.
 *
 * This folder is glue only: registration and MCA variables, comm_query/enable, the collective
 * entry points (datatypes in and out of the engine's flat buffers, fallback), nonblocking
 * requests and their progress, and the transport that carries the engine's packets over Open
 * MPI's PML. The protocols live in the engine, reached only through nicsim/include/nicsim/nicsim.h.
 */
#ifndef MCA_COLL_NICOLL_H
#define MCA_COLL_NICOLL_H

#include "ompi_config.h"

#include <stdint.h>

#include "mpi.h"
#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/coll/coll.h"
#include "ompi/request/request.h"
#include "opal/util/output.h"

#include "nicsim/nicsim.h"
#include "nicoll_tuning.h"

BEGIN_C_DECLS

/*
 * The engine's packets travel on the user's communicator with PML tags from this range. Tags
 * below zero are never matched by MPI_ANY_TAG, so applications cannot intercept them, and Open MPI
 * 4.1 leaves -2..-6 unused: MPI_ANY_TAG is -1, coll/base and libnbc start at -10, and the
 * communicator code uses -31078..-31080. nicoll uses -2 (packets) and -3 (payloads sent
 * apart from their headers) and keeps -4..-6 for later use.
 */
#define NICOLL_TAG_FIRST (-2)
#define NICOLL_TAG_LAST (-6)
#define NICOLL_TAG_PACKET NICOLL_TAG_FIRST
#define NICOLL_TAG_PAYLOAD (-3)

/* Payloads up to this size travel inline, in one PML message with their header, copied through
 * the transport's slots (within vader's 4 KiB eager limit with the PML's own header); larger ones
 * go as a second message straight from the collective's buffer into the receiver's (see
 * coll_nicoll_transport.c). */
#define NICOLL_INLINE_BYTES 4000

/* Marks the functions every collective runs through, per call or per packet. GCC places them
 * together (.text.hot), so that a call's code spans a few pages and spreads over the cache's sets
 * instead of lying scattered over the library (docs/measurements.md, Small messages on 2 ranks).
 * The engine's are marked NICSIM_HOT_PATH (nicsim/core/hot.h). */
#define NICOLL_HOT_PATH __attribute__((hot))

/* The collectives nicoll provides, in the order of the stats table. */
typedef enum nicoll_coll {
    NICOLL_BARRIER,
    NICOLL_BCAST,
    NICOLL_ALLGATHER,
    NICOLL_IBARRIER,
    NICOLL_IBCAST,
    NICOLL_IALLGATHER,
    NICOLL_COLLS
} nicoll_coll_t;

/* The most algorithms an engine table has (nicsim_algorithm_count). */
#define NICOLL_MAX_ALGORITHMS 8

/* Counters exported as MPI_T performance variables (coll_nicoll_<name>) and printed at
 * MPI_Finalize with coll_nicoll_stats. */
typedef struct nicoll_coll_stats {
    unsigned long long calls;     /* completed through the engine */
    unsigned long long bytes;     /* this rank's share: the message, or the gathered result */
    unsigned long long fallbacks; /* handed to the previous component */
} nicoll_coll_stats_t;

typedef struct nicoll_stats {
    nicoll_coll_stats_t coll[NICOLL_COLLS];
    unsigned long long packets_sent;      /* engine packets handed to the transport */
    unsigned long long packets_received;  /* engine packets taken from the transport */
    unsigned long long packets_forwarded; /* broadcast packets passed on as they arrived */
    unsigned long long credit_stalls;     /* packets that waited for a flow-control credit */
    unsigned long long offloaded; /* nonblocking collectives over with no MPI call after their
                                   * start (coll_nicoll_offloaded) */
    unsigned long long streamed;  /* payloads staged in shared memory with streaming stores */
    unsigned long long read_in_place; /* payloads read from a peer's memory (process_vm_readv) */
    unsigned long long in_place_reads; /* ... in that many reads: a message's packets together */
    /* calls (blocking and nonblocking) posted with each algorithm, by nicsim_collective_t and
     * algorithm index: which algorithm the tuning decisions made run */
    unsigned long long algorithm[3][NICOLL_MAX_ALGORITHMS];
} nicoll_stats_t;

/* "auto" in an algorithm or number variable: the engine's model-based choice. */
#define NICOLL_AUTO (-1)

typedef struct nicoll_component {
    mca_coll_base_component_2_0_0_t super;

    /* MCA variables (declared once, in coll_nicoll_component.c, nicoll_params[]) */
    int priority;
    int verbose;
    int stats_level; /* coll_nicoll_stats: 0 none, 1 rank 0 of MPI_COMM_WORLD, 2 every rank */
    char *bcast_algorithm_name;
    char *bcast_k_name;
    char *allgather_algorithm_name;
    char *barrier_algorithm_name;
    char *packet_size_name;
    char *credits_name;
    char *transport_name;
    char *progress_name;
    char *progress_priority_name;
    char *shm_limit_name;
    char *tuning_file; /* coll_nicoll_tuning_file: "" for the embedded default */
    char *fault;       /* coll_nicoll_fault: a step to fail, for tests */

    /* derived from them: an engine table index, a number, or NICOLL_AUTO */
    int bcast_algorithm;
    int bcast_k;
    int allgather_algorithm;
    int barrier_algorithm;
    long packet_size;
    int credits;
    int transport; /* NICOLL_TRANSPORT_*, or NICOLL_AUTO */
    int progress;  /* NICOLL_PROGRESS_*, or NICOLL_AUTO */
    int progress_priority; /* NICOLL_PRIORITY_*, or NICOLL_AUTO */
    int shm_limit; /* MiB of shared memory for nicoll's segments on a node, or NICOLL_AUTO */
    int fault_site;            /* a nicoll_fault_site_t, or -1 for none */
    unsigned long fault_nth;   /* which pass through it fails, from 1 */
    int bcast_kbinomial; /* the kbinomial tree's index: auto's broadcast */
    int allgather_ab;    /* the all-to-all broadcast's index: auto's multi-packet allgather */

    const struct nicoll_tuning *tuning; /* the tuning file's table, or the embedded default */

    int output; /* opal_output stream at `verbose` */
    nicoll_stats_t stats;
} nicoll_component_t;

OMPI_MODULE_DECLSPEC extern nicoll_component_t mca_coll_nicoll_component;

/* coll_nicoll_transport: which fabrics carry a communicator's packets. */
#define NICOLL_TRANSPORT_PML 0 /* Open MPI's point-to-point layer, to every peer */
#define NICOLL_TRANSPORT_SHM 1 /* shared memory to the peers of this node, the PML to the rest */
#define NICOLL_TRANSPORT_UCX 2 /* UCX active messages to every peer */
/* Their names as the variable takes them, indexed by NICOLL_TRANSPORT_*, then NULL. */
extern const char *const nicoll_transport_names[];
/* (auto: shared memory inside a node, UCX between nodes, the PML where neither works) */

struct nicoll_transport;
struct nicoll_module;

/* coll_nicoll_progress: who moves the packets of nonblocking collectives
 * (coll_nicoll_progress.c). */
#define NICOLL_PROGRESS_CALLER 0 /* the caller, in its MPI calls */
#define NICOLL_PROGRESS_THREAD 1 /* also a progress thread of the process */
/* (auto: the thread where the machine has more cores than the job has processes on it) */

/* coll_nicoll_progress_priority: how the kernel schedules the progress thread. */
#define NICOLL_PRIORITY_NORMAL 0   /* as the process's other threads */
#define NICOLL_PRIORITY_REALTIME 1 /* SCHED_FIFO at the lowest real-time priority */
/* (auto: real-time where the thread shares its process's core and may be raised) */

/* Whether a progress thread may run: then collective state is touched only under one lock, which
 * nicoll_lock() takes. nicoll's progress callback waits for it, except in a thread that holds it
 * (a communicator's release waits for its PML requests under it): there it does nothing. Set
 * once, at init_query, before any collective. */
extern bool nicoll_locking;
void nicoll_lock_now(void);
bool nicoll_lock_unless_mine(void);
void nicoll_unlock_now(void);
static inline void nicoll_lock(void)
{
    if (nicoll_locking) {
        nicoll_lock_now();
    }
}
static inline void nicoll_unlock(void)
{
    if (nicoll_locking) {
        nicoll_unlock_now();
    }
}
/* This machine's cores and the job's processes that share them (set at init_query). */
extern int nicoll_node_cores, nicoll_node_ranks;
/* At component open, before MPI_Init's exchange: counts this process among the job's on this
 * machine (coll_nicoll_progress.c). */
void nicoll_progress_count_in(void);
/* Whether every process of the job on this machine has a core of its own. */
static inline bool nicoll_core_each(void)
{
    return nicoll_node_cores >= nicoll_node_ranks;
}
/* Whether the machine has a core more than the job has processes there: one for a progress
 * thread. */
static inline bool nicoll_spare_core(void)
{
    return nicoll_node_cores > nicoll_node_ranks;
}
/* Resolves coll_nicoll_progress (at init_query). */
void nicoll_progress_open(void);
/* Whether the progress thread runs (or is to run) at real-time priority, so that woken it takes
 * its core from the computation at once: set at init_query from coll_nicoll_progress_priority,
 * cleared where the kernel refuses it as the thread starts (under the lock). */
extern bool nicoll_progress_realtime;
/* A nonblocking collective the thread may progress was posted, or handed to the thread to post
 * (under the lock): the thread starts, and is woken once the lock is let go where `wake` (it is
 * to post the collective, or the collective's packets may come without a doorbell). */
void nicoll_progress_posted(bool wake);
/* Under the lock: whether the thread runs (started here; false where it could not start). */
bool nicoll_progress_runs(void);
/* Under the lock: the thread polls (or no longer polls) a transport for packets that come before
 * their collective is posted, and sleeps on its doorbell or UCX's event: one set up, with
 * shared-memory or UCX peers and none reached through the PML. */
void nicoll_progress_watch(struct nicoll_transport *t, bool watch);
/* Under the lock, in thread mode: the caller polls the transport itself in a blocking collective
 * (or no longer): meanwhile its packets need not wake the thread. */
void nicoll_progress_caller_polls(struct nicoll_transport *t, bool polling);
/* Whether UCX's packets wake the thread (the worker's event fd, and the waker that polls it). */
bool nicoll_progress_ucx_signals(void);
/* Stops the thread (component close). */
void nicoll_progress_close(void);

/* One way engine packets travel to a peer. A communicator's transport uses one per peer
 * (nicoll_transport_t.via): shared-memory rings inside a node, UCX between nodes, the PML where
 * neither serves. */
typedef struct nicoll_fabric {
    const char *name;
    /* Takes one packet for `dst`, as nicsim_transport_t.send does (NICSIM_ERR_AGAIN: no room
     * now). */
    nicsim_status_t (*send)(struct nicoll_transport *t, int dst, const void *header,
                            const void *payload, size_t payload_bytes);
    /* Hands every packet that arrived to the engine, counting each in t->events. */
    nicsim_status_t (*poll)(struct nicoll_transport *t);
    /* Whether every payload sent in place from a collective's buffer has been read. */
    bool (*sent)(struct nicoll_transport *t);
    /* Whether no payload is still being written where the engine placed it (a fetch or a
     * receive started, which poll() hands to the engine once in). NULL where a payload is in
     * once poll() returns. */
    bool (*landed)(struct nicoll_transport *t);
} nicoll_fabric_t;

extern const nicoll_fabric_t nicoll_fabric_pml; /* coll_nicoll_transport.c */
extern const nicoll_fabric_t nicoll_fabric_shm; /* coll_nicoll_shm.c */
extern const nicoll_fabric_t nicoll_fabric_ucx; /* coll_nicoll_ucx.c */

/* The shared-memory fabric's segment of this node (coll_nicoll_shm.c). */
typedef struct nicoll_shm nicoll_shm_t;
/* Collective over the module's communicator, at its first nicoll collective: this node's
 * segment, or NULL when this rank has no peer on its node or when no node uses shared memory
 * (every rank alike). */
nicoll_shm_t *nicoll_shm_setup(struct nicoll_module *m);
void nicoll_shm_fini(nicoll_shm_t *s);
/* Maps the shared memory `name` of `bytes`, made (and allocated) by whoever comes first: for
 * the few bytes every process of a job on the machine finds by name. NULL on failure, with
 * errno. */
void *nicoll_shm_map(const char *name, size_t bytes);
/* Whether communicator rank `rank` is reached through `s` (NULL reaches no one). */
bool nicoll_shm_reaches(const nicoll_shm_t *s, int rank);
/* Says on this rank's doorbell whether its progress thread sleeps, so that its peers ring it
 * after their packets; and the futex they ring. */
void nicoll_shm_sleeping(nicoll_shm_t *s, bool sleeping);
uint32_t *nicoll_shm_bell(nicoll_shm_t *s);

/* The UCX fabric's endpoints of one communicator (coll_nicoll_ucx.c). */
typedef struct nicoll_ucx nicoll_ucx_t;
/* Collective over the module's communicator: endpoints to the peers `reach` marks (by rank;
 * NULL counts as this rank's failure), or NULL on every rank when a rank cannot use UCX (said
 * once, by rank 0) or was built without it. */
nicoll_ucx_t *nicoll_ucx_setup(struct nicoll_module *m, const bool *reach);
void nicoll_ucx_fini(nicoll_ucx_t *u);
bool nicoll_ucx_reaches(const nicoll_ucx_t *u, int rank);
/* The process's UCX worker's event fd (thread mode), which signals, once the worker is armed,
 * when a packet or a fetched payload arrives or a send completes; -1 when there is none. */
int nicoll_ucx_efd(void);
/* Arms the worker: true when its fd will signal the next event, false when there were events
 * still to take (poll the transports again). */
bool nicoll_ucx_arm(void);
/* Ends UCX in this process, once every communicator's fabric is gone (component close). */
void nicoll_ucx_close(void);
/* One turn of the process's UCX worker, if it has one: packets of freed communicators are
 * dropped. */
void nicoll_ucx_progress(void);

/* The engine group of one communicator and the transport under it: a fabric per peer. */
typedef struct nicoll_transport {
    struct ompi_communicator_t *comm;
    nicsim_group_t *group;
    nicsim_status_t error;  /* set once the group cannot go on; every later collective fails */
    size_t packet_size;     /* payload bytes per packet */
    int credits;            /* the flow-control window per peer */
    bool starting;          /* gathering locality for the group: collectives go to the previous
                             * component (its allgather may call our bcast) */
    const nicoll_fabric_t **via;        /* [size] the fabric each peer is reached through */
    const nicoll_fabric_t *fabrics[3];  /* the fabrics in use, polled in this order */
    int fabric_count;
    nicoll_shm_t *shm;      /* this node's segment, or NULL */
    nicoll_ucx_t *ucx;      /* the UCX endpoints, or NULL */
    /* The PML fabric: */
    int pml_peers;          /* peers reached through it */
    size_t inline_bytes;    /* payloads up to this size travel inline */
    size_t slot_bytes;      /* header + inline_bytes */
    int recv_slots;         /* credits x pml_peers: a buffer for every packet a peer may send */
    int send_slots;
    unsigned char *buffers; /* recv_slots receive buffers, then send_slots send buffers */
    bool receiving;         /* receives posted (lazily, at the first collective) */
    int recv_head;          /* oldest posted receive: packets are taken in posting order */
    ompi_request_t **recv;  /* [recv_slots], NULL: not posted */
    ompi_request_t **send;  /* [send_slots], NULL: free */
    /* payloads sent apart from their headers, straight from the collectives' buffers */
    ompi_request_t **payload_sends;
    int payload_sends_used, payload_sends_size;
    /* the payload of the packet at the head of the ring, being received apart */
    ompi_request_t *payload_recv;
    void *payload_at;      /* where: the collective's buffer, or payload_copy */
    void *payload_copy;    /* memory of our own when the engine had no place for it */
    size_t payload_bytes;
    int payload_src;       /* its sender */
    nicsim_group_stats_t seen; /* the group's counters when last added to the component's */
    unsigned long events;      /* packets handed to the engine or offered again so far: a
                                * collective's state changes only when this does */
    bool refused;              /* the transport answered NICSIM_ERR_AGAIN: the engine holds
                                * packets to offer again (nicsim_group_progress) */
    nicsim_request_t *retired; /* the last blocking collective's, released while the next waits */
    bool caller_polls;         /* in a blocking collective (nicoll_progress_caller_polls) */
    bool watched;              /* the thread sleeps on its doorbell (nicoll_progress_watch) */
    bool unbelled;             /* to be watched past the thread's doorbells: it sleeps in steps */
    int deferred;              /* nonblocking collectives handed to the progress thread and not
                                * posted yet (nicoll_post) */
    bool set_up;               /* the first collective set the communicator up (or failed to) */
    bool declined;             /* the ranks' settings differ, or a rank failed to set up: the
                                * previous component serves every collective */
    bool settled;              /* a collective failed on it: Open MPI's progress drains it */
    struct nicoll_transport *next_settled;
    /* Closing over the PML once the communicator is freed (nicoll_transport_freed): */
    bool closing;              /* in the closing list */
    bool close_sent;           /* our end marker left for every PML peer */
    int peers_closed;          /* PML peers whose end marker came */
    ompi_request_t **close_sends; /* [pml_peers] the end markers */
    struct nicoll_module *next_closing;
} nicoll_transport_t;

/* On failure the transport is left with `error` set, so the communicator's collectives fail
 * with that error on this rank instead of running elsewhere while its peers run nicoll. The
 * engine group is made by nicoll_transport_ready(), at the first collective. */
nicsim_status_t nicoll_transport_init(nicoll_transport_t *t, struct ompi_communicator_t *comm);
void nicoll_transport_fini(nicoll_transport_t *t);
/* Hands arrived packets to the engine and offers it the transport again; NICSIM_OK or the
 * error that broke the group (also left in t->error). */
nicsim_status_t nicoll_transport_poll(nicoll_transport_t *t);
/* Whether every payload sent in place has left: only then may a collective whose buffer it lies
 * in complete. */
bool nicoll_transport_sent(nicoll_transport_t *t);
/* A collective failed: whether no payload is still written into a collective's buffer nor read
 * from one (nicoll_fabric_t.landed and sent), which its sender or receiver moves; only then may
 * the collective return its buffer to the caller (a peer not told of the failure yet would take
 * the caller's next bytes as the collective's). Drains what came, if not; and from the first
 * call until the communicator is destroyed (BUGS), so does Open MPI's progress (every MPI call
 * that waits): a rank whose collective failed need not poll the communicator again, while its
 * peers may wait for it to take their payloads. */
bool nicoll_transport_settled(nicoll_transport_t *t);
/* MPI_Comm_free came. Over the PML the transport's posted receives hold the communicator, so it
 * would live until MPI_Finalize: the ranks tell each other, in the background, that they will
 * send no more, and each lets the transport go once all its PML peers have (under the lock). */
void nicoll_transport_freed(struct nicoll_module *m);
/* Ends the draining and closing, once every communicator is gone (component close). */
void nicoll_transport_close(void);
/* Adds what the group counted since the last call to the component's counters. */
void nicoll_transport_count(nicoll_transport_t *t);

/* How a collective runs, decided by tuning (coll_nicoll_tuning.c). */
typedef struct nicoll_decision {
    int algorithm;      /* engine table index */
    int k;              /* kbinomial fanout, 0: the best for the packet count (Theorem 3) */
    size_t packet_size; /* payload bytes per packet */
} nicoll_decision_t;

/* A collective's last decision and what it was made for. */
typedef struct nicoll_decided {
    bool valid;
    size_t bytes;
    int nodes; /* 0 before the communicator's locality is gathered */
    nicoll_tuning_fabric_t fabric;
    nicoll_decision_t decision;
} nicoll_decided_t;

typedef struct nicoll_module {
    mca_coll_base_module_t super;
    nicoll_transport_t transport;

    /* The module this one replaced, per collective, kept for fallback: a call nicoll declines
     * runs there. Every rank must decline the same calls, so only decisions all ranks make alike
     * (arguments, MCA values) may use it. */
    mca_coll_base_module_bcast_fn_t previous_bcast;
    mca_coll_base_module_t *previous_bcast_module;
    mca_coll_base_module_allgather_fn_t previous_allgather;
    mca_coll_base_module_t *previous_allgather_module;
    mca_coll_base_module_barrier_fn_t previous_barrier;
    mca_coll_base_module_t *previous_barrier_module;
    mca_coll_base_module_ibcast_fn_t previous_ibcast;
    mca_coll_base_module_t *previous_ibcast_module;
    mca_coll_base_module_iallgather_fn_t previous_iallgather;
    mca_coll_base_module_t *previous_iallgather_module;
    mca_coll_base_module_ibarrier_fn_t previous_ibarrier;
    mca_coll_base_module_t *previous_ibarrier_module;
    /* for agreeing at set-up only: nicoll provides no allreduce */
    mca_coll_base_module_allreduce_fn_t previous_allreduce;
    mca_coll_base_module_t *previous_allreduce_module;

    /* The communicator's nodes and the most of its ranks on one node, for tuning rules with
     * nodes or ppn; 0 until the locality is gathered (coll_nicoll_locality.c). And what carries
     * its packets, for rules with a fabric: known with its fabrics (coll_nicoll_transport.c). */
    int nodes, ppn;
    nicoll_tuning_fabric_t fabric;
    /* Per collective, the last decision: an application repeats its calls, and the same inputs
     * always decide alike. */
    nicoll_decided_t decided[NICOLL_COLLS];
    /* The failures nicoll_error() reported here, a bit per status: each is said once. */
    unsigned errors_said;
} nicoll_module_t;

OBJ_CLASS_DECLARATION(nicoll_module_t);

/* Called by every collective first: makes the engine group at the communicator's first nicoll
 * collective (gathering every rank's locality for the trees' order, coll_nicoll_locality.c).
 * NICSIM_OK, or the error that keeps the communicator from running nicoll collectives. The set-up
 * itself (nicoll_transport_set_up, once) stays out of the later calls' path. */
nicsim_status_t nicoll_transport_set_up(nicoll_module_t *m);
static inline nicsim_status_t nicoll_transport_ready(nicoll_module_t *m)
{
    return m->transport.set_up ? m->transport.error : nicoll_transport_set_up(m);
}
/* The settings every rank of a communicator must share, as this rank resolved them
 * (coll_nicoll_settings.c): numbers, table indexes or NICOLL_AUTO, and the tuning table's
 * digest. */
typedef struct nicoll_settings {
    int64_t packet_size, credits, bcast_algorithm, bcast_k, allgather_algorithm,
        barrier_algorithm, transport, tuning, thread_multiple;
    int64_t table_source; /* a nicoll_table_source_t: not compared, it names a differing table */
} nicoll_settings_t;
void nicoll_settings_mine(const nicoll_transport_t *t, nicoll_settings_t *s);
/* Whether every rank's settings (`of`, one per rank, `stride` bytes apart) are alike, and allow
 * nicoll (not MPI_THREAD_MULTIPLE); where they differ, rank 0 names the first that does. Every
 * rank gets the same answer from the same array. */
bool nicoll_settings_agree(const nicoll_module_t *m, const nicoll_settings_t *of, size_t stride);

/* The exchange at a communicator's setup, with the previous component's allgather (a collective
 * call): writes the ranks in locality order and each rank's node (numbered from 0 in that
 * order), the same on every rank, and whether every rank's settings agree. `ok`: this rank is
 * fit to take part; where one rank is not (or cannot allocate the exchange's buffer), every
 * rank returns OMPI_ERR_OUT_OF_RESOURCE before the allgather. */
int nicoll_setup_exchange(nicoll_module_t *m, bool ok, int *order, int *node_of, bool *agree);
/* Whether the communicator's collectives go to the previous component: its ranks' settings
 * differ, or one could not set up. Sets the communicator up at its first collective. */
bool nicoll_declined(nicoll_module_t *m);
/* Whether `ok` holds on every rank (the previous component's allreduce, collective): a local
 * failure during set-up reaches every rank, so all take the same path. False where the
 * communicator has no previous allreduce or it fails. */
bool nicoll_all_ok(nicoll_module_t *m, bool ok);
/* The least `value` of every rank of m's communicator (an allreduce); 0 if that fails. */
int nicoll_all_min(nicoll_module_t *m, int value);
/* The steps coll_nicoll_fault can fail, for tests (their names: coll_nicoll_component.c). */
typedef enum nicoll_fault_site {
    NICOLL_FAULT_TRANSPORT,
    NICOLL_FAULT_SETUP,
    NICOLL_FAULT_GROUP,
    NICOLL_FAULT_SHM_MAP,
    NICOLL_FAULT_SHM_PROBE,
    NICOLL_FAULT_UCX,
    NICOLL_FAULT_PACK,
    NICOLL_FAULT_SEND,
    NICOLL_FAULT_FETCH,
    NICOLL_FAULT_SITES
} nicoll_fault_site_t;

/* For tests (coll_nicoll_fault): whether this pass through step `site` is to fail. (Inline: every
 * packet sent passes here, and asks only whether the fault is at this step.) */
bool nicoll_fault_at(nicoll_fault_site_t site);
static inline bool nicoll_fault(nicoll_fault_site_t site)
{
    return __builtin_expect(mca_coll_nicoll_component.fault_site == (int) site, 0) &&
           nicoll_fault_at(site);
}

/* A collective's post to the engine, kept when it is handed to the progress thread. */
typedef struct nicoll_post {
    nicsim_collective_t coll;
    int algorithm, k, root; /* (k and root: a broadcast's) */
    void *buffer;           /* a broadcast's message, an allgather's result */
    size_t bytes;           /* the message's bytes, an allgather's block's */
    size_t packet_size;
    const void *own;        /* an allgather's own block, or NULL when it is in place */
} nicoll_post_t;

/*
 * One collective in flight: the engine request, and what to do with the user's buffer when it
 * completes (unpack a packed copy). Blocking calls keep it on the stack and wait; nonblocking
 * ones allocate it as an MPI request that the progress callback completes.
 */
typedef struct nicoll_request {
    ompi_request_t super;
    /* Open MPI 4.1's MPI_I* wrappers take every collective request for coll/base's nonblocking
     * request (ompi_coll_base_nbc_request_t) and, for derived datatypes, keep them alive in its
     * fields after ompi_request_t until the request completes: a callback, its data and two
     * object pointers. This is their room, zeroed as that type's constructor does. (Its header
     * cannot be included: it needs Fortran headers Debian's libopenmpi-dev does not ship.) */
    void *nbc_fields[4];
    struct nicoll_request *next; /* in the progress list while nonblocking and in flight */
    nicoll_module_t *module;
    nicoll_coll_t coll;
    size_t bytes;
    nicsim_request_t *engine;
    unsigned long asked_at;    /* the transport's events when the engine was last asked */
    nicsim_status_t engine_status; /* its answer: NICSIM_OK once complete (only payloads sent
                                    * in place may be out then), or the error that failed it */
    bool offloaded;            /* its communication was over with no MPI call after its start */
    bool deferred;             /* `post` is the progress thread's to make: not posted yet */
    bool delayed;              /* (deferred) the thread makes it NICOLL_PROGRESS_POST_DELAY_US
                                * after the call, the caller back in its computation */
    nicoll_post_t post;
    void *packed;              /* the engine's buffer when the user's is not contiguous, or NULL */
    void *unpack_to;           /* when not NULL: unpack `packed` into it on completion */
    size_t unpack_count;
    struct ompi_datatype_t *unpack_type;
} nicoll_request_t;

OBJ_CLASS_DECLARATION(nicoll_request_t);

/* Starting and finishing a collective (coll_nicoll_request.c). nicoll_start() takes the engine
 * request `engine` was posted with (NULL when nothing needs the engine) and, for a blocking call,
 * waits for it; for a nonblocking one it returns the MPI request in *request. */
int nicoll_start(nicoll_request_t *req, nicsim_status_t posted, ompi_request_t **request);
nicoll_request_t *nicoll_request_new(nicoll_module_t *m, nicoll_coll_t coll, bool blocking,
                                     nicoll_request_t *on_stack);
/* Posts the collective `p` describes for `req`: at once, or, when the progress thread may
 * progress the nonblocking collective, it is handed to the thread, which posts it in call order
 * (so the caller's call returns at once, and the first packets' copies run where the thread
 * does). NICSIM_OK or the engine's error. */
nicsim_status_t nicoll_post(nicoll_request_t *req, const nicoll_post_t *p);
/* The caller leaves a broadcast's or allgather's call, its lock let go (and the progress thread
 * woken with it): where the call's post was one the thread may make later, the time from now
 * until the caller is back says whether the next such post is the thread's (coll_nicoll_request.c,
 * caller_returned). */
void nicoll_call_returns(void);
/* Releases the request's buffers (a failed post). */
void nicoll_request_cleanup(nicoll_request_t *req);
/* Frees the transport's retired engine request, if any. */
void nicoll_release_retired(nicoll_transport_t *t);
/* Whether a nonblocking collective on the transport is in flight (under the lock). */
bool nicoll_requests_in_flight(const nicoll_transport_t *t);
/* The progress thread's round, under the lock: posts the collectives handed to it, in call
 * order; then advances every nonblocking collective it may progress, and says whether one of
 * them is still in progress. */
void nicoll_requests_post_deferred(void);
bool nicoll_requests_advance(void);
/* Under the lock: whether a post the progress thread delays is not made yet (on a core it shares;
 * nicoll_post says which, coll_nicoll_progress.c how long). */
bool nicoll_requests_delayed(void);
/* Engine packets this process has handed to its transports or taken from them. */
unsigned long long nicoll_packets_moved(void);
/* Under the lock: whether every packet the progress thread's nonblocking collectives wait for
 * rings a doorbell (not UCX's). */
bool nicoll_requests_rung(void);

/* Datatypes (coll_nicoll_datatype.c): whether (count, type) is one contiguous run of bytes,
 * where it starts, and packing to and from a flat buffer. */
bool nicoll_contiguous(const struct ompi_datatype_t *type, size_t count);
void *nicoll_data_start(const void *buf, const struct ompi_datatype_t *type);
int nicoll_pack(const void *buf, size_t count, const struct ompi_datatype_t *type, void *out,
                size_t bytes);
int nicoll_unpack(const void *in, size_t bytes, void *buf, size_t count,
                  const struct ompi_datatype_t *type);

/* Tuning (coll_nicoll_tuning.c): each choice comes from its MCA variable when that is not auto,
 * else from the tuning file's rule (coll_nicoll_tuning_file), else from the embedded default
 * table's, and "auto" there is the engine's model-based choice. */
/* Loads the tuning file once per process (at init_query); a broken one gets one warning, from
 * rank 0 of MPI_COMM_WORLD, and the embedded default is used. */
void nicoll_tuning_open(void);
void nicoll_tuning_close(void);
/* Where this process's table came from: no tuning file, the file, or a file that did not load. */
typedef enum {
    NICOLL_TABLE_EMBEDDED,
    NICOLL_TABLE_FILE,
    NICOLL_TABLE_FILE_FAILED
} nicoll_table_source_t;
nicoll_table_source_t nicoll_tuning_source(void);
/* Where the tuning file did not load: its warning ("tuning file PATH:...: REASON; using the
 * embedded default table"), once per process from a rank other than 0 of MPI_COMM_WORLD, which
 * warned at loading; its ranks then differ from those whose file loaded. */
void nicoll_tuning_tell_failure(void);
void nicoll_decide(nicoll_module_t *m, nicoll_coll_t coll, size_t bytes, nicoll_decision_t *d);
/* The tuning table's transport rule for a communicator size: packet size and credits, 0: auto. */
void nicoll_decide_transport(int comm_size, size_t *packet_size, int *credits);

/* The engine's packet size and credits on a communicator of `comm_size` ranks: the MCA values,
 * or auto's choice. */
size_t nicoll_packet_size(int comm_size);
int nicoll_credits(int comm_size);

mca_coll_base_module_t *nicoll_comm_query(struct ompi_communicator_t *comm, int *priority);

int nicoll_barrier(struct ompi_communicator_t *comm, mca_coll_base_module_t *module);
int nicoll_bcast(void *buf, int count, struct ompi_datatype_t *type, int root,
                 struct ompi_communicator_t *comm, mca_coll_base_module_t *module);
int nicoll_allgather(const void *sbuf, int scount, struct ompi_datatype_t *stype, void *rbuf,
                     int rcount, struct ompi_datatype_t *rtype, struct ompi_communicator_t *comm,
                     mca_coll_base_module_t *module);
int nicoll_ibarrier(struct ompi_communicator_t *comm, ompi_request_t **request,
                    mca_coll_base_module_t *module);
int nicoll_ibcast(void *buf, int count, struct ompi_datatype_t *type, int root,
                  struct ompi_communicator_t *comm, ompi_request_t **request,
                  mca_coll_base_module_t *module);
int nicoll_iallgather(const void *sbuf, int scount, struct ompi_datatype_t *stype, void *rbuf,
                      int rcount, struct ompi_datatype_t *rtype, struct ompi_communicator_t *comm,
                      ompi_request_t **request, mca_coll_base_module_t *module);

/* Reports a failed collective in one line, the first time it fails so on this communicator (an
 * application that goes on after errors would otherwise print one per call and rank), and returns
 * the matching OMPI error code. */
int nicoll_error(nicoll_module_t *m, nicoll_coll_t coll, nicsim_status_t status);

/* A local failure `why` (an allocation, packing) came before this rank could post its next
 * collective: the collective is posted as an abort instead (nicsim_abort_post), so that every
 * other rank's copy fails too rather than wait for this rank. NICSIM_OK with *engine to wait
 * for (its outcome is `why`), or `why` when there is no group to tell. */
nicsim_status_t nicoll_abort(nicoll_module_t *m, nicsim_status_t why, nicsim_request_t **engine);
/* The same when not even a request could be allocated: the abort goes out unwaited for. */
void nicoll_abort_unwaited(nicoll_module_t *m);

extern const char *const nicoll_coll_names[NICOLL_COLLS];

#define NICOLL_VERBOSE(level, ...)                                                            \
    do {                                                                                      \
        if (mca_coll_nicoll_component.verbose >= (level)) {                                   \
            opal_output_verbose((level), mca_coll_nicoll_component.output,                    \
                                "nicoll: " __VA_ARGS__);                                      \
        }                                                                                     \
    } while (0)

/* A communicator as messages name it (before its cid): its name (MPI_Comm_set_name's, or Open
 * MPI's), or "unnamed" where it has none. */
static inline const char *nicoll_comm_name(const struct ompi_communicator_t *comm)
{
    return '\0' != comm->c_name[0] ? comm->c_name : "unnamed";
}

END_C_DECLS

#endif /* MCA_COLL_NICOLL_H */
