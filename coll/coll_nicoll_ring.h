/*
 * The shared-memory fabric's lock-free parts (coll_nicoll_shm.c), apart from Open MPI so that a
 * unit test can run them on two threads under ThreadSanitizer (test/coll/test_ring.cc):
 *
 * - A ring: one producer (the sender), one consumer (the receiver), `slots` slots (a power of
 *   two, at least the sender's window of unconsumed packets) after control lines that only the
 *   receiver writes (`tail`, slots consumed; the costs of its copies out of the sender's staging
 *   area). The sender writes slot i, then publishes it by storing i + 1 in its `seq` (release);
 *   the receiver, watching the slot it expects next, sees the seq (acquire), hands the packet on
 *   and frees the slot by advancing `tail` (release), which the sender reads (acquire) only when
 *   its window looks full.
 * - A staging area: a region only its owner (a sender) writes, cut into chunks of whole lines,
 *   each a control line (`span`, `unread`) and a payload. The owner takes chunks in order and frees
 *   them in order once their readers have copied them out: each reader decrements `unread`
 *   (release), the owner sees 0 (acquire); an emptied area starts again from its beginning once
 *   past NICOLL_STAGE_ROUND. A chunk is published to its readers with the slots that name it, so
 *   `unread` and the payload need no ordering of their own. In shared memory the area is
 *   allocated as chunks first reach it (MADV_POPULATE_WRITE, in steps of NICOLL_STAGE_GROW), so
 *   that a communicator that stages little costs little, and counted as it grows against half
 *   the owner's share of coll_nicoll_shm_limit.
 * - The owner's copy into its area: ordinary (cached) stores, or streaming ones, or none, the
 *   payload left apart for its reader to read in place, whichever costs less from copy in to
 *   copy out (nicoll_stage_way): the owner times its copies in, each reader its copies out and
 *   its reads in place and publishes their cost in its ring's control lines. A cached store to
 *   a line that a reader on another core still holds, from the last time round the area, first
 *   takes the line from it; where the two cores are far apart (this project's 2-core virtual
 *   machine, from one minute to the next) that made copies 4.5-12 times slower
 *   (docs/measurements.md). Streaming stores send the payload to memory and take no line, at
 *   the price of the readers reading it from memory. Where cores are far apart both copies
 *   cost more than one read in place (a 64 KiB MPI_Allgather on 2 ranks: 1.38 of coll/tuned's
 *   time staged, 0.94 apart).
 */
#ifndef COLL_NICOLL_RING_H
#define COLL_NICOLL_RING_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nicsim/nicsim.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#include <x86intrin.h>
#define NICOLL_STAGE_STREAMING 1 /* SSE2's streaming stores, and the TSC to time copies with */
#else
#define NICOLL_STAGE_STREAMING 0
#endif

#define NICOLL_SHM_LINE 64

/* Payload sizes whose copies are timed apart (nicoll_stage_class): up to 8 KiB, then each power
 * of two up to 2 MiB, and larger. A copy's cost per byte depends on its size (which caches it
 * fits, and over how many bytes a read in place spreads its system call). */
#define NICOLL_STAGE_CLASSES 10

/* The ways a payload too large for its slot reaches its reader: staged with cached or with
 * streaming stores, or left apart, in the sender's buffer, for the reader to read in place. */
enum { NICOLL_WAY_CACHED, NICOLL_WAY_STREAMING, NICOLL_WAY_APART, NICOLL_WAYS };

/* A ring's control lines, written by its receiver only. */
typedef struct nicoll_shm_ring {
    uint64_t tail; /* slots consumed by the receiver */
    char pad[NICOLL_SHM_LINE - sizeof(uint64_t)];
    /* What the receiver's copies of the sender's payloads cost, cycles per KiB, per size class
     * and way: out of the staging area (nicoll_stage_read), or out of the sender's buffer
     * (nicoll_stage_note_read); 0: none yet. On lines of their own, apart from the tail. */
    uint64_t read_cost[NICOLL_STAGE_CLASSES][NICOLL_WAYS];
    char cost_pad[NICOLL_SHM_LINE - NICOLL_STAGE_CLASSES * NICOLL_WAYS * sizeof(uint64_t) %
                                        NICOLL_SHM_LINE];
} nicoll_shm_ring_t;
static_assert(0 == sizeof(nicoll_shm_ring_t) % NICOLL_SHM_LINE, "slots start on a line");

/* A chunk of a staging area: this line, then the payload, in whole lines. */
typedef struct nicoll_shm_chunk {
    uint64_t span;     /* the chunk's bytes, this line included */
    uint64_t unread;   /* receivers yet to copy the payload out (0 in a wrap's gap) */
    uint64_t streamed; /* copied in with streaming stores */
    uint64_t cold;     /* where no chunk was before: copies out fault the readers' pages in */
    char pad[NICOLL_SHM_LINE - 4 * sizeof(uint64_t)];
} nicoll_shm_chunk_t;

/* A slot: its sequence number, the packet's header, then its payload inline, or where the
 * payload is: its place in the sender's staging area, or its address in the sender's memory.
 * Slots are NICOLL_RING_SLOT_BYTES apart, packed after the ring's control lines; a payload too
 * large for its slot but within the ring's `body_bytes` rides in the slot's body, in a second
 * array after the slots. Small packets thus touch few lines and pages, which measured faster than
 * 4 KiB slots on 2 and 4 ranks (docs/measurements.md). */
typedef struct nicoll_shm_slot {
    uint64_t seq;           /* i + 1 once packet i of the ring is in it (0: never used) */
    uint64_t payload_bytes; /* inline or apart */
    uint64_t remote;        /* the payload's address in the sender, when apart; else 0 */
    uint64_t staged;        /* its offset + 1 in the sender's staging area, when staged; else 0 */
    unsigned char header[NICSIM_HEADER_BYTES];
    /* inline payload follows, up to NICOLL_RING_SLOT_INLINE bytes */
} nicoll_shm_slot_t;

#define NICOLL_RING_SLOT_BYTES (5 * NICOLL_SHM_LINE)
#define NICOLL_RING_SLOT_INLINE (NICOLL_RING_SLOT_BYTES - sizeof(nicoll_shm_slot_t))

/* A ring's bytes: its control lines, `slots` slots, and as many bodies of `body_bytes` (a whole
 * number of lines, 0 for none). */
static inline size_t nicoll_ring_bytes(int slots, size_t body_bytes)
{
    return sizeof(nicoll_shm_ring_t) + (size_t) slots * (NICOLL_RING_SLOT_BYTES + body_bytes);
}

/* Where packet `index` (counted from the ring's start) falls among the ring's `slots`, a power
 * of two (a mask, not a division, on every send and poll). */
static inline size_t nicoll_ring_place(int slots, uint64_t index)
{
    return (size_t) (index & (uint64_t) (slots - 1));
}

/* Slot `index` of ring `r`. */
static inline nicoll_shm_slot_t *nicoll_ring_slot(nicoll_shm_ring_t *r, int slots, uint64_t index)
{
    return (nicoll_shm_slot_t *) ((unsigned char *) (r + 1) +
                                  nicoll_ring_place(slots, index) * NICOLL_RING_SLOT_BYTES);
}

/* Where slot `index` holds an inline payload of `payload_bytes`: in the slot, or in its body. */
static inline unsigned char *nicoll_ring_inline(nicoll_shm_ring_t *r, int slots,
                                                size_t body_bytes, uint64_t index,
                                                size_t payload_bytes)
{
    unsigned char *slot = (unsigned char *) nicoll_ring_slot(r, slots, index);
    if (payload_bytes <= NICOLL_RING_SLOT_INLINE) {
        return slot + sizeof(nicoll_shm_slot_t);
    }
    return (unsigned char *) (r + 1) + (size_t) slots * NICOLL_RING_SLOT_BYTES +
           nicoll_ring_place(slots, index) * body_bytes;
}

/* The smallest power of two that holds `window` slots. */
static inline int nicoll_ring_slots(int window)
{
    int slots = 1;
    while (slots < window) {
        slots *= 2;
    }
    return slots;
}

/* The sender: whether `window` packets (at most the ring's slots) are still unconsumed, so
 * that slot `head` may not be written, reading the receiver's tail again (into *tail_seen) only
 * when the last value read says so. */
static inline bool nicoll_ring_full(nicoll_shm_ring_t *r, int window, uint64_t head,
                                    uint64_t *tail_seen)
{
    return head - *tail_seen == (uint64_t) window &&
           head - (*tail_seen = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE)) == (uint64_t) window;
}

/* The sender: the packet's header into its slot, 8 bytes at a time, as the engine stores it
 * (PacketHeader::encode): a wider load spanning two of those stores would wait until they, and
 * every store before them (the last packet's, to a line another core holds), reached the cache.
 * The empty asm keeps each word in a register, so that no pass merges the loads. */
static inline void nicoll_ring_put_header(nicoll_shm_slot_t *slot, const void *header)
{
    static_assert(0 == NICSIM_HEADER_BYTES % sizeof(uint64_t), "a header of whole words");
    for (size_t at = 0; at < NICSIM_HEADER_BYTES; at += sizeof(uint64_t)) {
        uint64_t word;
        memcpy(&word, (const unsigned char *) header + at, sizeof word);
        __asm__("" : "+r"(word));
        memcpy(slot->header + at, &word, sizeof word);
    }
}

/* The sender: slot `head`, written, becomes the receiver's. */
static inline void nicoll_ring_publish(nicoll_shm_slot_t *slot, uint64_t head)
{
    __atomic_store_n(&slot->seq, head + 1, __ATOMIC_RELEASE);
}

/* The receiver: slot `taken` when its packet is in, else NULL. */
static inline const nicoll_shm_slot_t *nicoll_ring_peek(nicoll_shm_ring_t *r, int slots,
                                                        uint64_t taken)
{
    const nicoll_shm_slot_t *in = nicoll_ring_slot(r, slots, taken);
    return __atomic_load_n(&in->seq, __ATOMIC_ACQUIRE) == taken + 1 ? in : NULL;
}

/* The receiver: the slot it took is free again (and, read in place, the sender's payload). */
static inline void nicoll_ring_consume(nicoll_shm_ring_t *r, uint64_t taken)
{
    __atomic_store_n(&r->tail, taken, __ATOMIC_RELEASE);
}

/* A staging area and its owner's bookkeeping. */
typedef struct nicoll_stage {
    unsigned char *area;  /* `bytes` of shared memory, a whole number of lines */
    size_t bytes;
    uint64_t head;        /* bytes ever taken, and ever freed again: a chunk's place is its */
    uint64_t tail;        /* count modulo `bytes` */
    const void *shared;   /* the payload last staged, until the owner says it may change: the */
    size_t shared_bytes;  /* engine sends a packet to several peers in a row (a tree's */
    uint64_t shared_at;   /* children), and they all read the one chunk */
    /* Per size class (nicoll_stage_class): the copy's cost, cached [0] and streaming [1], cycles
     * per KiB, an average of the copies made that way (nicoll_stage_copy; 0: none yet); the
     * payloads sent, staged or apart, and of them those that continued the one before in the
     * sender's memory (the next packet of a message). Where to count streamed ones (or NULL). */
    uint64_t cost[NICOLL_STAGE_CLASSES][2];
    uint64_t payloads[NICOLL_STAGE_CLASSES];
    uint64_t continued[NICOLL_STAGE_CLASSES];
    const unsigned char *last_end; /* where the last payload ended (a message's next packet
                                    * starts there), and the way it took */
    int last_way;
    unsigned long long *streamed;
    /* Whether a payload may be left apart where that costs its reader less than staging: only
     * where every process has a core, so that the sender, which waits until its readers have
     * read such a payload, does not wait for them to be scheduled. */
    bool may_leave_apart;
    size_t touched; /* how far into the area chunks have reached */
    /* 0: the whole area is in memory; 1: only its first `ready` bytes, the rest allocated as
     * chunks reach it; -1: allocating more failed (out of memory): chunks stay below `ready`. */
    int lazy;
    size_t ready;
    /* Where a lazy area's growth is counted (the process's shared memory for nicoll), and the
     * most that growth may take the count to: a growth past it is refused, and the payload read
     * in place, until other segments give their memory back. */
    size_t *counted;
    size_t limit;
    bool refused; /* a growth was */
} nicoll_stage_t;

/* A lazy area grows by this much at a time. */
#define NICOLL_STAGE_GROW (64u << 10)

/* How far round its area a sender's chunks go before, the area empty, they start again from
 * its beginning. The first time round, each chunk costs a growth of the area and its readers'
 * page faults: going round the whole 4 MiB, 2 ranks' first 60 16 KiB broadcasts took 14-17 us
 * each, then 1.4-1.9. But a line used again soon is still in its last reader's cache, from which
 * the next copy in must take it: starting again at once, 2 ranks with a core each broadcast
 * 16-256 KiB 15-90 % slower. Twice a core's L2 here (512 KiB): the first 30 16 KiB broadcasts
 * 8-11 us, 2 ranks as fast as going round 4 MiB, 4 oversubscribed ranks' allgathers of
 * 128 KiB-2 MiB 0.45-0.82 of tuned's time against 0.63-1.00 (docs/transports.md). */
#define NICOLL_STAGE_ROUND (1u << 20)

/* A payload's size class. */
static inline int nicoll_stage_class(size_t bytes)
{
    if (bytes <= (8u << 10)) {
        return 0;
    }
    const int c = 64 - __builtin_clzll((unsigned long long) bytes - 1) - 13; /* log2, rounded up */
    return c < NICOLL_STAGE_CLASSES ? c : NICOLL_STAGE_CLASSES - 1;
}

/* In each size class the first payloads take the ways in turn, to measure each; after them, one
 * in NICOLL_STAGE_PROBE takes another way than the costs choose (the others in turn), to follow
 * them. */
#define NICOLL_STAGE_WARMUP 16
#define NICOLL_STAGE_PROBE 128

/* A copy's cost folded into an average of earlier ones (0: none yet). A copy preempted midway
 * (or the first, into cold caches) would read as very dear: a dearer sample counts at most twice
 * the average and moves it by a quarter, a cheaper one halves the distance. */
static inline uint64_t nicoll_cost_fold(uint64_t cost, uint64_t sample)
{
    if (0 == cost) {
        return sample;
    }
    if (sample < cost) {
        return cost - (cost - sample) / 2;
    }
    return cost + ((sample < 2 * cost ? sample : 2 * cost) - cost) / 4;
}

/* The time, to time copies with: the TSC, where there is one (else 0, and no costs). */
static inline uint64_t nicoll_cost_now(void)
{
#if NICOLL_STAGE_STREAMING
    return __rdtsc();
#else
    return 0;
#endif
}

/* The cost of a copy of `bytes` that began at `start` (nicoll_cost_now): cycles per KiB, at
 * least 1. */
static inline uint64_t nicoll_cost_sample(uint64_t start, size_t bytes)
{
    return ((nicoll_cost_now() - start) << 10) / (bytes | 1) + 1;
}

/* A reader: folds the cost of its copy of `bytes`, which began at `start`, into its ring's
 * `read_cost` for payloads of `payload_bytes` that came `way` (a read in place may take several
 * packets' payloads at once). */
static inline void nicoll_stage_note_read(uint64_t (*read_cost)[NICOLL_WAYS], int way,
                                          size_t payload_bytes, size_t bytes, uint64_t start)
{
    if (NICOLL_STAGE_STREAMING) {
        uint64_t *cost = &read_cost[nicoll_stage_class(payload_bytes)][way];
        __atomic_store_n(cost,
                         nicoll_cost_fold(__atomic_load_n(cost, __ATOMIC_RELAXED),
                                          nicoll_cost_sample(start, bytes)),
                         __ATOMIC_RELAXED);
    }
}

/* The owner: the way its next payload of size class `c` goes to the reader that publishes
 * `read_cost` (its ring's, or NULL): whichever costs less from copy in to copy out, once the
 * reader has read payloads of the class that came each way. Until then, cached while cached
 * copies in cost at most 4 times streaming ones (where the cores are close, cached ones cost
 * 0.6-3 times streaming ones and the reader then reads from a cache, not from memory; 4.5-12
 * times where they are far apart). Apart costs no copy in, the reader's read of the sender's
 * buffer (process_vm_readv, a system call that pins the pages), where it may be taken
 * (may_leave_apart) for payloads that are mostly a message's only packet. A message in
 * several staged packets is copied in and out at once, on two cores, which the costs of single
 * copies do not show: 2 ranks far apart, 1 MiB MPI_Ibcasts in 64 KiB packets took 33-40 us in
 * jobs that staged them and 63-67 in jobs where the costs chose to leave them apart (read in
 * runs of packets, one process_vm_readv each), a read in place measuring 108-158 cycles per KiB
 * against 70-140 for the dearer copy. This is for a message's first packet; the next ones go
 * its way (nicoll_stage_put). */
static inline int nicoll_stage_way(const nicoll_stage_t *s, int c,
                                   const uint64_t (*read_cost)[NICOLL_WAYS])
{
    if (!NICOLL_STAGE_STREAMING) {
        return NICOLL_WAY_CACHED;
    }
    const uint64_t payloads = s->payloads[c];
    const bool may_leave_apart = s->may_leave_apart && 4 * s->continued[c] <= payloads;
    const int ways = may_leave_apart ? NICOLL_WAYS : NICOLL_WAY_APART;
    if (payloads < NICOLL_STAGE_WARMUP) {
        return (int) (payloads % (uint64_t) ways);
    }
    const uint64_t *in = s->cost[c];
    uint64_t out[NICOLL_WAYS] = {0, 0, 0}; /* the reader's */
    for (int w = 0; NULL != read_cost && w < ways; ++w) {
        out[w] = __atomic_load_n(&read_cost[c][w], __ATOMIC_RELAXED);
    }
    const bool streams = 0 != out[NICOLL_WAY_CACHED] && 0 != out[NICOLL_WAY_STREAMING]
                             ? in[0] + out[0] > in[1] + out[1]
                             : in[0] > 4 * in[1];
    int way = streams ? NICOLL_WAY_STREAMING : NICOLL_WAY_CACHED;
    if (0 != out[NICOLL_WAY_APART] && 0 != out[way] && out[NICOLL_WAY_APART] < in[way] + out[way]) {
        way = NICOLL_WAY_APART;
    }
    if (0 == payloads % NICOLL_STAGE_PROBE) { /* another way: the others in turn */
        way = (way + 1 + (int) (payloads / NICOLL_STAGE_PROBE % (uint64_t) (ways - 1))) % ways;
    }
    return way;
}

/* The owner: copies `bytes` to `to` (in its area), with streaming stores if `streams`, and folds
 * the copy's cost into that way's, unless `to` is `cold` (where no chunk was before: its first
 * copies cost page faults, and would set the way's cost far above what it costs from then on);
 * whether it streamed. */
static inline bool nicoll_stage_copy(nicoll_stage_t *s, void *to, const void *from, size_t bytes,
                                     bool streams, bool cold)
{
#if NICOLL_STAGE_STREAMING
    const int c = nicoll_stage_class(bytes);
    streams = streams && 0 == (uintptr_t) to % 16;
    const uint64_t start = __rdtsc();
    if (streams) {
        __m128i *d = (__m128i *) to;
        const __m128i *f = (const __m128i *) from;
        for (size_t n = bytes / 64; n > 0; --n, d += 4, f += 4) {
            const __m128i a = _mm_loadu_si128(f), b = _mm_loadu_si128(f + 1),
                          c = _mm_loadu_si128(f + 2), e = _mm_loadu_si128(f + 3);
            _mm_stream_si128(d, a);
            _mm_stream_si128(d + 1, b);
            _mm_stream_si128(d + 2, c);
            _mm_stream_si128(d + 3, e);
        }
        memcpy(d, f, bytes % 64);
        _mm_sfence(); /* before the slot that publishes the payload */
        if (NULL != s->streamed) {
            ++*s->streamed;
        }
    } else {
        memcpy(to, from, bytes);
    }
    if (!cold) {
        s->cost[c][streams] =
            nicoll_cost_fold(s->cost[c][streams], nicoll_cost_sample(start, bytes));
    }
    return streams;
#else
    (void) s;
    (void) streams;
    (void) cold;
    memcpy(to, from, bytes);
    return false;
#endif
}

/* The chunk at byte `offset` (wrapping) of the staging area at `area`. */
static inline nicoll_shm_chunk_t *nicoll_stage_chunk(unsigned char *area, size_t bytes,
                                                     uint64_t offset)
{
    return (nicoll_shm_chunk_t *) (area + offset % bytes);
}

/* A reader: the chunk that holds the payload a slot names (its `staged`, an offset + 1). */
static inline nicoll_shm_chunk_t *nicoll_stage_staged(unsigned char *area, size_t bytes,
                                                      uint64_t staged)
{
    return nicoll_stage_chunk(area, bytes, staged - 1) - 1;
}

/* A reader: copies the payload out, folds the copy's cost into `read_cost` (its ring's, which
 * it alone writes) unless the chunk is cold, and is done with the payload (at 0 readers the owner
 * frees it). */
static inline void nicoll_stage_read(unsigned char *area, size_t bytes, uint64_t staged,
                                     void *to, size_t payload_bytes,
                                     uint64_t (*read_cost)[NICOLL_WAYS])
{
    nicoll_shm_chunk_t *c = nicoll_stage_staged(area, bytes, staged);
    const uint64_t start = nicoll_cost_now();
    memcpy(to, c + 1, payload_bytes);
    if (0 == c->cold) {
        nicoll_stage_note_read(read_cost, 0 != c->streamed, payload_bytes, payload_bytes, start);
    }
    __atomic_fetch_sub(&c->unread, 1, __ATOMIC_RELEASE);
}

/* Whether the owner's next chunk would go past the area's first NICOLL_STAGE_ROUND bytes. */
static inline bool nicoll_stage_past_round(const nicoll_stage_t *s)
{
    return s->head % s->bytes >= NICOLL_STAGE_ROUND;
}

/* The owner: frees its chunks, oldest first, as far as their readers have read them. An area
 * left empty past its round starts again from its beginning. */
static inline void nicoll_stage_free_read(nicoll_stage_t *s)
{
    while (s->tail != s->head) {
        const nicoll_shm_chunk_t *c = nicoll_stage_chunk(s->area, s->bytes, s->tail);
        if (0 != __atomic_load_n(&c->unread, __ATOMIC_ACQUIRE)) {
            return;
        }
        s->tail += c->span;
    }
    if (nicoll_stage_past_round(s)) {
        s->head = s->tail = (s->head + s->bytes - 1) / s->bytes * s->bytes;
    }
}

/* Allocates the pages that hold `bytes` from `at` in shared memory, and maps them in this
 * process: false where it cannot. MADV_POPULATE_WRITE fails where memory runs out, where a store
 * would raise SIGBUS, and where the kernel lacks it (before Linux 5.14: coll_nicoll_shm.c then
 * allocates whole areas at set-up). */
static inline bool nicoll_populate(void *at, size_t bytes)
{
    const uintptr_t page = (uintptr_t) sysconf(_SC_PAGESIZE), from = (uintptr_t) at / page * page,
                    to = ((uintptr_t) at + bytes + page - 1) / page * page;
    return 0 == bytes || 0 == madvise((void *) from, to - from, MADV_POPULATE_WRITE);
}

/* The owner: whether the area is in memory up to byte `end`, allocating it where it is lazy. */
static inline bool nicoll_stage_reach(nicoll_stage_t *s, size_t end)
{
    if (0 == s->lazy || end <= s->ready) {
        return true;
    }
    if (s->lazy < 0) {
        return false;
    }
    size_t to = (end + NICOLL_STAGE_GROW - 1) / NICOLL_STAGE_GROW * NICOLL_STAGE_GROW;
    to = to < s->bytes ? to : s->bytes;
    if (*s->counted + (to - s->ready) > s->limit) {
        s->refused = true;
        return false;
    }
    if (!nicoll_populate(s->area + s->ready, to - s->ready)) {
        s->lazy = -1;
        return false;
    }
    *s->counted += to - s->ready;
    s->ready = to;
    return true;
}

/* The owner: copies a payload into the area for one more reader, the one that publishes
 * `read_cost`; its offset + 1 there (for the slot that names it), or 0 where it goes apart: where
 * that costs less (nicoll_stage_way), or where there is no room. The same payload again (its
 * bytes cannot have changed: the owner calls nicoll_stage_forget() when they may) gets one more
 * reader of the same chunk. Published with the slot that names it. */
static inline uint64_t nicoll_stage_put(nicoll_stage_t *s, const void *payload, size_t bytes,
                                        const uint64_t (*read_cost)[NICOLL_WAYS])
{
    if (payload == s->shared && bytes == s->shared_bytes) {
        __atomic_fetch_add(&nicoll_stage_staged(s->area, s->bytes, s->shared_at)->unread, 1,
                           __ATOMIC_RELAXED);
        return s->shared_at;
    }
    s->shared = NULL; /* the chunk may be freed below */
    const int size_class = nicoll_stage_class(bytes);
    const int way = payload == s->last_end ? s->last_way /* a message's next packet */
                                           : nicoll_stage_way(s, size_class, read_cost);
    ++s->payloads[size_class];
    s->continued[size_class] += payload == s->last_end;
    s->last_end = (const unsigned char *) payload + bytes;
    s->last_way = way;
    if (NICOLL_WAY_APART == way) {
        return 0;
    }
    const size_t span = sizeof(nicoll_shm_chunk_t) +
                        (bytes + NICOLL_SHM_LINE - 1) / NICOLL_SHM_LINE * NICOLL_SHM_LINE;
    /* Freeing reads lines the readers write: only where it can matter, past the round (the area
     * may start again) or where the chunk might not fit (a gap before it is shorter than it). */
    if (nicoll_stage_past_round(s) || s->head - s->tail + 2 * span > s->bytes) {
        nicoll_stage_free_read(s);
    }
    const size_t at = s->head % s->bytes;
    const size_t gap = at + span > s->bytes ? s->bytes - at : 0; /* up to the end */
    if (s->head + gap + span - s->tail > s->bytes) {
        return 0;
    }
    /* (after a gap the chunk starts at 0, in memory since the first time round) */
    if (!nicoll_stage_reach(s, gap > 0 ? at + sizeof(nicoll_shm_chunk_t) : at + span)) {
        return 0;
    }
    if (gap > 0) {
        nicoll_shm_chunk_t *g = nicoll_stage_chunk(s->area, s->bytes, s->head);
        g->span = gap;
        g->unread = 0;
        s->head += gap;
    }
    const size_t place = s->head % s->bytes;
    nicoll_shm_chunk_t *c = nicoll_stage_chunk(s->area, s->bytes, place);
    c->span = span;
    c->unread = 1;
    c->cold = place + span > s->touched;
    if (c->cold) {
        s->touched = place + span;
    }
    c->streamed = nicoll_stage_copy(s, c + 1, payload, bytes, NICOLL_WAY_STREAMING == way, c->cold);
    s->head += span;
    s->shared = payload;
    s->shared_bytes = bytes;
    s->shared_at = place + sizeof(*c) + 1;
    return s->shared_at;
}

/* The owner: the payload last staged may change (a delivery, a completed collective). */
static inline void nicoll_stage_forget(nicoll_stage_t *s)
{
    s->shared = NULL;
}

#endif
