/*
 * MPI_Bcast, MPI_Allgather, MPI_Barrier and MPI_Ibcast, MPI_Iallgather, MPI_Ibarrier under
 * mpirun, checked byte for byte against a reference that never calls the collective under test.
 *
 * The reference: every data byte a rank contributes is pattern(origin rank, k, seed), k being the
 * byte's index in the message's packed order (its type signature), computed locally by every
 * rank. Every buffer is first filled with a sentinel (guards before and after included), and the
 * expected image of each buffer is built from the test's own description of each datatype's
 * blocks: data bytes must hold the pattern, gap and guard bytes must keep the sentinel.
 *
 * Sections (--sections, all by default), each printing TAP lines without numbers on world rank 0
 * (test/mpi/coll.sh numbers them):
 *   blocking     bcast (every root) and allgather (with and without MPI_IN_PLACE) on
 *                MPI_COMM_WORLD and on a split communicator of odd size in reversed rank order
 *                x type cases (MPI_BYTE, MPI_INT, MPI_DOUBLE, a vector, a struct and a resized
 *                type with gaps, N MPI_INT received as one contiguous type of N ints, a vector
 *                received as MPI_INT) x counts 0, 1, each packet boundary -1/0/+1 (from
 *                --packet-size) and a several-MB message (--large), each with one root (or
 *                MPI_IN_PLACE or not), rotating so that every count meets every root; counts
 *                of 1 MiB and more with one type case each, rotating.
 *   nonblocking  the same sweep with MPI_Ibcast and MPI_Iallgather, each completed by MPI_Wait.
 *   barrier      MPI_Barrier and MPI_Ibarrier (MPI_Test loop) on both communicators, each rank in
 *                turn entering late: no rank may leave before the last one entered (one
 *                CLOCK_MONOTONIC for all ranks on one machine).
 *   outstanding  many nonblocking collectives outstanding at once on five communicators (world,
 *                two duplicates, even/odd halves, the odd split), completed by MPI_Waitall, by
 *                MPI_Wait in reverse and in a random order (different on every rank), and by
 *                MPI_Test, MPI_Testany and MPI_Testsome loops. Then duplicates of world freed
 *                with collectives in flight, and (on one node) 150 made, used and freed in
 *                turn, resident memory staying flat.
 *   soak         (only when named) --soak N collective calls drawn (a million by default; each
 *                rank runs those on its groups), blocking and nonblocking mixed, on world and 6
 *                random splits, every way of completing in turn, each checked; resident memory
 *                must stay flat after the first tenth.
 *   offload      (only when named) MPI_Ibcast of several packets, MPI_Iallgather and
 *                MPI_Ibarrier started on three communicators, then no MPI call until nicoll's
 *                MPI_T counter coll_nicoll_offloaded shows all three complete (at most
 *                --offload-wait seconds, 30 by default): the
 *                progress thread (coll_nicoll_progress thread) moved every packet. Then MPI_Waitall
 *                and the usual checks. Three rounds, each rank in turn starting 0.2 s later.
 *                Then a forwarding round per rank but the root: that rank starts an MPI_Ibcast
 *                only after every other rank's completed, which needs the packets it forwards
 *                to go on before its host posts (early forwarding by its thread).
 *                --realtime-threads yes|no adds one line: whether this process has a thread at
 *                real-time priority (SCHED_FIFO) then (coll_nicoll_progress_priority).
 *   communicators (only when named) --communicators N duplicates of MPI_COMM_WORLD (1100 by
 *                default) held at once, each running an MPI_Bcast of several packets from a
 *                rotating root and an MPI_Allgather, each checked; then all freed. Each sets up
 *                nicoll's transports: what they hold must not grow with the number of
 *                communicators past what a node has (memory, file descriptors).
 *   concurrency  collectives on MPI_COMM_WORLD while point-to-point messages are in flight on it,
 *                with tags from 0 to MPI_TAG_UB and receives from MPI_ANY_SOURCE with
 *                MPI_ANY_TAG, and MPI_Allreduce (another component's) between a nonblocking
 *                collective's start and its completion.
 *
 * --nodes N adds one line first: MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) splits MPI_COMM_WORLD
 * into N nodes (test/mpi/nodes.sh emulates several on one machine).
 *
 * --expect-nicoll adds one line per collective: nicoll's MPI_T counter coll_nicoll_<c>_calls
 * grew by exactly the calls this program made on communicators of 2+ ranks (nicoll declines a
 * single rank) and coll_nicoll_<c>_fallbacks did not grow. Communicators are all created before
 * the counters are opened, since creating one runs collectives of its own.
 *
 * The last line, "# checks N", says that every section ran to the end.
 * --uniform-bcast leaves out the bcasts whose root and receivers use different datatypes, for
 * checking the test against coll/tuned, which cannot do them (see usable()).
 *
 * --thread-multiple initialises MPI with MPI_THREAD_MULTIPLE (the test itself uses one thread).
 *
 * usage: test_coll [--expect-nicoll] [--uniform-bcast] [--packet-size BYTES[,BYTES...]]
 *                  [--large BYTES] [--seed N] [--sections LIST] [--soak N] [--nodes N]
 *                  [--offload-wait S] [--realtime-threads yes|no] [--communicators N]
 *                  [--thread-multiple]
 */
#include <mpi.h>

#include <dirent.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../../examples/nicoll_pvar.h"
#include "mpi_test.h"

enum { C_BARRIER, C_BCAST, C_ALLGATHER, C_IBARRIER, C_IBCAST, C_IALLGATHER, N_COLLS };
static const char *coll_names[N_COLLS] = {"barrier",  "bcast",  "allgather",
                                          "ibarrier", "ibcast", "iallgather"};
static const char *coll_mpi_names[N_COLLS] = {"MPI_Barrier",  "MPI_Bcast",  "MPI_Allgather",
                                              "MPI_Ibarrier", "MPI_Ibcast", "MPI_Iallgather"};
static int is_nonblocking(int coll) { return coll >= C_IBARRIER; }
static int base_coll(int coll) { return is_nonblocking(coll) ? coll - C_IBARRIER : coll; }

enum {
    S_BLOCKING = 1,
    S_NONBLOCKING = 2,
    S_BARRIER = 4,
    S_OUTSTANDING = 8,
    S_CONCURRENCY = 16,
    S_SOAK = 32,    /* not among the default sections */
    S_OFFLOAD = 64, /* nor this one */
    S_COMMUNICATORS = 128, /* nor this one */
};
static const char *section_names[] = {"blocking",    "nonblocking", "barrier",
                                      "outstanding", "concurrency", "soak",
                                      "offload",     "communicators"};
#define N_SECTIONS 8

#define MAX_PACKET_SIZES 8
static struct {
    int expect_nicoll;
    int uniform_bcast;
    long packet_sizes[MAX_PACKET_SIZES];
    int n_packet_sizes;
    long large;
    unsigned seed;
    unsigned sections;
    long soak; /* collectives the soak section runs */
    long nodes; /* --nodes: the nodes Open MPI must see, 0 unchecked */
    long offload_wait; /* seconds the offload section waits for the progress thread */
    int realtime_threads; /* --realtime-threads: -1 unchecked, 0 none wanted, 1 some */
    long communicators; /* duplicates the communicators section holds at once */
} opt = {0, 0, {4096}, 1, 3 * 1024 * 1024 + 5, 1, 0x1f, 1000000, 0, 30, -1, 1100};

static int world_rank, world_size;
static long long issued[N_COLLS]; /* calls on communicators of 2+ ranks: nicoll's to run */
/* Of those, the calls that move no data. Open MPI's MPI layer may return before any component
 * sees one (4.1 does for MPI_Bcast, MPI_Ibcast and MPI_Allgather with count 0, not for
 * MPI_Iallgather), so nicoll may or may not have run them. nicoll's counters may also exceed
 * what the test issued: with tuned left out, coll/basic's MPI_Allreduce (which the test uses
 * between its checks) broadcasts through nicoll. So the check is: at least every call that moves
 * data, and no fallback. */
static long long skippable[N_COLLS];
static int checks;                /* TAP lines printed */
static int complaints;            /* diagnostic lines this rank printed */

#define MAX_COMPLAINTS 12

/* One diagnostic line ("# rank R: ...") from any rank, at most MAX_COMPLAINTS per rank. */
static void complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void complain(const char *fmt, ...)
{
    if (complaints++ >= MAX_COMPLAINTS) {
        return;
    }
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    printf("# rank %d: %s%s\n", world_rank, line,
           MAX_COMPLAINTS == complaints ? " (further complaints of this rank not shown)" : "");
    fflush(stdout);
}

/* tap_report(), counting the checks. Collective on world. */
static int report(int ok, const char *what)
{
    ++checks;
    return tap_report(ok, what);
}

/* A communicator the test needs could not be made (a collective inside MPI_Comm_split or
 * MPI_Comm_dup failed, errors being returned): nothing after it can run on every rank alike. */
static void must_make(int rc, const char *what)
{
    if (MPI_SUCCESS != rc) {
        complain("%s failed (MPI error %d); the test stops here", what, rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* splitmix64: the same sequence on every rank for the same seed */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int random_below(uint64_t *state, int n) { return (int) (next_random(state) % (uint64_t) n); }

/* The reference: eight data bytes (in type-signature order) that rank `origin` contributes,
 * bytes 8 * word .. 8 * word + 7. No period: a byte misplaced by any distance is caught. */
static uint64_t pattern_word(int origin, uint64_t word, unsigned seed)
{
    uint64_t z = word * 0x9e3779b97f4a7c15ull ^ ((uint64_t) (unsigned) origin << 32 | seed);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A byte no collective may write holds the pattern of a rank that does not exist. */
#define SENTINEL_ORIGIN (-1000)

/* --- datatypes -------------------------------------------------------------------------------- */

/* A datatype as this test knows it, independently of MPI: the data blocks of one element in
 * type-map order, and the extent (lower bound 0). */
#define MAX_BLOCKS 3
typedef struct layout {
    const char *name;
    MPI_Datatype type;
    MPI_Aint extent;
    int nblocks;
    MPI_Aint offset[MAX_BLOCKS];
    int length[MAX_BLOCKS];
    size_t size; /* data bytes of one element */
} layout_t;

static layout_t l_byte = {"MPI_BYTE", 0, 1, 1, {0}, {1}, 1};
static layout_t l_int = {"MPI_INT", 0, 4, 1, {0}, {4}, 4};
static layout_t l_double = {"MPI_DOUBLE", 0, 8, 1, {0}, {8}, 8};
/* 2 blocks of 3 ints, stride 5 ints: bytes 12..19 are a gap */
static layout_t l_vector = {"vector(2x3 int, stride 5)", 0, 32, 2, {0, 20}, {12, 12}, 24};
/* {int; double; char[3]} at 0, 8, 20: gaps 4..7, 16..19, 23 (extent from MPI) */
static layout_t l_struct = {"struct{int@0,double@8,char[3]@20}", 0, 0, 3, {0, 8, 20}, {4, 8, 3}, 15};
/* 3 shorts resized to an extent of 10: bytes 6..9 are a gap, elements are not aligned */
static layout_t l_resized = {"3 short resized to 10", 0, 10, 1, {0}, {6}, 6};

static int define_layouts(void)
{
    l_byte.type = MPI_BYTE;
    l_int.type = MPI_INT;
    l_double.type = MPI_DOUBLE;
    MPI_Type_vector(2, 3, 5, MPI_INT, &l_vector.type);
    MPI_Type_commit(&l_vector.type);

    int lengths[3] = {1, 1, 3};
    MPI_Aint displacements[3] = {0, 8, 20};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Type_create_struct(3, lengths, displacements, types, &l_struct.type);
    MPI_Type_commit(&l_struct.type);

    MPI_Datatype shorts;
    MPI_Type_contiguous(3, MPI_SHORT, &shorts);
    MPI_Type_create_resized(shorts, 0, 10, &l_resized.type);
    MPI_Type_commit(&l_resized.type);
    MPI_Type_free(&shorts);

    /* The test's description must agree with MPI's view of each type. */
    layout_t *all[] = {&l_byte, &l_int, &l_double, &l_vector, &l_struct, &l_resized};
    int ok = 1;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) {
        MPI_Aint lb, extent;
        int size;
        MPI_Type_get_extent(all[i]->type, &lb, &extent);
        MPI_Type_size(all[i]->type, &size);
        if (all[i] == &l_struct) {
            l_struct.extent = extent;
        }
        if (0 != lb || extent != all[i]->extent || (size_t) size != all[i]->size ||
            extent < all[i]->offset[all[i]->nblocks - 1] + all[i]->length[all[i]->nblocks - 1]) {
            complain("datatype %s: MPI says lb %ld extent %ld size %d, the test expects 0 %ld %zu",
                     all[i]->name, (long) lb, (long) extent, size, (long) all[i]->extent,
                     all[i]->size);
            ok = 0;
        }
    }
    return ok;
}

/* One side of a collective: `count` elements of `layout`. */
typedef struct side {
    const layout_t *layout;
    int count;
} side_t;

/* A type case: how the sender's and the receivers' sides are described for a count. The
 * receivers' type may differ from the sender's as long as the type signatures match. */
typedef struct tcase {
    const char *name;
    const layout_t *send;
    const layout_t *recv; /* NULL: one contiguous type of the whole message (in MPI_INT) */
    int recv_per_send;    /* receive count per send count */
} tcase_t;

static const tcase_t tcases[] = {
    {"MPI_BYTE", &l_byte, &l_byte, 1},
    {"MPI_INT", &l_int, &l_int, 1},
    {"MPI_DOUBLE", &l_double, &l_double, 1},
    {"vector", &l_vector, &l_vector, 1},
    {"struct", &l_struct, &l_struct, 1},
    {"resized", &l_resized, &l_resized, 1},
    {"N MPI_INT as 1 contiguous(N)", &l_int, NULL, 0},
    {"N vectors as 6N MPI_INT", &l_vector, &l_int, 6},
};
#define N_TCASES ((int) (sizeof tcases / sizeof tcases[0]))

/* The type case, or MPI_INT where --uniform-bcast rules out a bcast whose root and receivers
 * use different types (coll/tuned's segmented bcasts cannot: open-mpi/ompi#199, #1763, #10523). */
static const tcase_t *usable(int coll, int t)
{
    int mixed = tcases[t].recv != tcases[t].send;
    return opt.uniform_bcast && mixed && C_BCAST == base_coll(coll) ? NULL : &tcases[t];
}

/* Both sides of a type case for `count` send elements; `own` receives the contiguous type a
 * case may build (free it with release_sides). */
static void make_sides(const tcase_t *tc, int count, side_t *send, side_t *recv, layout_t *own)
{
    send->layout = tc->send;
    send->count = count;
    if (NULL != tc->recv) {
        recv->layout = tc->recv;
        recv->count = count * tc->recv_per_send;
        return;
    }
    *own = (layout_t){"contiguous(N MPI_INT)", 0, (MPI_Aint) 4 * count, 1, {0}, {4 * count},
                      (size_t) 4 * count};
    MPI_Type_contiguous(count, MPI_INT, &own->type);
    MPI_Type_commit(&own->type);
    recv->layout = own;
    /* not 1 x an empty type for an empty message: Open MPI's MPI_Bcast returns at once where the
     * count is 0, without looking at the type, so the root would send nothing to match it */
    recv->count = count > 0;
}

static void release_sides(const tcase_t *tc, layout_t *own)
{
    if (NULL == tc->recv) {
        MPI_Type_free(&own->type);
    }
}

/* --- buffers ---------------------------------------------------------------------------------- */

#define GUARD 64

/* A buffer with GUARD bytes on either side, and the image it must have after the collective. */
typedef struct region {
    unsigned char *actual, *expected; /* each GUARD + bytes + GUARD */
    size_t bytes;
} region_t;

static void region_alloc(region_t *r, size_t bytes, unsigned seed)
{
    size_t words = (bytes + 2 * GUARD + 7) / 8;
    r->bytes = bytes;
    r->actual = malloc(words * 8);
    r->expected = malloc(words * 8);
    if (NULL == r->actual || NULL == r->expected) {
        fprintf(stderr, "test_coll: out of memory for %zu bytes\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t w = 0; w < words; ++w) {
        uint64_t v = pattern_word(SENTINEL_ORIGIN, w, seed);
        memcpy(r->actual + 8 * w, &v, 8);
    }
    memcpy(r->expected, r->actual, words * 8);
}

static void region_free(region_t *r)
{
    free(r->actual);
    free(r->expected);
    r->actual = r->expected = NULL;
}

static void *user(region_t *r) { return r->actual + GUARD; }

/* Writes origin's data bytes of `s` at `at` (a buffer's start plus a block's displacement). */
static void fill(unsigned char *at, const side_t *s, int origin, unsigned seed)
{
    const layout_t *l = s->layout;
    uint64_t k = 0, word = 0;
    for (int e = 0; e < s->count; ++e) {
        unsigned char *element = at + (size_t) e * l->extent;
        for (int b = 0; b < l->nblocks; ++b) {
            for (int j = 0; j < l->length[b]; ++j, ++k) {
                if (0 == (k & 7)) word = pattern_word(origin, k >> 3, seed);
                element[l->offset[b] + j] = (unsigned char) (word >> (8 * (k & 7)));
            }
        }
    }
}

/* Where a byte of a buffer of blocks of `s` (one per origin rank, or one from `root` when
 * root >= 0) lies, in words, for a complaint. */
static void describe(char *out, size_t n, const region_t *r, size_t position, const side_t *s,
                     int root)
{
    long at = (long) position - GUARD;
    if (at < 0 || (size_t) at >= r->bytes) {
        snprintf(out, n, "guard byte %ld %s the buffer", at < 0 ? -at : at - (long) r->bytes,
                 at < 0 ? "before" : "after");
        return;
    }
    const layout_t *l = s->layout;
    size_t block_bytes = (size_t) s->count * l->extent;
    size_t block = block_bytes ? (size_t) at / block_bytes : 0;
    size_t within = (size_t) at - block * block_bytes;
    size_t origin = root >= 0 ? (size_t) root : block;
    size_t element = within / l->extent, offset = within % l->extent, k = element * l->size;
    for (int b = 0; b < l->nblocks; ++b) {
        if ((MPI_Aint) offset >= l->offset[b] && (MPI_Aint) offset < l->offset[b] + l->length[b]) {
            snprintf(out, n, "byte %ld (from rank %zu: element %zu, data byte %zu)", at, origin,
                     element, k + (offset - l->offset[b]));
            return;
        }
        k += l->length[b];
    }
    snprintf(out, n, "byte %ld (rank %zu's part: element %zu, gap at offset %zu of %ld)", at,
             origin, element, offset, (long) l->extent);
}

/* 1 when the buffer holds exactly its expected image; otherwise one complaint naming the first
 * wrong byte and how many are wrong. */
static int region_check(const region_t *r, const side_t *s, int root, const char *what)
{
    size_t n = r->bytes + 2 * GUARD;
    if (0 == memcmp(r->actual, r->expected, n)) {
        return 1;
    }
    size_t first = 0, wrong = 0;
    for (size_t i = 0; i < n; ++i) {
        if (r->actual[i] != r->expected[i]) {
            if (0 == wrong++) first = i;
        }
    }
    char where[160];
    describe(where, sizeof where, r, first, s, root);
    complain("%s: %zu of %zu bytes wrong; first: %s is 0x%02x, expected 0x%02x", what, wrong,
             r->bytes, where, r->actual[first], r->expected[first]);
    return 0;
}

/* --- one collective as an operation: prepare, start, finish and check ------------------------ */

typedef struct comm_info {
    MPI_Comm comm; /* MPI_COMM_NULL where this rank is not a member */
    const char *name;
    int rank, size;
} comm_info_t;

typedef struct op {
    int coll;
    const comm_info_t *c;
    int root;
    const tcase_t *tc;
    int count; /* send count */
    int in_place;
    unsigned seed;
    side_t send, recv;
    layout_t own;
    region_t buf;  /* bcast: the buffer; allgather: the receive buffer */
    region_t sbuf; /* allgather's send buffer (not with MPI_IN_PLACE) */
    MPI_Request req;
    int rc;
} op_t;

static void op_prepare(op_t *op)
{
    const comm_info_t *c = op->c;
    op->req = MPI_REQUEST_NULL;
    op->rc = MPI_SUCCESS;
    op->buf.actual = op->sbuf.actual = NULL;
    if (C_BARRIER == base_coll(op->coll)) {
        return;
    }
    make_sides(op->tc, op->count, &op->send, &op->recv, &op->own);
    if (C_BCAST == base_coll(op->coll)) {
        const side_t *mine = c->rank == op->root ? &op->send : &op->recv;
        region_alloc(&op->buf, (size_t) mine->count * mine->layout->extent, op->seed);
        fill(op->buf.expected + GUARD, mine, op->root, op->seed);
        if (c->rank == op->root) {
            fill(op->buf.actual + GUARD, mine, op->root, op->seed);
        }
        return;
    }
    size_t block = (size_t) op->recv.count * op->recv.layout->extent;
    region_alloc(&op->buf, block * c->size, op->seed);
    for (int origin = 0; origin < c->size; ++origin) {
        fill(op->buf.expected + GUARD + origin * block, &op->recv, origin, op->seed);
    }
    if (op->in_place) {
        fill(op->buf.actual + GUARD + c->rank * block, &op->recv, c->rank, op->seed);
    } else {
        region_alloc(&op->sbuf, (size_t) op->send.count * op->send.layout->extent,
                     op->seed * 3 + 1);
        fill(op->sbuf.actual + GUARD, &op->send, c->rank, op->seed);
        fill(op->sbuf.expected + GUARD, &op->send, c->rank, op->seed);
    }
}

/* Calls the collective (a blocking one completes here). */
static void op_start(op_t *op)
{
    const comm_info_t *c = op->c;
    const side_t *mine = c->rank == op->root ? &op->send : &op->recv;
    if (c->size > 1) {
        ++issued[op->coll];
        const int b = base_coll(op->coll);
        skippable[op->coll] +=
            (C_BCAST == b && 0 == mine->count) ||
            (C_ALLGATHER == b && (0 == op->recv.count || (!op->in_place && 0 == op->send.count)));
    }
    const void *sendbuf = op->in_place ? MPI_IN_PLACE : user(&op->sbuf);
    switch (op->coll) {
    case C_BARRIER: op->rc = MPI_Barrier(c->comm); break;
    case C_IBARRIER: op->rc = MPI_Ibarrier(c->comm, &op->req); break;
    case C_BCAST:
        op->rc = MPI_Bcast(user(&op->buf), mine->count, mine->layout->type, op->root, c->comm);
        break;
    case C_IBCAST:
        op->rc = MPI_Ibcast(user(&op->buf), mine->count, mine->layout->type, op->root, c->comm,
                            &op->req);
        break;
    case C_ALLGATHER:
        op->rc = MPI_Allgather(sendbuf, op->send.count, op->send.layout->type, user(&op->buf),
                               op->recv.count, op->recv.layout->type, c->comm);
        break;
    case C_IALLGATHER:
        op->rc = MPI_Iallgather(sendbuf, op->send.count, op->send.layout->type, user(&op->buf),
                                op->recv.count, op->recv.layout->type, c->comm, &op->req);
        break;
    }
}

static void op_describe(char *out, size_t n, const op_t *op)
{
    if (C_BARRIER == base_coll(op->coll)) {
        snprintf(out, n, "%s on %s", coll_mpi_names[op->coll], op->c->name);
        return;
    }
    char root[32] = "";
    if (C_BCAST == base_coll(op->coll)) {
        snprintf(root, sizeof root, " root %d", op->root);
    }
    snprintf(out, n, "%s on %s%s, %s, count %d%s (seed %u)", coll_mpi_names[op->coll],
             op->c->name, root, op->tc->name, op->count, op->in_place ? ", MPI_IN_PLACE" : "",
             op->seed);
}

/* Checks the buffers after completion and frees them; 1 when all is right. */
static int op_check(op_t *op)
{
    char what[256];
    op_describe(what, sizeof what, op);
    int ok = 1;
    if (MPI_SUCCESS != op->rc) {
        char error[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(op->rc, error, &len);
        complain("%s: returned %s", what, error);
        ok = 0;
    }
    if (C_BARRIER == base_coll(op->coll)) {
        return ok;
    }
    if (C_BCAST == base_coll(op->coll)) {
        ok &= region_check(&op->buf, op->c->rank == op->root ? &op->send : &op->recv, op->root,
                           what);
    } else {
        ok &= region_check(&op->buf, &op->recv, -1, what);
        if (!op->in_place) {
            char send_what[300];
            snprintf(send_what, sizeof send_what, "%s: the send buffer", what);
            ok &= region_check(&op->sbuf, &op->send, op->c->rank, send_what);
            region_free(&op->sbuf);
        }
    }
    region_free(&op->buf);
    release_sides(op->tc, &op->own);
    return ok;
}

/* Runs one collective to completion (MPI_Wait for a nonblocking one) and checks it. */
static int run_one(op_t *op)
{
    op_prepare(op);
    op_start(op);
    if (is_nonblocking(op->coll) && MPI_SUCCESS == op->rc) {
        op->rc = MPI_Wait(&op->req, MPI_STATUS_IGNORE);
    }
    return op_check(op);
}

/* --- counts --------------------------------------------------------------------------------- */

/* Send counts for a message of `unit` bytes per count: 0, 1, each packet boundary -1/0/+1 (one
 * packet, two packets, and one packet 24 bytes smaller in case the packet size counts the
 * engine's header), and `large` bytes (made odd). Returns how many. */
#define MAX_COUNTS (2 + MAX_PACKET_SIZES * 9 + 1)
static int counts_for(size_t unit, long large, int *counts)
{
    int n = 0;
    counts[n++] = 0;
    counts[n++] = 1;
    for (int p = 0; p < opt.n_packet_sizes; ++p) {
        long sizes[3] = {opt.packet_sizes[p], 2 * opt.packet_sizes[p], opt.packet_sizes[p] - 24};
        for (int s = 0; s < 3; ++s) {
            long boundary = sizes[s] / (long) unit;
            for (long c = boundary - 1; c <= boundary + 1; ++c) {
                int seen = 0;
                for (int i = 0; i < n; ++i) seen |= counts[i] == c;
                if (c > 1 && !seen) counts[n++] = (int) c;
            }
        }
    }
    long big = large / (long) unit;
    counts[n++] = (int) (big > 1 ? big | 1 : 1);
    return n;
}

/* --- sections ------------------------------------------------------------------------------ */

/* Messages from this size on run with one type case each: they pack and unpack through the
 * same code as smaller ones, and each takes tens of milliseconds to fill, move and check. */
#define SWEEP_ONE_TYPE_BYTES (1L << 20)

/* Type case x count, each with one variant: a root (bcast) or with or without MPI_IN_PLACE
 * (allgather), rotating over the type cases, so that on up to 8 ranks every count also runs with
 * every root and both variants. Pairs, not the whole product: each call costs milliseconds on an
 * oversubscribed machine, more on a loaded one, and the product on 8 ranks is 8 times longer
 * without covering a pair more. Counts of SWEEP_ONE_TYPE_BYTES and more run with one type case,
 * rotating too. */
static int sweep(const comm_info_t *c, int coll, int *calls)
{
    int ok = 1, bcast = C_BCAST == base_coll(coll);
    /* every member runs the same sweep, so a local sequence gives every call the same seed */
    unsigned seq = opt.seed * 1000003u + (unsigned) coll * 100000u;
    for (int t = 0; t < N_TCASES; ++t) {
        if (NULL == usable(coll, t)) continue;
        int counts[MAX_COUNTS];
        int n = counts_for(tcases[t].send->size, bcast ? opt.large : opt.large / c->size, counts);
        for (int i = 0; i < n; ++i) {
            if ((long) counts[i] * (long) tcases[t].send->size >= SWEEP_ONE_TYPE_BYTES &&
                0 != (t + i) % N_TCASES) {
                continue;
            }
            int v = (t + i) % (bcast ? c->size : 2);
            op_t op = {.coll = coll,
                       .c = c,
                       .root = bcast ? v : 0,
                       .tc = &tcases[t],
                       .count = counts[i],
                       .in_place = !bcast && 1 == v,
                       .seed = ++seq};
            ok &= run_one(&op);
            ++*calls;
        }
    }
    return ok;
}

static void section_sweep(const comm_info_t *comms, int ncomms, int nonblocking)
{
    for (int b = C_BCAST; b <= C_ALLGATHER; ++b) {
        int coll = nonblocking ? b + C_IBARRIER : b;
        for (int i = 0; i < ncomms; ++i) {
            const comm_info_t *c = &comms[i];
            int calls = 0, ok = MPI_COMM_NULL == c->comm ? 1 : sweep(c, coll, &calls);
            char what[300];
            int counts[MAX_COUNTS];
            int n = counts_for(1, opt.large, counts), ncases = 0;
            for (int t = 0; t < N_TCASES; ++t) ncases += NULL != usable(coll, t);
            snprintf(what, sizeof what,
                     "%s on %s (%d ranks): %d calls over %d type cases x %d counts (0, 1, "
                     "packet boundaries -1/0/+1, %ld bytes; from 1 MiB one type case each), %s: "
                     "byte-exact, gaps and guards untouched",
                     coll_mpi_names[coll], c->name, c->size, calls, ncases, n, opt.large,
                     C_BCAST == b ? "roots rotating" : "with/without MPI_IN_PLACE rotating");
            report(ok, what);
        }
    }
}

/* Each rank in turn enters late (and random ranks a little late); for every barrier the latest
 * entry must precede the earliest exit. MPI_Ibarrier is completed by an MPI_Test loop, and its
 * exit is the first MPI_Test that says complete. */
static int barriers_hold(const comm_info_t *c, int coll, int rounds)
{
    int n = rounds + c->size;
    double *entry = malloc(n * sizeof(double)), *exit_ = malloc(n * sizeof(double));
    double *max_entry = malloc(n * sizeof(double)), *min_exit = malloc(n * sizeof(double));
    uint64_t rng = opt.seed * 31u + (unsigned) world_rank;
    int ok = 1;
    for (int i = 0; i < n; ++i) {
        if (i < c->size ? c->rank == i : 0 == random_below(&rng, 4)) {
            spin_us(i < c->size ? 2000 : random_below(&rng, 100));
        }
        op_t op = {.coll = coll, .c = c};
        op_prepare(&op);
        entry[i] = now_us();
        op_start(&op);
        if (C_IBARRIER == coll) {
            int done = 0;
            while (MPI_SUCCESS == op.rc && !done) {
                op.rc = MPI_Test(&op.req, &done, MPI_STATUS_IGNORE);
            }
        }
        exit_[i] = now_us();
        ok &= op_check(&op);
    }
    MPI_Reduce(entry, max_entry, n, MPI_DOUBLE, MPI_MAX, 0, c->comm);
    MPI_Reduce(exit_, min_exit, n, MPI_DOUBLE, MPI_MIN, 0, c->comm);
    if (0 == c->rank) {
        for (int i = 0; i < n; ++i) {
            if (min_exit[i] < max_entry[i]) {
                complain("%s %d on %s: a rank left %.1f us before the last one entered",
                         coll_mpi_names[coll], i, c->name, max_entry[i] - min_exit[i]);
                ok = 0;
            }
        }
    }
    free(entry);
    free(exit_);
    free(max_entry);
    free(min_exit);
    return ok;
}

static void section_barrier(const comm_info_t *comms, int ncomms)
{
    int colls[2] = {C_BARRIER, C_IBARRIER};
    for (int b = 0; b < 2; ++b) {
        for (int i = 0; i < ncomms; ++i) {
            const comm_info_t *c = &comms[i];
            int ok = MPI_COMM_NULL == c->comm ? 1 : barriers_hold(c, colls[b], 40);
            char what[300];
            snprintf(what, sizeof what,
                     "%s on %s (%d ranks): each rank in turn 2 ms late, 40 randomly late: no rank "
                     "leaves before the last enters",
                     coll_mpi_names[colls[b]], c->name, c->size);
            report(ok, what);
        }
    }
}

enum { W_WAITALL, W_REVERSE, W_RANDOM, W_TEST, W_TESTANY, W_TESTSOME, N_WAYS };
static const char *way_names[N_WAYS] = {
    "MPI_Waitall", "MPI_Wait in reverse order", "MPI_Wait in a random order on each rank",
    "an MPI_Test loop", "an MPI_Testany loop", "an MPI_Testsome loop"};

/* Completes the requests `way`; errors are noted in the ops. */
static void complete(op_t **ops, int n, int way, uint64_t *rng)
{
    MPI_Request *reqs = malloc((n + 1) * sizeof(MPI_Request));
    int *order = malloc((n + 1) * sizeof(int));
    MPI_Status *statuses = malloc((n + 1) * sizeof(MPI_Status));
    int rc = MPI_SUCCESS, left = 0, index, done;
    for (int i = 0; i < n; ++i) {
        reqs[i] = ops[i]->req;
        order[i] = W_REVERSE == way ? n - 1 - i : i;
        left += MPI_REQUEST_NULL != reqs[i];
    }
    switch (way) {
    case W_WAITALL:
        rc = MPI_Waitall(n, reqs, statuses);
        if (MPI_ERR_IN_STATUS == rc) {
            for (int i = 0; i < n; ++i) ops[i]->rc = statuses[i].MPI_ERROR;
            rc = MPI_SUCCESS;
        }
        left = 0;
        break;
    case W_REVERSE:
    case W_RANDOM:
        for (int i = 0; W_RANDOM == way && i < n; ++i) { /* Fisher-Yates */
            int j = i + random_below(rng, n - i), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int i = 0; i < n; ++i) {
            int r = MPI_Wait(&reqs[order[i]], MPI_STATUS_IGNORE);
            if (MPI_SUCCESS != r) ops[order[i]]->rc = r;
        }
        left = 0;
        break;
    case W_TEST:
        while (left > 0) {
            for (int i = 0; i < n; ++i) {
                if (MPI_REQUEST_NULL == reqs[i]) continue;
                int r = MPI_Test(&reqs[i], &done, MPI_STATUS_IGNORE);
                if (done) reqs[i] = MPI_REQUEST_NULL;
                if (MPI_SUCCESS != r) {
                    ops[i]->rc = r;
                    reqs[i] = MPI_REQUEST_NULL;
                    done = 1;
                }
                left -= done;
            }
        }
        break;
    case W_TESTANY:
        while (left > 0) {
            rc = MPI_Testany(n, reqs, &index, &done, MPI_STATUS_IGNORE);
            if (MPI_SUCCESS != rc) break;
            if (done && MPI_UNDEFINED != index) --left;
            if (done && MPI_UNDEFINED == index) break; /* none active: cannot happen */
        }
        break;
    case W_TESTSOME:
        while (left > 0) {
            rc = MPI_Testsome(n, reqs, &done, order, statuses);
            if (MPI_SUCCESS != rc || MPI_UNDEFINED == done) break;
            left -= done;
        }
        break;
    }
    if (MPI_SUCCESS != rc || 0 != left) {
        complain("completing %d requests with %s failed (rc %d, %d left)", n, way_names[way], rc,
                 left);
        for (int i = 0; i < n; ++i) ops[i]->rc = MPI_ERR_OTHER;
    }
    for (int i = 0; i < n; ++i) {
        if (MPI_REQUEST_NULL != reqs[i] && MPI_SUCCESS == ops[i]->rc) {
            complain("request %d still active after %s", i, way_names[way]);
            ops[i]->rc = MPI_ERR_OTHER;
        }
    }
    free(statuses);
    free(order);
    free(reqs);
}

/* One round of `per_round` collectives over `comms`, started in the same random order on every
 * rank (a communicator's collectives must be) from `shared`, the nonblocking ones outstanding at
 * once and completed `way`; with `mixed`, blocking ones too, run to completion between the
 * starts. `all` and `mine` have room for per_round. Returns 1 when every result was right. */
static int outstanding_round(const comm_info_t *comms, int ncomms, int per_round, int way,
                             int mixed, uint64_t *shared, uint64_t *local, op_t *all, op_t **mine)
{
    static const int byte_cases[] = {0, 1, 3, 6, 7}; /* a subset of tcases */
    int n = 0, ok = 1;
    for (int i = 0; i < per_round; ++i) {
        op_t *op = &all[i];
        int ci = random_below(shared, ncomms);
        const comm_info_t *c = &comms[ci];
        /* ibcast twice as often as the others; with `mixed` each blocking one as often */
        int kind = random_below(shared, mixed ? 8 : 5);
        int root_draw = random_below(shared, 1 << 20);
        int tc = byte_cases[random_below(shared, 5)];
        int count_kind = random_below(shared, 8);
        int in_place = random_below(shared, 2);
        unsigned seed = (unsigned) next_random(shared);
        long packet = opt.packet_sizes[0];
        size_t unit = tcases[tc].send->size;
        int count = 0 == count_kind   ? 0
                    : 1 == count_kind ? 1
                    : 2 == count_kind ? (int) ((3 * packet + 7) / unit)
                    : 3 == count_kind ? (int) (100000 / unit)
                                      : 1 + random_below(shared, 2000);
        if (MPI_COMM_NULL == c->comm) {
            continue;
        }
        static const int colls[8] = {C_IBCAST,     C_IBCAST, C_IBARRIER, C_IALLGATHER,
                                     C_IALLGATHER, C_BCAST,  C_ALLGATHER, C_BARRIER};
        int coll = colls[kind];
        *op = (op_t){.coll = coll,
                     .c = c,
                     .root = root_draw % c->size,
                     .tc = usable(coll, tc) ? usable(coll, tc) : &tcases[1],
                     .count = count,
                     .seed = seed};
        op->in_place = C_ALLGATHER == base_coll(op->coll) && in_place;
        if (!is_nonblocking(coll)) {
            ok &= run_one(op);
            continue;
        }
        op_prepare(op);
        op_start(op);
        if (MPI_SUCCESS != op->rc) {
            op->req = MPI_REQUEST_NULL;
        }
        mine[n++] = op;
    }
    complete(mine, n, way, local);
    for (int i = 0; i < n; ++i) {
        ok &= op_check(mine[i]);
    }
    return ok;
}

/* The count of MPI_INT of a message of a few packets (staged where the node has room for it). */
static int few_packets_ints(void)
{
    return (int) (3 * opt.packet_sizes[0] / (long) sizeof(int)) + 1;
}

/* MPI_Comm_free while a communicator's nonblocking collectives are in flight: they complete
 * normally (MPI 4.1 §7.4.3), the communicator going only once they are freed. */
static void freed_in_flight(const comm_info_t *world, int rounds)
{
    int ok = 1;
    for (int r = 0; r < rounds; ++r) {
        comm_info_t c = *world;
        c.name = "a duplicate of world, freed in flight";
        MPI_Comm_dup(world->comm, &c.comm);
        MPI_Comm_set_errhandler(c.comm, MPI_ERRORS_RETURN);
        const int count = r % 2 ? few_packets_ints() : 1;
        op_t ops[3] = {{.coll = C_IBCAST, .c = &c, .root = r % c.size, .tc = &tcases[1],
                        .count = count, .seed = 7001u + (unsigned) r},
                       {.coll = C_IALLGATHER, .c = &c, .tc = &tcases[1], .count = 3,
                        .seed = 8001u + (unsigned) r},
                       {.coll = C_IBARRIER, .c = &c}};
        MPI_Request reqs[3];
        for (int i = 0; i < 3; ++i) {
            op_prepare(&ops[i]);
            op_start(&ops[i]);
            reqs[i] = ops[i].req;
        }
        MPI_Comm_free(&c.comm);
        const int rc = MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 3; ++i) {
            ops[i].rc = MPI_SUCCESS != ops[i].rc ? ops[i].rc : rc;
            ok &= op_check(&ops[i]);
        }
    }
    char what[200];
    snprintf(what, sizeof what,
             "%d duplicates of world freed with an MPI_Ibcast, an MPI_Iallgather and an "
             "MPI_Ibarrier in flight, completed after: byte-exact",
             rounds);
    report(ok, what);
}

/* This process's resident memory in KiB (Linux). */
static long rss_kib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (NULL != f) {
        if (2 != fscanf(f, "%ld %ld", &pages, &resident)) resident = 0;
        fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* A freed communicator goes, and nicoll's transports with it: resident memory stays flat over
 * communicators made, used and freed one after another (over the PML, nicoll's posted receives
 * hold a communicator until its ranks agreed that no packet is still coming). */
static void freed_communicators_go(const comm_info_t *world)
{
    enum { WARM = 30, N = 150 };
    const long limit_kib = 512; /* (kept over the PML: 1.5-3.8 MB on 2-4 ranks; now 0) */
    long before = 0;
    int ok = 1;
    for (int i = 0; i < WARM + N; ++i) {
        if (WARM == i) before = rss_kib();
        MPI_Comm dup;
        must_make(MPI_Comm_dup(world->comm, &dup), "MPI_Comm_dup");
        int x = i % world->size == world->rank ? i : -1;
        ok &= MPI_SUCCESS == MPI_Bcast(&x, 1, MPI_INT, i % world->size, dup) && i == x;
        MPI_Comm_free(&dup);
    }
    const long grown = rss_kib() - before;
    if (grown >= limit_kib) {
        complain("resident memory grew by %ld KiB over %d communicators made, used and freed",
                 grown, N);
    }
    char what[200];
    snprintf(what, sizeof what,
             "%d duplicates of world made, used (MPI_Bcast) and freed in turn: correct, and "
             "resident memory grows by under %ld KiB",
             N, limit_kib);
    report(ok && grown < limit_kib, what);
}

/* Rounds of `per_round` nonblocking collectives outstanding at once over `comms`, completed
 * each of the N_WAYS ways; then communicators freed in flight, and freed in turn. */
static void section_outstanding(const comm_info_t *comms, int ncomms, int per_round)
{
    op_t *all = calloc(per_round, sizeof(op_t));
    op_t **mine = malloc(per_round * sizeof(op_t *));
    uint64_t shared = opt.seed * 7u + 11u;                         /* same on every rank */
    uint64_t local = opt.seed * 13u + (unsigned) world_rank * 97u; /* differs per rank */
    for (int way = 0; way < N_WAYS; ++way) {
        int ok = outstanding_round(comms, ncomms, per_round, way, 0, &shared, &local, all, mine);
        char what[300];
        snprintf(what, sizeof what,
                 "%d nonblocking collectives outstanding on %d communicators (world, 2 dups, "
                 "halves, odd split), completed by %s: byte-exact",
                 per_round, ncomms, way_names[way]);
        report(ok, what);
    }
    free(mine);
    free(all);
    freed_in_flight(&comms[0], 6);
    if (opt.nodes <= 1) { /* (across emulated nodes every MPI_Comm_dup agrees on a context id
                           * over TCP: 700 of them took minutes on a loaded machine) */
        freed_communicators_go(&comms[0]);
    }
}

/* Waits, with no MPI call, until the counter grew by `want` since `before` (at most
 * --offload-wait seconds); 0, said, when it did not. */
static int offloaded_by(nicoll_counter_t *counter, unsigned long long before, unsigned want,
                        const char *round)
{
    unsigned long long now = before;
    double waited = 0;
    while (0 == nicoll_counter_read(counter, &now) && now < before + want &&
           waited < opt.offload_wait) {
        usleep(1000);
        waited += 0.001;
    }
    if (now < before + want) {
        complain("%s: coll_nicoll_offloaded grew by %llu in %.0f s, want %u", round, now - before,
                 waited, want);
        return 0;
    }
    return 1;
}

/* This process's threads scheduled SCHED_FIFO, from /proc/self/task/TID/stat (the policy is its
 * 41st field, counted past the command's closing parenthesis); -1 where none can be read. */
static int realtime_threads(void)
{
    DIR *dir = opendir("/proc/self/task");
    if (NULL == dir) return -1;
    int n = 0, tasks = 0;
    for (struct dirent *e; NULL != (e = readdir(dir));) {
        char path[300], line[1024];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        FILE *f = '.' == e->d_name[0] ? NULL : fopen(path, "r");
        if (NULL == f) continue;
        const char *c = NULL != fgets(line, sizeof line, f) ? strrchr(line, ')') : NULL;
        fclose(f);
        int field = 2, policy = -1; /* the field after ')' is the third */
        for (; NULL != c && *c && policy < 0; ++c) {
            if (' ' == *c && 41 == ++field) policy = atoi(c + 1);
        }
        tasks += policy >= 0;
        n += 1 == policy; /* SCHED_FIFO */
    }
    closedir(dir);
    return tasks > 0 ? n : -1;
}

static double cpu_ms(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return 1e3 * (double) (u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-3 * (double) (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/* An idle process burns no CPU: its progress thread sleeps once nothing is in flight, also after
 * more communicators than it has doorbells for (63) were used and freed. */
static void idle_burns_nothing(const comm_info_t *world)
{
    enum { N = 70 };
    const double limit_ms = 10;
    MPI_Comm dups[N];
    int x = world->rank;
    for (int i = 0; i < N; ++i) {
        MPI_Request req;
        MPI_Comm_dup(world->comm, &dups[i]);
        MPI_Ibcast(&x, 1, MPI_INT, 0, dups[i], &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < N; ++i) {
        MPI_Comm_free(&dups[i]);
    }
    MPI_Barrier(world->comm);
    const double before = cpu_ms();
    usleep(300000);
    const double used = cpu_ms() - before;
    if (used >= limit_ms) {
        complain("idle 300 ms after %d communicators were used and freed: %.1f ms of CPU", N, used);
    }
    char what[200];
    snprintf(what, sizeof what,
             "offload: idle 300 ms after %d communicators were used and freed, the process "
             "uses under %.0f ms of CPU",
             N, limit_ms);
    report(used < limit_ms && 0 == x, what);
}

/* The offload section (see the top). Round r: world rank r % size starts its collectives 0.2 s
 * after the others, so that their packets are there before it posts. Then a forwarding round
 * per rank but the root: that rank starts an MPI_Ibcast on MPI_COMM_WORLD only once every other
 * rank's is complete, as they tell it by a message it waits for in MPI_Recv (where nicoll has
 * no collective to progress), so the packets it forwards go before its host posts. */
static void section_offload(const comm_info_t *comms)
{
    nicoll_counter_t offloaded;
    if (0 != nicoll_counter_open(&offloaded, "coll_nicoll_offloaded")) {
        report(0, "offload: nicoll's counter coll_nicoll_offloaded can be read");
        return;
    }
    /* Each communicator set up first: a set-up runs Open MPI's progress, which completes what
     * it finds done. */
    for (int i = 0; i < 3; ++i) MPI_Barrier(comms[i].comm);
    uint64_t shared = opt.seed * 29u + 3u;
    for (int round = 0; round < 3; ++round) {
        op_t ops[3] = {{.coll = C_IBCAST, .c = &comms[0], .root = round % comms[0].size,
                        .tc = &tcases[1], .count = few_packets_ints()},
                       {.coll = C_IALLGATHER, .c = &comms[1], .tc = &tcases[0], .count = 1000},
                       {.coll = C_IBARRIER, .c = &comms[2]}};
        unsigned long long before = 0;
        int ok = 0 == nicoll_counter_read(&offloaded, &before);
        if (world_rank == round % world_size) {
            usleep(200000);
        }
        for (int i = 0; i < 3; ++i) {
            ops[i].seed = (unsigned) next_random(&shared);
            op_prepare(&ops[i]);
            op_start(&ops[i]);
        }
        char what[300];
        snprintf(what, sizeof what, "offload round %d", round);
        /* No MPI call until the thread is done: only MPI_T reads and sleeps. */
        ok = ok && offloaded_by(&offloaded, before, 3, what);
        MPI_Request reqs[3] = {ops[0].req, ops[1].req, ops[2].req};
        MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 3; ++i) {
            ops[i].req = MPI_REQUEST_NULL;
            ok &= op_check(&ops[i]);
        }
        snprintf(what, sizeof what,
                 "offload round %d (world rank %d late): MPI_Ibcast, MPI_Iallgather and "
                 "MPI_Ibarrier completed by the progress thread before any MPI call, byte-exact",
                 round, round % world_size);
        report(ok, what);
    }
    for (int late = 1; late < comms[0].size; ++late) {
        op_t op = {.coll = C_IBCAST, .c = &comms[0], .root = 0, .tc = &tcases[1],
                   .count = few_packets_ints(),
                   .seed = (unsigned) next_random(&shared)};
        op_prepare(&op);
        char what[300];
        snprintf(what, sizeof what, "offload forwarding round (world rank %d late)", late);
        unsigned long long before = 0;
        int ok = 0 == nicoll_counter_read(&offloaded, &before);
        if (world_rank == late) {
            for (int peer = 0; peer < world_size; ++peer) {
                if (peer != late) {
                    MPI_Recv(NULL, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                }
            }
            op_start(&op);
        } else {
            op_start(&op);
            ok = ok && offloaded_by(&offloaded, before, 1, what);
            MPI_Send(NULL, 0, MPI_BYTE, late, 0, MPI_COMM_WORLD);
        }
        MPI_Wait(&op.req, MPI_STATUS_IGNORE);
        ok &= op_check(&op);
        snprintf(what, sizeof what,
                 "offload forwarding round (world rank %d late): every other rank's MPI_Ibcast "
                 "complete before world rank %d started it, byte-exact", late, late);
        report(ok, what);
    }
    nicoll_counter_close(&offloaded);
    if (opt.realtime_threads >= 0) {
        const int n = realtime_threads();
        char what[200];
        snprintf(what, sizeof what, "offload: %s thread of this process at real-time priority "
                 "(SCHED_FIFO): %d", opt.realtime_threads ? "some" : "no", n);
        report(n >= 0 && (n > 0) == opt.realtime_threads, what);
    }
    idle_burns_nothing(&comms[0]);
}

/* The soak: opt.soak collective calls drawn (each runs on the communicator's groups, so a rank
 * runs those of the groups it belongs to), in rounds of 40 over world and 6 communicators of random sizes (random splits, random rank
 * orders), blocking and nonblocking mixed, every way of completing in turn, every result checked.
 * Memory must stay flat: the resident size at the end within 10 % (and 8 MiB) of its size after
 * the first tenth, when every buffer pool has grown to what the run needs. */
static void section_soak(const comm_info_t *world)
{
    enum { PER_ROUND = 40, NCOMMS = 7 };
    comm_info_t comms[NCOMMS] = {*world};
    uint64_t shared = opt.seed * 29u + 3u, local = opt.seed * 31u + (unsigned) world_rank * 7u;
    for (int i = 1; i < NCOMMS; ++i) {
        int color = random_below(&shared, 3), draw = (int) next_random(&shared) & 0xffff;
        /* every rank draws the same numbers, then picks its own color and key from them */
        int mine = (color + world_rank * (draw | 1)) % 4;
        int key = (int) ((unsigned) (world_rank * 7919 + draw) % 100003u);
        must_make(MPI_Comm_split(MPI_COMM_WORLD, 3 == mine ? MPI_UNDEFINED : mine, key,
                                 &comms[i].comm),
                  "the soak's MPI_Comm_split");
        comms[i].name = "random split";
        if (MPI_COMM_NULL != comms[i].comm) {
            MPI_Comm_set_errhandler(comms[i].comm, MPI_ERRORS_RETURN);
            MPI_Comm_rank(comms[i].comm, &comms[i].rank);
            MPI_Comm_size(comms[i].comm, &comms[i].size);
        }
    }
    op_t *all = calloc(PER_ROUND, sizeof(op_t));
    op_t **mine = malloc(PER_ROUND * sizeof(op_t *));
    long started = 0, settled = 0, last = 0;
    int ok = 1;
    double t0 = MPI_Wtime();
    for (long round = 0; started < opt.soak; ++round) {
        ok &= outstanding_round(comms, NCOMMS, PER_ROUND, (int) (round % N_WAYS), 1, &shared,
                                &local, all, mine);
        started += PER_ROUND;
        if (0 == settled && started >= opt.soak / 10) settled = rss_kib();
        if (started - last >= opt.soak / 20 || started >= opt.soak) {
            last = started;
            if (0 == world_rank) {
                printf("# soak: %ld of %ld collectives, %.0f s, rank 0 resident %ld KiB\n",
                       started, opt.soak, MPI_Wtime() - t0, rss_kib());
                fflush(stdout);
            }
        }
    }
    long end = rss_kib(), grown = end - settled;
    int flat = grown <= settled / 10 || grown <= 8 * 1024;
    if (!flat) {
        complain("resident memory grew from %ld KiB to %ld KiB after the first tenth", settled,
                 end);
    }
    for (int i = 1; i < NCOMMS; ++i) {
        if (MPI_COMM_NULL != comms[i].comm) MPI_Comm_free(&comms[i].comm);
    }
    free(mine);
    free(all);
    char what[300];
    snprintf(what, sizeof what,
             "soak: %ld blocking and nonblocking collectives on world and 6 random splits, every "
             "way of completing: byte-exact, resident memory flat after the first tenth",
             started);
    report(ok && flat, what);
}

/* The communicators section (see the top). */
static void section_communicators(const comm_info_t *world)
{
    comm_info_t *cs = malloc((size_t) opt.communicators * sizeof *cs);
    int ok = NULL != cs;
    long made = 0;
    const int count = few_packets_ints();
    for (; NULL != cs && made < opt.communicators; ++made) { /* (on, past a failed check) */
        comm_info_t *c = &cs[made];
        *c = *world;
        c->name = "a duplicate of world";
        if (MPI_SUCCESS != MPI_Comm_dup(world->comm, &c->comm)) {
            complain("MPI_Comm_dup failed after %ld duplicates", made);
            ok = 0;
            break;
        }
        MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
        op_t bcast = {.coll = C_BCAST, .c = c, .root = (int) (made % c->size),
                      .tc = &tcases[1], .count = count, .seed = (unsigned) made * 2 + 1};
        op_t allgather = {.coll = C_ALLGATHER, .c = c, .tc = &tcases[1], .count = 3,
                          .seed = (unsigned) made * 2 + 2};
        ok &= run_one(&bcast);
        ok &= run_one(&allgather);
        if (0 == world_rank && (made + 1) % 500 == 0) {
            printf("# communicators: %ld held\n", made + 1);
            fflush(stdout);
        }
    }
    for (long i = 0; i < made; ++i) {
        MPI_Comm_free(&cs[i].comm);
    }
    free(cs);
    char what[200];
    snprintf(what, sizeof what,
             "communicators: %ld duplicates of world held at once, an MPI_Bcast of %d MPI_INT "
             "and an MPI_Allgather on each, byte-exact",
             opt.communicators, count);
    report(ok, what);
}

/* Point-to-point payload: a function of (sender, tag, round, byte). */
static unsigned char p2p_byte(int from, int tag, int round, int i)
{
    return (unsigned char) (pattern_word(from + 7 * round, (uint64_t) i, (unsigned) tag) >>
                            (8 * (i & 7)));
}

/* Collectives on MPI_COMM_WORLD with point-to-point traffic in flight on it. Per round, each
 * rank posts a receive from its left neighbour with a specific tag and one from MPI_ANY_SOURCE
 * with MPI_ANY_TAG, sends to its right neighbour, runs a collective (a nonblocking one with an
 * MPI_Allreduce between start and completion), then sends to its left neighbour the message the
 * MPI_ANY_TAG receive must get: engine packets must never match it. */
static void section_concurrency(const comm_info_t *world, int rounds)
{
    int *ub, found;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &found);
    int tag_ub = found ? *ub : 32767;
    int tags[64], ntags = 0;
    for (int t = 0; t < 32; ++t) tags[ntags++] = t;
    int high[] = {100, 255, 256, 1000, 4096, 32767, tag_ub / 2, tag_ub - 2, tag_ub - 1, tag_ub};
    for (size_t i = 0; i < sizeof high / sizeof high[0]; ++i) {
        if (high[i] <= tag_ub) tags[ntags++] = high[i];
    }
    int left = (world_rank + world_size - 1) % world_size, right = (world_rank + 1) % world_size;
    uint64_t shared = opt.seed * 17u + 5u;
    int ok = 1, collectives = 0, allreduces = 0;
    enum { MAX_P2P = 3000 };
    unsigned char *out1 = malloc(MAX_P2P), *out2 = malloc(MAX_P2P);
    unsigned char *in1 = malloc(MAX_P2P), *in2 = malloc(MAX_P2P);
    for (int round = 0; round < rounds; ++round) {
        int tag1 = tags[round % ntags], tag2 = tags[(round * 7 + 3) % ntags];
        int len1 = 1 + random_below(&shared, MAX_P2P - 1), len2 = random_below(&shared, MAX_P2P);
        int coll = round % N_COLLS;
        int tc = random_below(&shared, N_TCASES);
        /* a few packets' worth of bytes in one round of three */
        int count = random_below(&shared, 3) ? random_below(&shared, 3000)
                                              : (int) ((opt.packet_sizes[0] * 3 + 1) /
                                                       (long) tcases[tc].send->size) + 1;
        int root = random_below(&shared, world_size);
        MPI_Request p2p[4];
        MPI_Status st[4];
        memset(in1, 0, MAX_P2P);
        memset(in2, 0, MAX_P2P);
        for (int i = 0; i < len1; ++i) out1[i] = p2p_byte(world_rank, tag1, round, i);
        for (int i = 0; i < len2; ++i) out2[i] = p2p_byte(world_rank, tag2, round, i);
        MPI_Irecv(in1, MAX_P2P, MPI_BYTE, left, tag1, MPI_COMM_WORLD, &p2p[0]);
        MPI_Irecv(in2, MAX_P2P, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &p2p[1]);
        MPI_Isend(out1, len1, MPI_BYTE, right, tag1, MPI_COMM_WORLD, &p2p[2]);

        op_t op = {.coll = coll,
                   .c = world,
                   .root = root,
                   .tc = usable(coll, tc) ? usable(coll, tc) : &tcases[1],
                   .count = C_ALLGATHER == base_coll(coll) ? count / world_size : count,
                   .seed = (unsigned) next_random(&shared)};
        op_prepare(&op);
        op_start(&op);
        if (is_nonblocking(coll) && MPI_SUCCESS == op.rc) {
            int in = world_rank + round, sum = 0;
            MPI_Allreduce(&in, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            int want = world_size * (world_size - 1) / 2 + world_size * round;
            if (sum != want) {
                complain("round %d: MPI_Allreduce during %s gave %d, expected %d", round,
                         coll_mpi_names[coll], sum, want);
                ok = 0;
            }
            ++allreduces;
            op.rc = MPI_Wait(&op.req, MPI_STATUS_IGNORE);
        }
        ok &= op_check(&op);
        ++collectives;
        MPI_Isend(out2, len2, MPI_BYTE, left, tag2, MPI_COMM_WORLD, &p2p[3]);
        MPI_Waitall(4, p2p, st);

        int got1, got2;
        MPI_Get_count(&st[0], MPI_BYTE, &got1);
        MPI_Get_count(&st[1], MPI_BYTE, &got2);
        int bad1 = got1 != len1, bad2 = got2 != len2;
        /* the neighbours drew the same lengths: every rank shares the random sequence */
        for (int i = 0; i < len1 && !bad1; ++i) bad1 = in1[i] != p2p_byte(left, tag1, round, i);
        for (int i = 0; i < len2 && !bad2; ++i) bad2 = in2[i] != p2p_byte(right, tag2, round, i);
        if (bad1 || st[0].MPI_SOURCE != left || st[0].MPI_TAG != tag1) {
            complain("round %d: the message from rank %d with tag %d: source %d tag %d %d bytes "
                     "%s",
                     round, left, tag1, st[0].MPI_SOURCE, st[0].MPI_TAG, got1,
                     bad1 ? "wrong" : "right");
            ok = 0;
        }
        if (bad2 || st[1].MPI_SOURCE != right || st[1].MPI_TAG != tag2) {
            complain("round %d: MPI_ANY_SOURCE/MPI_ANY_TAG receive wanted rank %d tag %d (%d "
                     "bytes), got source %d tag %d %d bytes %s",
                     round, right, tag2, len2, st[1].MPI_SOURCE, st[1].MPI_TAG, got2,
                     bad2 ? "wrong" : "right");
            ok = 0;
        }
        /* Every rank has its messages before any sends the next round's: otherwise a message
         * of the next round could match this round's MPI_ANY_SOURCE receive. */
        int one = 1, all = 0;
        MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        ok &= all == world_size;
        ++allreduces;
    }
    free(out1);
    free(out2);
    free(in1);
    free(in2);
    char what[300];
    snprintf(what, sizeof what,
             "%d collectives on MPI_COMM_WORLD amid point-to-point traffic (tags 0..%d, "
             "MPI_ANY_SOURCE/MPI_ANY_TAG receives) and %d MPI_Allreduce: all byte-exact",
             collectives, tag_ub, allreduces);
    report(ok, what);
}

/* --- proof that nicoll ran them ------------------------------------------------------------ */

typedef struct counters {
    nicoll_counter_t calls[N_COLLS], fallbacks[N_COLLS], bytes[N_COLLS];
    int have_calls[N_COLLS], have_fallbacks[N_COLLS], have_bytes[N_COLLS];
} counters_t;

static void counters_open(counters_t *k)
{
    char name[80];
    for (int i = 0; i < N_COLLS; ++i) {
        snprintf(name, sizeof name, "coll_nicoll_%s_calls", coll_names[i]);
        k->have_calls[i] = 0 == nicoll_counter_open(&k->calls[i], name);
        snprintf(name, sizeof name, "coll_nicoll_%s_fallbacks", coll_names[i]);
        k->have_fallbacks[i] = 0 == nicoll_counter_open(&k->fallbacks[i], name);
        snprintf(name, sizeof name, "coll_nicoll_%s_bytes", coll_names[i]);
        k->have_bytes[i] = 0 == nicoll_counter_open(&k->bytes[i], name);
    }
}

static unsigned long long counter_value(nicoll_counter_t *c, int *have)
{
    unsigned long long v = 0;
    if (*have && 0 != nicoll_counter_read(c, &v)) {
        *have = 0;
    }
    return v;
}

/* One TAP line per collective: nicoll ran every call made on communicators of 2+ ranks. */
static void counters_check(counters_t *k)
{
    for (int i = 0; i < N_COLLS; ++i) {
        char name[80];
        unsigned long long calls = counter_value(&k->calls[i], &k->have_calls[i]);
        unsigned long long fallbacks = counter_value(&k->fallbacks[i], &k->have_fallbacks[i]);
        unsigned long long bytes = counter_value(&k->bytes[i], &k->have_bytes[i]);
        int ok = k->have_calls[i] && k->have_fallbacks[i] &&
                 calls >= (unsigned long long) (issued[i] - skippable[i]) && 0 == fallbacks;
        if (!k->have_calls[i] || !k->have_fallbacks[i]) {
            snprintf(name, sizeof name, "coll_nicoll_%s_%s", coll_names[i],
                     k->have_calls[i] ? "fallbacks" : "calls");
            complain("MPI_T counter %s not found: nicoll is not loaded (or does not export it), "
                     "so nothing proves nicoll ran %s",
                     name, coll_mpi_names[i]);
        } else if (!ok) {
            complain("nicoll ran %llu %s calls; the test made %lld on communicators of 2+ ranks "
                     "(%lld of which move no data and may not reach it); %llu fallbacks to "
                     "another component",
                     calls, coll_mpi_names[i], issued[i], skippable[i], fallbacks);
        } else if (0 == world_rank && k->have_bytes[i]) {
            printf("# rank 0: %s: %llu calls, %llu bytes (coll_nicoll_%s_bytes)\n",
                   coll_mpi_names[i], calls, bytes, coll_names[i]);
        }
        char what[200];
        snprintf(what, sizeof what,
                 "nicoll ran all %lld %s calls on communicators of 2+ ranks, but for up to %lld "
                 "that move no data (its MPI_T counters: at least that many calls, 0 fallbacks)",
                 issued[i], coll_mpi_names[i], skippable[i]);
        report(ok, what);
    }
}

/* --nodes: how many nodes Open MPI sees, and the size of each (by its lowest world rank). */
static void check_nodes(void)
{
    MPI_Comm node;
    int node_rank, node_size, nodes = 0;
    must_make(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
              "MPI_Comm_split_type");
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_size(node, &node_size);
    const int first = 0 == node_rank ? node_size : 0;
    MPI_Allreduce(&(int) {0 == node_rank}, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int *sizes = malloc(sizeof(int) * (size_t) world_size);
    MPI_Gather(&first, 1, MPI_INT, sizes, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char what[300], list[200] = "";
    for (int i = 0, used = 0; 0 == world_rank && i < world_size && used < 180; ++i) {
        if (0 != sizes[i]) {
            used += snprintf(list + used, sizeof list - used, "%s%d", used ? "," : "", sizes[i]);
        }
    }
    snprintf(what, sizeof what,
             "Open MPI sees %ld nodes (MPI_COMM_TYPE_SHARED splits %d ranks into %d: %s)",
             opt.nodes, world_size, nodes, list);
    report(nodes == opt.nodes, what);
    free(sizes);
    MPI_Comm_free(&node);
}

/* --- options --------------------------------------------------------------------------------- */

static int parse_long(const char *s, long min, long max, long *v)
{
    char *end;
    *v = strtol(s, &end, 10);
    return end != s && '\0' == *end && *v >= min && *v <= max;
}

/* Returns 0, or prints why not (on rank 0) and returns 2. */
static int parse_options(int argc, char **argv)
{
    char why[200] = "";
    for (int i = 1; i < argc && !why[0]; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        if (0 == strcmp(a, "--expect-nicoll")) {
            opt.expect_nicoll = 1;
            continue;
        }
        if (0 == strcmp(a, "--uniform-bcast")) {
            opt.uniform_bcast = 1;
            continue;
        }
        if (0 == strcmp(a, "--thread-multiple")) { /* read by main() before MPI_Init_thread */
            continue;
        }
        if (NULL == v) {
            snprintf(why, sizeof why, "%s: unknown option or missing value", a);
            break;
        }
        ++i;
        if (0 == strcmp(a, "--packet-size")) {
            char copy[200];
            snprintf(copy, sizeof copy, "%s", v);
            opt.n_packet_sizes = 0;
            for (char *t = strtok(copy, ","); t && !why[0]; t = strtok(NULL, ",")) {
                if (opt.n_packet_sizes == MAX_PACKET_SIZES || !parse_long(t, 32, 1 << 24, &n)) {
                    snprintf(why, sizeof why,
                             "--packet-size %s: expected up to %d sizes in 32..16777216, "
                             "comma-separated",
                             v, MAX_PACKET_SIZES);
                } else {
                    opt.packet_sizes[opt.n_packet_sizes++] = n;
                }
            }
        } else if (0 == strcmp(a, "--large")) {
            if (!parse_long(v, 1, 1L << 28, &opt.large)) {
                snprintf(why, sizeof why, "--large %s: expected bytes in 1..268435456", v);
            }
        } else if (0 == strcmp(a, "--soak")) {
            if (!parse_long(v, 1, 1L << 40, &opt.soak)) {
                snprintf(why, sizeof why, "--soak %s: expected a number of collectives", v);
            }
        } else if (0 == strcmp(a, "--offload-wait")) {
            if (!parse_long(v, 1, 3600, &opt.offload_wait)) {
                snprintf(why, sizeof why, "--offload-wait %s: expected seconds in 1..3600", v);
            }
        } else if (0 == strcmp(a, "--realtime-threads")) {
            opt.realtime_threads = 0 == strcmp(v, "yes") ? 1 : 0 == strcmp(v, "no") ? 0 : -2;
            if (-2 == opt.realtime_threads) {
                snprintf(why, sizeof why, "--realtime-threads %s: expected yes or no", v);
            }
        } else if (0 == strcmp(a, "--communicators")) {
            if (!parse_long(v, 1, 1L << 20, &opt.communicators)) {
                snprintf(why, sizeof why, "--communicators %s: expected a number", v);
            }
        } else if (0 == strcmp(a, "--nodes")) {
            if (!parse_long(v, 1, 1L << 20, &opt.nodes)) {
                snprintf(why, sizeof why, "--nodes %s: expected a number of nodes", v);
            }
        } else if (0 == strcmp(a, "--seed")) {
            if (!parse_long(v, 0, 1L << 30, &n)) {
                snprintf(why, sizeof why, "--seed %s: expected an integer in 0..2^30", v);
            }
            opt.seed = (unsigned) n;
        } else if (0 == strcmp(a, "--sections")) {
            char copy[200];
            snprintf(copy, sizeof copy, "%s", v);
            opt.sections = 0;
            for (char *t = strtok(copy, ","); t && !why[0]; t = strtok(NULL, ",")) {
                int s = 0;
                while (s < N_SECTIONS && 0 != strcmp(t, section_names[s])) ++s;
                if (N_SECTIONS == s) {
                    snprintf(why, sizeof why,
                             "--sections %s: unknown section %s (known: blocking, nonblocking, "
                             "barrier, outstanding, concurrency, soak, offload, "
                             "communicators)",
                             v, t);
                }
                opt.sections |= 1u << s;
            }
        } else {
            snprintf(why, sizeof why, "%s: unknown option", a);
        }
    }
    if (why[0]) {
        if (0 == world_rank) {
            fprintf(stderr,
                    "test_coll: %s\nusage: test_coll [--expect-nicoll] [--uniform-bcast] "
                    "[--packet-size BYTES[,BYTES...]] [--large BYTES] [--seed N] [--sections "
                    "LIST] [--soak N] [--nodes N] [--offload-wait S] [--realtime-threads "
                    "yes|no] [--communicators N] [--thread-multiple]\n",
                    why);
        }
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int provided, level = MPI_THREAD_SINGLE;
    for (int i = 1; i < argc; ++i) {
        if (0 == strcmp(argv[i], "--thread-multiple")) level = MPI_THREAD_MULTIPLE;
    }
    MPI_Init_thread(&argc, &argv, level, &provided);
    /* the same level: Open MPI 4.1's MPI_T_init_thread sets the process's thread level anew */
    MPI_T_init_thread(level, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (0 != parse_options(argc, argv)) {
        MPI_T_finalize();
        MPI_Finalize();
        return 2;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    report(define_layouts(), "the test's datatype descriptions agree with MPI's");
    if (opt.nodes > 0) {
        check_nodes();
    }

    /* Every communicator first: creating one runs collectives that the counters must not see. */
    MPI_Comm odd = MPI_COMM_NULL, dup1, dup2, halves;
    int left_out = 0 == world_size % 2 ? world_size / 2 : -1; /* makes the split's size odd */
    must_make(MPI_Comm_split(MPI_COMM_WORLD, world_rank == left_out ? MPI_UNDEFINED : 0,
                             world_size - world_rank, &odd),
              "MPI_Comm_split (the odd split)");
    must_make(MPI_Comm_dup(MPI_COMM_WORLD, &dup1), "MPI_Comm_dup");
    must_make(MPI_Comm_dup(MPI_COMM_WORLD, &dup2), "MPI_Comm_dup");
    must_make(MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &halves),
              "MPI_Comm_split (the halves)");
    comm_info_t comms[5] = {{MPI_COMM_WORLD, "MPI_COMM_WORLD", 0, 0},
                            {odd, "odd split (reversed)", 0, 0},
                            {dup1, "dup 1", 0, 0},
                            {dup2, "dup 2", 0, 0},
                            {halves, "even/odd half", 0, 0}};
    for (int i = 0; i < 5; ++i) {
        if (MPI_COMM_NULL != comms[i].comm) {
            MPI_Comm_set_errhandler(comms[i].comm, MPI_ERRORS_RETURN);
            MPI_Comm_rank(comms[i].comm, &comms[i].rank);
            MPI_Comm_size(comms[i].comm, &comms[i].size);
        }
    }
    /* rank 0 names the odd split's size in its lines: it is always a member */
    counters_t counters;
    if (opt.expect_nicoll) {
        counters_open(&counters);
    }

    comm_info_t sweep_comms[2] = {comms[0], comms[1]};
    comm_info_t outstanding_comms[5] = {comms[0], comms[2], comms[3], comms[4], comms[1]};
    comm_info_t offload_comms[3] = {comms[0], comms[2], comms[3]};
    for (int s = 0; s < N_SECTIONS; ++s) {
        if (!(opt.sections & (1u << s))) continue;
        double t0 = MPI_Wtime();
        switch (1u << s) {
        case S_BLOCKING: section_sweep(sweep_comms, 2, 0); break;
        case S_NONBLOCKING: section_sweep(sweep_comms, 2, 1); break;
        case S_BARRIER: section_barrier(sweep_comms, 2); break;
        case S_OUTSTANDING: section_outstanding(outstanding_comms, 5, 40); break;
        case S_CONCURRENCY: section_concurrency(&comms[0], 60); break;
        case S_SOAK: section_soak(&comms[0]); break;
        case S_OFFLOAD: section_offload(offload_comms); break;
        case S_COMMUNICATORS: section_communicators(&comms[0]); break;
        }
        if (0 == world_rank) {
            printf("# %s: %.1f s\n", section_names[s], MPI_Wtime() - t0);
        }
    }

    if (opt.expect_nicoll) {
        counters_check(&counters);
    }
    if (0 == world_rank) {
        printf("# checks %d\n", checks);
    }
    for (int i = 1; i < 5; ++i) {
        if (MPI_COMM_NULL != comms[i].comm) MPI_Comm_free(&comms[i].comm);
    }
    MPI_T_finalize();
    MPI_Finalize();
    return 0;
}
