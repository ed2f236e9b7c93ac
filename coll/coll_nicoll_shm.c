/*
 * The shared-memory fabric: engine packets between the ranks of a communicator that run on one
 * node, through rings in one shared segment per node, with larger payloads staged in the sender's
 * part of it or read straight from the sender's buffer (cross-memory attach, process_vm_readv).
 * It is the real fabric closest to a NIC: a packet is a write into the receiver's slot and a
 * flag, no PML matching in between.
 *
 * A node's segment holds one ring per ordered pair of the communicator's ranks on that node
 * (numbered here by their place in the node, `local`), `slots` slots each. A ring has one
 * producer (its sender) and one consumer (its receiver): the sender writes a slot and then
 * publishes it by storing its sequence number in it, so the receiver, watching the slot it
 * expects next, finds the packet and its flag in one cache line (as a NIC's receive descriptor);
 * the receiver hands the packet to the engine and then frees the slot by advancing `tail`. The
 * slots hold LFC's credits (coll_nicoll_credits of them, the window; the slots are that rounded
 * up to a power of two): a sender has at most that many packets in a ring unconsumed, which it
 * learns from the receiver's tail, and a full window answers NICSIM_ERR_AGAIN, so the
 * engine keeps the packet queued until the receiver has consumed one. (The engine itself then
 * keeps no window: the ring is the window.)
 *
 * A payload over `inline_bytes` fits neither a slot nor its body. It is staged or read in place:
 * - staged: the sender copies it into its staging area (a region of the segment that only it
 *   writes, as a NIC first copies a message into its own memory) and the slot says where; the
 *   receiver copies it from there into the place the engine names (the message buffer at the
 *   packet's offset) and marks it read, which frees the space. The sender is done once it copied.
 * - read in place: the slot carries its address in the sender, and the receiver reads it with
 *   process_vm_readv, one copy as with a NIC's RDMA read. The sender's collective completes only
 *   once the receiver has moved the ring's tail past every such packet (shm_sent): then no
 *   peer reads its buffer any more.
 * Which one is the sender's choice by what each costs (nicoll_stage_way, where every process
 * has a core), stage_limit's for larger payloads (set-up says why), and in place whenever the
 * area is full or may not grow (coll_nicoll_shm_limit).
 * Each rank also has a doorbell in the segment, for its progress thread (coll_nicoll_progress.c),
 * which sleeps on it while it waits for its peers: a sender whose peer runs one rings it after
 * each packet it puts into that peer's ring, and a receiver after each slot it frees (the sender
 * may wait for room, or for a payload read in place), when the peer says it sleeps.
 * The rings and staging areas themselves, lock-free, are in coll_nicoll_ring.h.
 *
 * Set-up is collective, at the communicator's first nicoll collective: on each node the lowest
 * rank creates the segment (a file without a name), every rank learns where to open it and maps
 * it and reads a word from a peer of its node to prove that cross-memory attach is allowed, and
 * all ranks of every node agree (nicoll_all_ok) to use the segments or not, so a rank that
 * cannot allocate, map or read its peer takes every rank to the PML with it; then the creators
 * close the file, which lives on in the maps only, so nothing is left behind however the job
 * ends. A rank alone on its node takes part in the agreement and maps nothing. The agreement
 * also keeps the node's segments within coll_nicoll_shm_limit: where a segment's rings would
 * take a rank over its share (budget()), there are none. A staging area allocated as it is used
 * counts as it grows, and stops growing once half the share is used (the other half keeps room
 * for later communicators' rings, without which their packets would go through the PML): its
 * owner then reads its payloads in place. Where the kernel cannot allocate on request, whole
 * areas count at set-up, and a segment whose areas would take a rank over its share has none.
 */
#include "coll_nicoll.h"
#include "coll_nicoll_ring.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ompi/proc/proc.h"
#include "opal/mca/hwloc/base/base.h"
#include "opal/runtime/opal_progress.h"

/* A communicator's rings stay within this many bytes (allocated at set-up, so that running out of
 * memory shows then, not as a fault later): large communicators get smaller slot bodies, then
 * none, then no shared memory (from about 150 ranks on a node with 8 credits). */
#define NICOLL_SHM_MAX_BYTES (64ul << 20)
/* A rank's staging area: at most this many bytes, all ranks' together at most the second. 8 MiB
 * holds a 4 MiB block in 1 MiB packets at once, so that each of 4 oversubscribed ranks stages
 * its whole block at the start of an allgather instead of waiting, midway, to be scheduled again
 * once its readers have made room (4 MiB blocks: 3,848 against 4,579 us with 4 MiB areas, the
 * medians of 10 paired jobs, lower in 9: docs/tuning.md). */
#define NICOLL_SHM_STAGE_BYTES (8ul << 20)
#define NICOLL_SHM_STAGE_TOTAL (32ul << 20)
/* A copy of a payload the engine placed nowhere, up to this size, is kept for the next one. */
#define NICOLL_SHM_KEEP_COPY (1u << 20)

/* Payloads a receiver read from a peer's memory ahead of their packets, together with the
 * packet before them (where nicsim_group_place gave it room): `local` and `remote`, where the
 * next of them is in our memory and was in the peer's, for the packets before ring index
 * `until`. */
typedef struct nicoll_shm_ahead {
    unsigned char *local;
    uint64_t remote;
    uint64_t until;
} nicoll_shm_ahead_t;

/* A rank's doorbell: its progress thread waits on `rung` (a futex) once it said `sleeping`. */
typedef struct nicoll_shm_bell {
    uint32_t rung;
    uint32_t sleeping;
    char pad[NICOLL_SHM_LINE - 2 * sizeof(uint32_t)];
} nicoll_shm_bell_t;

struct nicoll_shm {
    unsigned char *base;
    size_t bytes;
    int rank, size, slots; /* our place in the node, the node's ranks, slots per ring */
    int *local;            /* [size] the communicator rank of each place in the node */
    int *place;            /* [communicator size] each rank's place in the node, -1 elsewhere */
    size_t body_bytes, ring_bytes, inline_bytes; /* a slot's body (0: none), a ring, inline */
    pid_t *pids;           /* [size] each process of the node, for process_vm_readv */
    uint64_t *sent_head;   /* [size] our ring to each peer: slots we published */
    uint64_t *tail_seen;   /* [size] ... and its tail when last read (read again only when the
                            * ring looks full: the line is the receiver's) */
    uint64_t *apart_until; /* [size] the ring index after our last packet whose payload the
                            * peer reads from our memory, 0 when it has read them all */
    int apart_peers;       /* peers with a non-zero apart_until */
    uint64_t *taken;       /* [size] the ring from each peer: slots we consumed */
    nicoll_shm_ahead_t *ahead; /* [size] ... and payloads read ahead from it */
    int next_peer;         /* where the next poll starts, so every ring is served in turn */
    unsigned char *stages; /* every rank's staging area, `stage_bytes` each (none when 0) */
    size_t stage_bytes;
    size_t stage_limit;    /* the largest payload we stage */
    size_t ready_bytes;    /* the segment's rings and doorbells, allocated at set-up; the
                            * staging areas are allocated as they are used (nicoll_stage_reach):
                            * a communicator set up and freed again (2 ranks, MPI_Comm_dup,
                            * MPI_Bcast, MPI_Comm_free) took 7.7 ms allocating 8 MiB, coll/tuned
                            * 6 us */
    nicoll_stage_t stage;  /* ours */
    void *copy;            /* a payload with no place in a collective yet */
    size_t copy_bytes;
    nicoll_shm_bell_t *bells; /* [size] every rank's doorbell */
    bool *may_sleep;       /* [size] whether the rank runs a progress thread, which may sleep */
    bool any_may_sleep;    /* whether any does: else no bell is ever rung */
    size_t share;          /* what the segment counts against coll_nicoll_shm_limit from set-up:
                            * what was allocated then, divided by size (our staging area, where
                            * it is lazy, counts as it grows: stage.ready) */
    bool told_refused;     /* verbose said that our staging area stopped growing */
};

/* The bytes of the segments this process maps, each divided by its ranks on the node: its share
 * of the node's shared memory for nicoll, which stays within budget() (coll_nicoll_shm_limit). */
static size_t shared_here;

/* coll_nicoll_shm_limit, or an eighth of the node's memory, divided by the job's processes on
 * the machine. */
static size_t budget(void)
{
    size_t node = (size_t) mca_coll_nicoll_component.shm_limit << 20;
    if (NICOLL_AUTO == mca_coll_nicoll_component.shm_limit) {
        hwloc_obj_t root = NULL == opal_hwloc_topology ? NULL
                                                       : hwloc_get_root_obj(opal_hwloc_topology);
        node = (NULL == root || 0 == root->total_memory ? 8ul << 30 : root->total_memory) / 8;
    }
    return node / (size_t) (nicoll_node_ranks > 1 ? nicoll_node_ranks : 1);
}

/* Whether this kernel allocates shared pages on request (MADV_POPULATE_WRITE, Linux 5.14): if so,
 * staging areas are allocated as they are used; if not, with the rest of the segment at set-up,
 * where running out of memory shows, rather than as a SIGBUS at a store later. Asked once. */
static bool allocates_on_request(void)
{
    static int answer = -1;
    if (answer < 0) {
        const size_t page = (size_t) sysconf(_SC_PAGESIZE);
        void *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        answer = MAP_FAILED != p && nicoll_populate(p, page);
        if (MAP_FAILED != p) {
            munmap(p, page);
        }
    }
    return answer;
}

/* What the ranks agree a communicator's segment holds: the lowest of their answers. */
enum { SHM_NONE = 0, SHM_OVER_LIMIT, SHM_RINGS, SHM_STAGED };

/* After a packet into `place`'s ring, or a slot of its freed: wakes its thread if it sleeps.
 * (The fence orders our ring write before the read of its flag, as the sleeper orders its flag
 * before its last look at the rings: one of the two sees the other.) */
static inline void ring_bell(const nicoll_shm_t *s, int place)
{
    if (s->any_may_sleep && s->may_sleep[place]) {
        nicoll_shm_bell_t *b = &s->bells[place];
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (__atomic_load_n(&b->sleeping, __ATOMIC_RELAXED)) {
            __atomic_add_fetch(&b->rung, 1, __ATOMIC_RELEASE);
            syscall(SYS_futex, &b->rung, FUTEX_WAKE, 1, NULL, NULL, 0);
        }
    }
}

void nicoll_shm_sleeping(nicoll_shm_t *s, bool sleeping)
{
    __atomic_store_n(&s->bells[s->rank].sleeping, sleeping, __ATOMIC_RELAXED);
}

uint32_t *nicoll_shm_bell(nicoll_shm_t *s)
{
    return &s->bells[s->rank].rung;
}

/* The ring from node rank `src` to node rank `dst` (never `src` itself: none is laid out). */
static nicoll_shm_ring_t *ring(const nicoll_shm_t *s, int src, int dst)
{
    const size_t index = (size_t) src * (size_t) (s->size - 1) + (size_t) (dst - (dst > src));
    return (nicoll_shm_ring_t *) (s->base + index * s->ring_bytes);
}


/* What every rank tells the others at set-up. */
typedef struct nicoll_shm_hello {
    char name[64];   /* where to open the segment (rank 0: /proc/PID/fd/N) */
    int64_t pid;
    uint64_t probe;  /* the address of nicoll_shm_probe_word in this process */
    int32_t ok;      /* rank 0: the segment exists */
    int32_t thread;  /* this process runs a progress thread */
} nicoll_shm_hello_t;

static const uint64_t nicoll_shm_probe_word = 0x6e69636f6c6c2131ull; /* "nicoll!1" */

/* Whether this process can read the memory of the process that said `hello`: cross-memory attach
 * may be forbidden (ptrace rules, containers), so try it. A process that could be read once can
 * be read again: the last peers read are remembered (the read pins a page, about 4 % of a 2-rank
 * communicator's set-up). */
static bool can_read(const nicoll_shm_hello_t *hello)
{
    enum { REMEMBERED = 16 };
    static struct {
        int64_t pid;
        uint64_t probe;
    } read_before[REMEMBERED];
    static unsigned next;
    for (int i = 0; i < REMEMBERED; ++i) {
        if (read_before[i].pid == hello->pid && read_before[i].probe == hello->probe) {
            return true;
        }
    }
    uint64_t word = 0;
    struct iovec local = {&word, sizeof(word)};
    struct iovec remote = {(void *) (uintptr_t) hello->probe, sizeof(word)};
    if (sizeof(word) != process_vm_readv((pid_t) hello->pid, &local, 1, &remote, 1, 0) ||
        nicoll_shm_probe_word != word) {
        return false;
    }
    read_before[next].pid = hello->pid;
    read_before[next].probe = hello->probe;
    next = (next + 1) % REMEMBERED;
    return true;
}

/* The communicator's ranks on this node, in rank order, into s->local and s->place. */
static void find_node(nicoll_shm_t *s, struct ompi_communicator_t *comm)
{
    s->size = 0;
    for (int i = 0; i < ompi_comm_size(comm); ++i) {
        struct ompi_proc_t *proc = ompi_comm_peer_lookup(comm, i);
        const bool here = i == ompi_comm_rank(comm) ||
                          (NULL != proc && OPAL_PROC_ON_LOCAL_NODE(proc->super.proc_flags));
        s->place[i] = here ? s->size : -1;
        if (here) {
            s->local[s->size++] = i;
        }
    }
    s->rank = s->place[ompi_comm_rank(comm)];
}

static void unmap(nicoll_shm_t *s)
{
    if (NULL != s->base) {
        munmap(s->base, s->bytes);
        shared_here -= s->share + s->stage.ready; /* (what our lazy area grew to) */
    }
    free(s->local);
    free(s->place);
    free(s->pids);
    free(s->sent_head);
    free(s->tail_seen);
    free(s->apart_until);
    free(s->taken);
    free(s->ahead);
    free(s->may_sleep);
    free(s->copy);
    free(s);
}

/* Sizes the new shared file `fd` to `bytes` and allocates its first `ready` (so that where memory
 * runs out it shows here, not as a SIGBUS at a store later). */
static bool make_fd(int fd, size_t bytes, size_t ready)
{
    return 0 == ftruncate(fd, (off_t) bytes) && 0 == posix_fallocate(fd, 0, (off_t) ready);
}

/* Maps `bytes` of the shared file `fd`: NULL on failure, with errno. */
static void *map_fd(int fd, size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return MAP_FAILED == p ? NULL : p;
}

void *nicoll_shm_map(const char *name, size_t bytes)
{
    int fd = shm_open(name, O_RDWR | O_CREAT, 0600);
    if (fd < 0) {
        return NULL;
    }
    void *p = make_fd(fd, bytes, bytes) ? map_fd(fd, bytes) : NULL;
    const int error = errno;
    close(fd);
    errno = error;
    return p;
}

nicoll_shm_t *nicoll_shm_setup(nicoll_module_t *m)
{
    nicoll_transport_t *t = &m->transport;
    struct ompi_communicator_t *comm = t->comm;
    const int comm_size = ompi_comm_size(comm);
    /* Every rank decides alike: the MCA value and the previous allgather are alike everywhere. */
    const int transport = mca_coll_nicoll_component.transport;
    const char *why = NICOLL_TRANSPORT_PML == transport   ? "coll_nicoll_transport is pml"
                      : NICOLL_TRANSPORT_UCX == transport ? "coll_nicoll_transport is ucx"
                      : NULL == m->previous_allgather ? "no previous allgather to set it up with"
                                                      : NULL;
    if (NULL != why) {
        NICOLL_VERBOSE(10, "communicator %s (cid %u): no shared memory: %s", nicoll_comm_name(comm),
                       (unsigned) comm->c_contextid, why);
        return NULL;
    }
    nicoll_shm_t *s = calloc(1, sizeof(*s));
    nicoll_shm_hello_t *hello = calloc((size_t) comm_size, sizeof(*hello));
    if (NULL != s) {
        s->local = calloc((size_t) comm_size, sizeof(*s->local));
        s->place = calloc((size_t) comm_size, sizeof(*s->place));
    }
    int size = 0; /* the communicator's ranks on this node */
    bool rings_fit = false;
    if (NULL != s && NULL != s->local && NULL != s->place) {
        find_node(s, comm);
        size = s->size;
    }
    if (size > 1) {
        s->slots = nicoll_ring_slots(t->credits); /* (the window: t->credits) */
        const size_t rings = (size_t) size * (size_t) (size - 1); /* one per ordered pair */
        const size_t per_ring = NICOLL_SHM_MAX_BYTES / rings;
        /* Payloads over a slot's own inline bytes ride in its body, up to the transport's
         * inline_bytes, or fewer where the rings would not fit in NICOLL_SHM_MAX_BYTES. */
        const size_t slots_bytes = nicoll_ring_bytes(s->slots, 0);
        const size_t room = per_ring <= slots_bytes ? 0
                                                    : (per_ring - slots_bytes) / (size_t) s->slots /
                                                          NICOLL_SHM_LINE * NICOLL_SHM_LINE;
        s->body_bytes =
            (t->inline_bytes + NICOLL_SHM_LINE - 1) / NICOLL_SHM_LINE * NICOLL_SHM_LINE;
        if (s->body_bytes > room) {
            s->body_bytes = room;
        }
        if (s->body_bytes <= NICOLL_RING_SLOT_INLINE) {
            s->body_bytes = 0; /* the slots hold as much */
        }
        s->inline_bytes = 0 == s->body_bytes ? NICOLL_RING_SLOT_INLINE : s->body_bytes;
        s->ring_bytes = nicoll_ring_bytes(s->slots, s->body_bytes);
        rings_fit = s->ring_bytes <= per_ring;
        s->stage_bytes = NICOLL_SHM_STAGE_TOTAL / (size_t) size;
        s->stage_bytes = (s->stage_bytes < NICOLL_SHM_STAGE_BYTES ? s->stage_bytes
                                                                  : NICOLL_SHM_STAGE_BYTES) /
                         NICOLL_SHM_LINE * NICOLL_SHM_LINE;
        if (s->stage_bytes / 2 < sizeof(nicoll_shm_chunk_t) + s->inline_bytes + 1) {
            s->stage_bytes = 0; /* too small to hold what a slot cannot */
        }
        /* Payloads of up to half the area are staged. A sender that staged its payloads is done
         * (where processes share cores, it gives its core away instead of waiting for its
         * receivers to be scheduled and read them), and a message in several packets is copied
         * in by the sender and out by the receiver at once, on two cores: two copies in
         * parallel beat one process_vm_readv, which pins every page it reads (2 ranks with a
         * core each, 1 MiB broadcast in 1 MiB packets: 73 us staged against 105 read in place,
         * 16 KiB 1.4 against 4.2). Larger payloads are read in place. */
        s->stage_limit =
            0 == s->stage_bytes ? 0 : s->stage_bytes / 2 - sizeof(nicoll_shm_chunk_t);
        /* rings, doorbells, then the staging areas, which are allocated as they are first used */
        s->ready_bytes = rings * s->ring_bytes + (size_t) size * sizeof(nicoll_shm_bell_t);
        s->bytes = s->ready_bytes + (size_t) size * s->stage_bytes;
        s->may_sleep = calloc((size_t) size, sizeof(*s->may_sleep));
        s->pids = calloc((size_t) size, sizeof(*s->pids));
        s->sent_head = calloc((size_t) size, sizeof(*s->sent_head));
        s->tail_seen = calloc((size_t) size, sizeof(*s->tail_seen));
        s->apart_until = calloc((size_t) size, sizeof(*s->apart_until));
        s->taken = calloc((size_t) size, sizeof(*s->taken));
        s->ahead = calloc((size_t) size, sizeof(*s->ahead));
    }
    const bool alone = 1 == size; /* no peer on this node: nothing to map */
    bool ok = NULL != hello && size > 0 &&
              (alone || (NULL != s->pids && NULL != s->sent_head && NULL != s->tail_seen &&
                         NULL != s->apart_until && NULL != s->taken && NULL != s->ahead &&
                         NULL != s->may_sleep &&
                         rings_fit));
    /* A rank without its tables (or room for every rank's hello) cannot join what follows; one
     * that the segment would take over its share of the node's memory for nicoll (budget())
     * takes every rank to a segment without staging areas, or to none. Lazy staging areas count
     * as they grow (nicoll_stage_reach), not here. */
    int level = ok ? SHM_STAGED : SHM_NONE;
    const bool lazy = allocates_on_request();
    if (ok && !alone) {
        const size_t rings_only = s->ready_bytes, staged = lazy ? rings_only : s->bytes;
        level = shared_here + staged / (size_t) size <= budget()       ? SHM_STAGED
                : shared_here + rings_only / (size_t) size <= budget() ? SHM_RINGS
                                                                        : SHM_OVER_LIMIT;
    }
    level = nicoll_all_min(m, level);
    ok = level >= SHM_RINGS;
    if (ok && !alone && SHM_RINGS == level) {
        s->bytes -= (size_t) size * s->stage_bytes;
        s->stage_bytes = 0;
        s->stage_limit = 0;
    }

    /* The node's first rank makes its segment (zero-filled: every ring empty), a file without a
     * name (memfd_create), which the others open through its descriptor in /proc: that takes
     * the permission to read its memory, which the fabric needs anyway (can_read()). So no
     * name is left behind in /dev/shm, however a process ends, and /dev/shm's size (64 MiB in a
     * container by default) does not matter. */
    int made = -1;
    const size_t allocated = !ok || alone ? 0 : lazy ? s->ready_bytes : s->bytes;
    const bool creator = ok && !alone && 0 == s->rank;
    nicoll_shm_hello_t mine = {.pid = getpid(),
                               .probe = (uint64_t) (uintptr_t) &nicoll_shm_probe_word,
                               .thread = nicoll_locking};
    if (creator) {
        made = nicoll_fault(NICOLL_FAULT_SHM_MAP) ? -1 : memfd_create("nicoll", MFD_CLOEXEC);
        const bool made_ok = made >= 0 && make_fd(made, s->bytes, allocated);
        s->base = made_ok ? map_fd(made, s->bytes) : NULL;
        snprintf(mine.name, sizeof(mine.name), "/proc/%ld/fd/%d", (long) getpid(), made);
        mine.ok = NULL != s->base;
    }
    int rc = !ok ? OMPI_SUCCESS
                 : m->previous_allgather(&mine, sizeof(mine), MPI_BYTE, hello, sizeof(mine),
                                         MPI_BYTE, comm, m->previous_allgather_module);
    const nicoll_shm_hello_t *first = ok && !alone ? &hello[s->local[0]] : NULL;
    ok = ok && OMPI_SUCCESS == rc && (alone || first->ok);
    if (ok && !alone && !creator) {
        const int fd =
            nicoll_fault(NICOLL_FAULT_SHM_MAP) ? -1 : open(first->name, O_RDWR | O_CLOEXEC);
        s->base = fd < 0 ? NULL : map_fd(fd, s->bytes);
        if (fd >= 0) {
            close(fd);
        }
        ok = NULL != s->base;
    }
    if (NULL != s && NULL != s->base) {
        s->share = allocated / (size_t) size;
        shared_here += s->share;
    }
    if (ok && !alone) {
        /* the doorbells end the part allocated at set-up, after the rings */
        s->bells = (nicoll_shm_bell_t *) (s->base + s->ready_bytes) - size;
        s->stages = s->base + s->ready_bytes;
        s->stage = (nicoll_stage_t) {.area = s->stages + (size_t) s->rank * s->stage_bytes,
                                     .bytes = s->stage_bytes,
                                     .streamed = &mca_coll_nicoll_component.stats.streamed,
                                     .may_leave_apart = nicoll_core_each(),
                                     .lazy = allocated < s->bytes,
                                     .counted = &shared_here,
                                     .limit = budget() / 2};
        /* Cross-memory attach may be forbidden (ptrace rules, containers): try it on a peer. */
        for (int i = 0; i < size; ++i) {
            s->pids[i] = (pid_t) hello[s->local[i]].pid;
            s->may_sleep[i] = 0 != hello[s->local[i]].thread;
            s->any_may_sleep |= s->may_sleep[i];
        }
        const int peer = (s->rank + 1) % size;
        ok = !nicoll_fault(NICOLL_FAULT_SHM_PROBE) && can_read(&hello[s->local[peer]]);
    }
    /* Every node uses its segment, or none does. */
    ok = nicoll_all_ok(m, ok);
    if (made >= 0) {
        close(made); /* every rank of the node has opened it, or none will */
    }
    if (ok && !alone && SHM_RINGS == level) {
        NICOLL_VERBOSE(10,
                       "communicator %s (cid %u): packets through shared memory between the %d "
                       "ranks of this node; no staging areas (a rank's share of "
                       "coll_nicoll_shm_limit, %zu KiB, would not hold them): payloads over %zu "
                       "bytes read by cross-memory attach",
                       nicoll_comm_name(comm), (unsigned) comm->c_contextid, size, budget() >> 10,
                       s->inline_bytes);
    } else if (ok && !alone) {
        NICOLL_VERBOSE(10,
                       "communicator %s (cid %u): packets through shared memory between the %d "
                       "ranks of this node; payloads over %zu bytes staged up to %zu, larger "
                       "ones read by cross-memory attach",
                       nicoll_comm_name(comm), (unsigned) comm->c_contextid, size, s->inline_bytes,
                       s->stage_limit);
    } else if (SHM_OVER_LIMIT == level) {
        NICOLL_VERBOSE(10,
                       "communicator %s (cid %u): no shared memory: its segment would take a "
                       "rank over its share of coll_nicoll_shm_limit (%zu KiB here)",
                       nicoll_comm_name(comm), (unsigned) comm->c_contextid, budget() >> 10);
    } else if (!ok) {
        NICOLL_VERBOSE(10,
                       "communicator %s (cid %u): no shared memory: a rank could not map "
                       "the shared segment or read a peer's memory (process_vm_readv)",
                       nicoll_comm_name(comm), (unsigned) comm->c_contextid);
    }
    free(hello);
    if ((!ok || alone) && NULL != s) {
        unmap(s);
        s = NULL;
    }
    return s;
}

void nicoll_shm_fini(nicoll_shm_t *s)
{
    if (NULL == s) {
        return;
    }
    /* A peer whose collective failed waits until this rank has read the payloads it sent in
     * place (nicoll_transport_settled); gone, this rank has read them all. */
    for (int src = 0; NULL != s->base && src < s->size; ++src) {
        if (src != s->rank) {
            __atomic_store_n(&ring(s, src, s->rank)->tail, UINT64_MAX, __ATOMIC_RELEASE);
        }
    }
    unmap(s);
}

bool nicoll_shm_reaches(const nicoll_shm_t *s, int rank)
{
    return NULL != s && s->place[rank] >= 0;
}

/* Once per communicator: our staging area could not grow, half our share of
 * coll_nicoll_shm_limit being used. */
__attribute__((cold, noinline)) static void tell_refused(nicoll_transport_t *t)
{
    nicoll_shm_t *s = t->shm;
    s->told_refused = true;
    NICOLL_VERBOSE(10,
                   "communicator %s (cid %u): this rank's staging area stops at %zu KiB, half "
                   "its share (%zu KiB) of coll_nicoll_shm_limit being used: payloads that do "
                   "not fit are read by cross-memory attach",
                   nicoll_comm_name(t->comm), (unsigned) t->comm->c_contextid, s->stage.ready >> 10,
                   budget() >> 10);
}

/* The fabric's send: `to` is a communicator rank on this node. */
NICOLL_HOT_PATH
static nicsim_status_t shm_send(nicoll_transport_t *t, int to, const void *header,
                                const void *payload, size_t payload_bytes)
{
    nicoll_shm_t *s = t->shm;
    const int dst = s->place[to];
    nicoll_shm_ring_t *r = ring(s, s->rank, dst);
    const uint64_t head = s->sent_head[dst];
    if (nicoll_ring_full(r, t->credits, head, &s->tail_seen[dst])) {
        return NICSIM_ERR_AGAIN; /* the ring is the window: a credit stall */
    }
    nicoll_shm_slot_t *out = nicoll_ring_slot(r, s->slots, head);
    const bool fits = payload_bytes <= s->inline_bytes;
    out->staged = fits || payload_bytes > s->stage_limit
                      ? 0
                      : nicoll_stage_put(&s->stage, payload, payload_bytes, r->read_cost);
    const bool apart = !fits && 0 == out->staged;
    out->payload_bytes = payload_bytes;
    out->remote = apart ? (uint64_t) (uintptr_t) payload : 0;
    nicoll_ring_put_header(out, header);
    if (fits && payload_bytes > 0) {
        memcpy(nicoll_ring_inline(r, s->slots, s->body_bytes, head, payload_bytes), payload,
               payload_bytes);
    }
    s->sent_head[dst] = head + 1;
    nicoll_ring_publish(out, head);
    ring_bell(s, dst);
    if (apart) {
        s->apart_peers += 0 == s->apart_until[dst];
        s->apart_until[dst] = head + 1;
        if (s->stage.refused && !s->told_refused) {
            tell_refused(t);
        }
    }
    return NICSIM_OK;
}

NICOLL_HOT_PATH
static bool shm_sent(nicoll_transport_t *t)
{
    nicoll_shm_t *s = t->shm;
    nicoll_stage_forget(&s->stage); /* a completed collective's buffer may change */
    for (int dst = 0; s->apart_peers > 0 && dst < s->size; ++dst) {
        if (0 != s->apart_until[dst] &&
            __atomic_load_n(&ring(s, s->rank, dst)->tail, __ATOMIC_ACQUIRE) >=
                s->apart_until[dst]) {
            s->apart_until[dst] = 0;
            --s->apart_peers;
        }
    }
    return 0 == s->apart_peers;
}

/* Reads `bytes` at `remote` in process `pid` to `to`. */
static bool read_in_place(pid_t pid, void *to, uint64_t remote, size_t bytes)
{
    /* process_vm_readv moves at most about 2 GiB per call, and may move less: loop. */
    for (size_t done = 0; done < bytes;) {
        struct iovec local = {(char *) to + done, bytes - done};
        struct iovec far = {(char *) (uintptr_t) remote + done, bytes - done};
        ssize_t n = process_vm_readv(pid, &local, 1, &far, 1, 0);
        if (n <= 0) {
            if (n < 0 && EINTR == errno) {
                continue;
            }
            return false;
        }
        done += (size_t) n;
    }
    return true;
}

/* Reads a payload that is not in its slot (staged, or apart in `src`'s memory) into where the
 * engine places it (an early one too: into the engine's own memory), or into a copy of ours
 * where the engine places it nowhere. `r`: the ring it came by, from `src`. A payload apart
 * takes with it those of the packets after it that are in the ring already and continue it,
 * in `src`'s memory and in the room the engine gives it: one system call for a message's
 * packets, as for one packet. */
NICOLL_HOT_PATH
static nicsim_status_t read_apart(nicoll_shm_t *s, nicsim_group_t *group, int src,
                                  nicoll_shm_ring_t *r, const nicoll_shm_slot_t *in, void **at)
{
    size_t bytes, room;
    nicsim_status_t st = nicsim_group_place(group, s->local[src], in->header, at, &bytes, &room);
    if (NICSIM_OK != st) {
        return st;
    }
    if (bytes != in->payload_bytes) {
        return NICSIM_ERR_PROTOCOL;
    }
    const bool placed = NULL != *at;
    if (!placed) {
        room = bytes;
        if (s->copy_bytes < bytes) {
            free(s->copy);
            s->copy = malloc(bytes);
            s->copy_bytes = NULL == s->copy ? 0 : bytes;
            if (NULL == s->copy) {
                return NICSIM_ERR_NO_MEMORY;
            }
        }
        *at = s->copy;
    }
    if (0 != in->staged) {
        nicoll_stage_read(s->stages + (size_t) src * s->stage_bytes, s->stage_bytes, in->staged,
                          *at, bytes, r->read_cost);
        return NICSIM_OK;
    }
    ++mca_coll_nicoll_component.stats.read_in_place;
    nicoll_shm_ahead_t *ahead = &s->ahead[src];
    const uint64_t index = s->taken[src];
    if (index < ahead->until && placed && *at == ahead->local && in->remote == ahead->remote) {
        ahead->local += bytes; /* read with a packet before it */
        ahead->remote += bytes;
        return NICSIM_OK;
    }
    size_t run = bytes;
    uint64_t until = index + 1;
    for (const nicoll_shm_slot_t *next;
         until - index < (uint64_t) s->slots &&
         NULL != (next = nicoll_ring_peek(r, s->slots, until)) &&
         next->remote == in->remote + run && next->payload_bytes <= room - run;
         ++until) {
        run += next->payload_bytes;
    }
    ++mca_coll_nicoll_component.stats.in_place_reads;
    const uint64_t start = nicoll_cost_now();
    if (!read_in_place(s->pids[src], *at, in->remote, run)) {
        return NICSIM_ERR_TRANSPORT;
    }
    nicoll_stage_note_read(r->read_cost, NICOLL_WAY_APART, bytes, run, start);
    *ahead = (nicoll_shm_ahead_t){(unsigned char *) *at + bytes, in->remote + bytes, until};
    return NICSIM_OK;
}

NICOLL_HOT_PATH
static nicsim_status_t shm_poll(nicoll_transport_t *t)
{
    nicoll_shm_t *s = t->shm;
    const bool may_stop = nicoll_core_each();
    /* Every ring in turn, starting one further each time, so that no sender is always last. */
    int src = s->next_peer;
    s->next_peer = src + 1 == s->size ? 0 : src + 1;
    for (int n = 0; n < s->size; ++n, src = src + 1 == s->size ? 0 : src + 1) {
        if (src == s->rank) {
            continue; /* the ring to ourselves stays empty */
        }
        nicoll_shm_ring_t *r = ring(s, src, s->rank);
        for (;;) {
            const nicoll_shm_slot_t *in = nicoll_ring_peek(r, s->slots, s->taken[src]);
            if (NULL == in) {
                /* Ask for the slot's other lines too, while waiting: the sender writes them
                 * before the line that publishes them, so the packet's lines then cross from
                 * its core together rather than one after the other once it is seen (2 ranks
                 * whose cores pass a line in 240 ns, MPI_Allgather of 16-256 B: 1.11-1.13 of
                 * coll/tuned's time with the first line alone, 0.91-0.94 with the others). */
                const char *next = (const char *) nicoll_ring_slot(r, s->slots, s->taken[src]);
                for (int line = 1; line < NICOLL_RING_SLOT_BYTES / NICOLL_SHM_LINE; ++line) {
                    __builtin_prefetch(next + line * NICOLL_SHM_LINE);
                }
                break;
            }
            const void *payload;
            void *at = NULL;
            if (0 == in->remote && 0 == in->staged) {
                payload = nicoll_ring_inline(r, s->slots, s->body_bytes, s->taken[src],
                                             in->payload_bytes);
            } else {
                nicsim_status_t st = read_apart(s, t->group, src, r, in, &at);
                if (NICSIM_OK != st) {
                    if (NICSIM_OK == t->error) {
                        return st; /* (which breaks the group) */
                    }
                    nicoll_ring_consume(r, ++s->taken[src]); /* draining: dropped */
                    ring_bell(s, src);
                    continue;
                }
                payload = at;
            }
            /* The engine writes what it delivers, perhaps where it sent from. */
            nicoll_stage_forget(&s->stage);
            ++mca_coll_nicoll_component.stats.packets_received;
            ++t->events;
            const unsigned long long settled = may_stop ? nicsim_group_settled(t->group) : 0;
            nicsim_status_t st = nicsim_group_deliver(t->group, s->local[src], in->header,
                                                      payload, in->payload_bytes);
            /* Consumed: the slot, and the sender's payload, are free again. */
            nicoll_ring_consume(r, ++s->taken[src]);
            ring_bell(s, src);
            if (at == s->copy && s->copy_bytes > NICOLL_SHM_KEEP_COPY) {
                free(s->copy); /* the engine kept its own copy: do not hold a large one too */
                s->copy = NULL;
                s->copy_bytes = 0;
            }
            if (NICSIM_OK != st) {
                return st;
            }
            /* A collective ended: back to its caller, who may return now; the packets after it
             * (the next collective's) wait for their own caller. Only where each process has a
             * core: where processes share cores, one takes all it can while it runs
             * (docs/transports.md has the figures for both). */
            if (may_stop && nicsim_group_settled(t->group) != settled) {
                return NICSIM_OK;
            }
        }
    }
    return NICSIM_OK;
}

const nicoll_fabric_t nicoll_fabric_shm = {
    .name = "shm", .send = shm_send, .poll = shm_poll, .sent = shm_sent};
