/*
 * nicsim: the C API of the NIC-offload engine.
 *
 * This is the only surface between the Open MPI glue (coll/) and the engine. It is deliberately
 * narrow: create a group context, post a collective, feed it arriving packets, progress, test,
 * free. Handles are opaque, results are nicsim_status_t, and no C++ type or exception crosses it.
 *
 * The engine never touches a network itself. The caller supplies a transport (one send callback)
 * and hands every packet that arrives for the group to nicsim_group_deliver(). A packet is an
 * opaque header of NICSIM_HEADER_BYTES followed by a payload of at most the packet size the
 * collective was posted with; the engine defines the format.
 */
#ifndef NICSIM_NICSIM_H
#define NICSIM_NICSIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 0 is success, 1 is "not finished yet", negative values are errors. */
typedef enum nicsim_status {
    NICSIM_OK = 0,
    NICSIM_IN_PROGRESS = 1,
    NICSIM_ERR_INVALID = -1,   /* an argument is out of range */
    NICSIM_ERR_NO_MEMORY = -2, /* an allocation failed */
    NICSIM_ERR_AGAIN = -3,     /* transport only: no resources now, offer the packet again later */
    NICSIM_ERR_TRANSPORT = -4, /* the transport failed to carry a packet */
    NICSIM_ERR_PROTOCOL = -5,  /* a malformed or unexpected packet arrived */
    NICSIM_ERR_PEER = -6       /* another rank could not take part in the collective (its local
                                * failure, nicsim_abort_post) */
} nicsim_status_t;

/* The collectives the engine runs; each has a table of algorithms addressed by index, the first
 * being the default. A broadcast's algorithms are tree shapes. */
typedef enum nicsim_collective {
    NICSIM_COLL_BARRIER = 0,
    NICSIM_COLL_BCAST = 1,
    NICSIM_COLL_ALLGATHER = 2
} nicsim_collective_t;

#define NICSIM_HEADER_BYTES 24
/* The largest flow-control window (credits per peer). */
#define NICSIM_CREDITS_MAX 1024

typedef struct nicsim_group nicsim_group_t;     /* one communicator's engine state on one rank */
typedef struct nicsim_request nicsim_request_t; /* one posted collective */

/* How the engine sends. A packet is its header followed by its payload (payload_bytes may be 0).
 * send() must copy the header before it returns. The payload lies in the buffer of the collective
 * the packet belongs to (or in memory the engine keeps as long), so the transport may send it in
 * place, provided it is done with it before it reports that collective complete. send() returns
 * NICSIM_OK, NICSIM_ERR_AGAIN when it cannot take the packet now (the engine keeps it and offers
 * it again from nicsim_group_progress()), or another error, which breaks the group
 * (nicsim_group_fail()). */
typedef struct nicsim_transport {
    void *context;
    nicsim_status_t (*send)(void *context, int dst, const void *header, const void *payload,
                            size_t payload_bytes);
} nicsim_transport_t;

/* How a group runs; zero-initialised means the defaults. */
typedef struct nicsim_group_config {
    /* Flow control (LFC): a rank sends a peer at most `credits` packets the peer has not yet
     * consumed, so a receiver that keeps credits x (size - 1) receive buffers posted never sees
     * a packet it has no buffer for. 1..NICSIM_CREDITS_MAX, or 0 for none. */
    int credits;
    /* NULL, or each rank's window instead (0..NICSIM_CREDITS_MAX; 0 for a peer whose transport
     * is its own flow control, such as a ring of that many slots): `size` entries, `credits`
     * then unused. */
    const int *peer_credits;
    /* NULL, or the group's ranks in locality order (a permutation of 0..size-1): broadcast trees
     * are built over it, so subtrees stay within a node or a package. */
    const int *order;
    /* NULL, or each rank's node (ranks with the same number share one): broadcast trees then
     * cross between nodes once per node, each node served by its first rank in `order`,
     * barriers and recursive-doubling allgathers cross between nodes only at those ranks, and
     * all-to-all-broadcast allgathers carry each block into each other node once. */
    const int *node_of;
} nicsim_group_config_t;

/* What a group did, counted since it was created. */
typedef struct nicsim_group_stats {
    unsigned long long forwarded;     /* broadcast packets passed on to children as they arrived */
    unsigned long long credit_stalls; /* packets that waited for a flow-control credit */
} nicsim_group_stats_t;

const char *nicsim_version(void);
const char *nicsim_status_string(nicsim_status_t status);

/* Algorithm tables: names and one-line descriptions, the same names the MCA variables, tuning
 * files, the nicsim command and the man pages use. nicsim_algorithm_find() returns the index of
 * `name`, or -1 when the name is unknown. */
int nicsim_algorithm_count(nicsim_collective_t coll);
const char *nicsim_algorithm_name(nicsim_collective_t coll, int algorithm);
const char *nicsim_algorithm_description(nicsim_collective_t coll, int algorithm);
int nicsim_algorithm_find(nicsim_collective_t coll, const char *name);

/* A group is `size` ranks of which the caller is `rank`; the transport and the configuration
 * (NULL: the defaults) are copied. */
nicsim_status_t nicsim_group_create(int rank, int size, const nicsim_transport_t *transport,
                                    const nicsim_group_config_t *config, nicsim_group_t **group);
void nicsim_group_free(nicsim_group_t *group);

/* A packet from group rank `src` arrived: its header, and its payload (the bytes the header
 * announces). The engine copies what it keeps. */
nicsim_status_t nicsim_group_deliver(nicsim_group_t *group, int src, const void *header,
                                     const void *payload, size_t payload_bytes);

/* For a transport that carries a large payload apart from its header: the header from `src`
 * arrived, its payload has not. Sets *payload_bytes to the payload's size and *at to where it
 * belongs: in its collective's buffer, or, when its collective is not posted here yet, in memory
 * of the engine's own, where the engine keeps it until then; NULL when the engine places it
 * nowhere (receive it anywhere). Receive the payload there, then nicsim_group_deliver() the
 * header with it, before placing the next packet from `src`. Every packet from `src` before this
 * one must have been delivered. Unless `room` is NULL, sets *room to the bytes from *at on that
 * the collective's next packets from `src` fill in order, each placed where the one before
 * ended (a broadcast's rest of the message; else *payload_bytes, or 0 with no place): a transport
 * may receive those packets' payloads there ahead, with this one's. */
nicsim_status_t nicsim_group_place(nicsim_group_t *group, int src, const void *header, void **at,
                                   size_t *payload_bytes, size_t *room);

/* Offers queued packets to the transport again. Returns NICSIM_OK when none is left,
 * NICSIM_IN_PROGRESS while some still wait, or the transport error, which fails every collective
 * in flight. */
nicsim_status_t nicsim_group_progress(nicsim_group_t *group);

void nicsim_group_stats(const nicsim_group_t *group, nicsim_group_stats_t *stats);

/* Collectives of the group that have ended on this rank (complete or failed) so far: a transport
 * that delivers packets for a caller waiting on one may return to it as soon as this moves. */
unsigned long long nicsim_group_settled(const nicsim_group_t *group);

/* Posts a barrier with the algorithm of that index. Every rank of the group posts its
 * collectives in the same order (as MPI requires on a communicator). */
nicsim_status_t nicsim_barrier_post(nicsim_group_t *group, int algorithm,
                                    nicsim_request_t **request);

/* Posts a broadcast of `bytes` bytes from `root`, over the tree shape of that index, in packets
 * of at most `packet_bytes` payload bytes. `k` is the k-binomial tree's fanout, 0 for the best
 * one for this message's packets (Kesavan and Panda, Theorem 3); other shapes ignore it. `buffer`
 * holds the message at the root and receives it elsewhere; it must stay valid until the request is
 * complete. */
nicsim_status_t nicsim_bcast_post(nicsim_group_t *group, int algorithm, int k, int root,
                                  void *buffer, size_t bytes, size_t packet_bytes,
                                  nicsim_request_t **request);

/* Posts an allgather of `block_bytes` per rank with the algorithm of that index, in packets of at
 * most `packet_bytes` payload bytes. `result` holds size x block_bytes bytes, rank r's block at
 * r x block_bytes; it must stay valid until the request is complete. This rank's own block is
 * either already in place (`own` NULL) or at `own`, valid until the request is complete: the
 * engine sends it from there and copies it into place itself, after its first packets left. */
nicsim_status_t nicsim_allgather_post(nicsim_group_t *group, int algorithm, void *result,
                                      size_t block_bytes, size_t packet_bytes, const void *own,
                                      nicsim_request_t **request);

/* This rank cannot take part in its next collective: a local failure `why` (such as
 * NICSIM_ERR_NO_MEMORY for a buffer it could not allocate) came before it could post it. The
 * collective is numbered as any other, and every other rank is told, so that its copy fails
 * with NICSIM_ERR_PEER (unless it is already complete) instead of waiting for this rank. The
 * request answers NICSIM_IN_PROGRESS until the transport has taken those packets, then `why`. */
nicsim_status_t nicsim_abort_post(nicsim_group_t *group, nicsim_status_t why,
                                  nicsim_request_t **request);

/* The caller found its transport broken (`why`, such as NICSIM_ERR_TRANSPORT for a send it could
 * not complete or a packet it lost), as the engine does when its send callback fails: the group
 * is broken on every rank. Every collective in progress and every later one fails, here with
 * `why`, and every other rank is told, where they fail with NICSIM_ERR_PEER. (A collective that
 * fails here for another reason of this rank's own, such as a packet that broke the protocol, is
 * given up alone, as by nicsim_abort_post().) */
nicsim_status_t nicsim_group_fail(nicsim_group_t *group, nicsim_status_t why);

/* NICSIM_OK while the group runs, or why it is broken: nicsim_group_fail() here, or
 * NICSIM_ERR_PEER once told of it. Every rank of a broken group drops its packets. */
nicsim_status_t nicsim_group_broken(const nicsim_group_t *group);

/* NICSIM_OK when this rank's part of the collective is complete (its packets taken by the
 * transport included), NICSIM_IN_PROGRESS while it is not, or the error that failed it. */
nicsim_status_t nicsim_request_test(const nicsim_request_t *request);

/* Releases a request. A request still in progress keeps running inside the group. */
void nicsim_request_free(nicsim_request_t *request);

#ifdef __cplusplus
}
#endif

#endif /* NICSIM_NICSIM_H */
