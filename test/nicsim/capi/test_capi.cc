// The C API as coll/ uses it: tables, argument checks, and two groups exchanging packets
// through send callbacks and nicsim_group_deliver().
#include "config.h"
#include "nicsim/nicsim.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

struct Mailbox {
    struct Packet {
        int dst;
        std::vector<unsigned char> bytes;
    };
    std::vector<Packet> packets;
    bool busy = false;
    int fail_at = 0;  // the send that fails with a transport error (1: the first), 0: none
    int sends = 0;
};

nicsim_status_t post_to_mailbox(void* context, int dst, const void* header, const void* payload,
                                size_t payload_bytes) {
    auto* box = static_cast<Mailbox*>(context);
    if (box->busy) return NICSIM_ERR_AGAIN;
    if (++box->sends == box->fail_at) return NICSIM_ERR_TRANSPORT;
    const auto* h = static_cast<const unsigned char*>(header);
    const auto* p = static_cast<const unsigned char*>(payload);
    Mailbox::Packet packet{dst, {h, h + NICSIM_HEADER_BYTES}};
    if (payload_bytes != 0) packet.bytes.insert(packet.bytes.end(), p, p + payload_bytes);
    box->packets.push_back(std::move(packet));
    return NICSIM_OK;
}

// `size` groups, rank r's sending into box[r].
void create_groups(Mailbox* box, nicsim_group_t** group, int size) {
    for (int r = 0; r < size; ++r) {
        const nicsim_transport_t transport{&box[r], post_to_mailbox};
        ASSERT_EQ(nicsim_group_create(r, size, &transport, nullptr, &group[r]), NICSIM_OK);
    }
}

TEST(CApi, StatusStringsAndVersion) {
    EXPECT_STREQ(nicsim_status_string(NICSIM_OK), "success");
    EXPECT_STREQ(nicsim_status_string(NICSIM_ERR_PROTOCOL), "malformed or unexpected packet");
    EXPECT_STREQ(nicsim_status_string(static_cast<nicsim_status_t>(-99)), "unknown status");
    EXPECT_STREQ(nicsim_version(), PACKAGE_VERSION);
}

TEST(CApi, AlgorithmTable) {
    ASSERT_EQ(nicsim_algorithm_count(NICSIM_COLL_BARRIER), 4);
    EXPECT_STREQ(nicsim_algorithm_name(NICSIM_COLL_BARRIER, 0), "dissemination");
    EXPECT_STREQ(nicsim_algorithm_name(NICSIM_COLL_BARRIER, 1), "recursive_doubling");
    EXPECT_STREQ(nicsim_algorithm_name(NICSIM_COLL_BARRIER, 2), "tree");
    EXPECT_STREQ(nicsim_algorithm_name(NICSIM_COLL_BARRIER, 3), "flat");
    EXPECT_EQ(nicsim_algorithm_name(NICSIM_COLL_BARRIER, 4), nullptr);
    EXPECT_EQ(nicsim_algorithm_name(NICSIM_COLL_BARRIER, -1), nullptr);
    EXPECT_NE(std::strlen(nicsim_algorithm_description(NICSIM_COLL_BARRIER, 0)), 0u);
    EXPECT_EQ(nicsim_algorithm_find(NICSIM_COLL_BARRIER, "recursive_doubling"), 1);
    EXPECT_EQ(nicsim_algorithm_find(NICSIM_COLL_BARRIER, "Dissemination"), -1);
    EXPECT_EQ(nicsim_algorithm_find(NICSIM_COLL_BARRIER, nullptr), -1);
}

TEST(CApi, RejectsBadArguments) {
    Mailbox box;
    const nicsim_transport_t transport{&box, post_to_mailbox};
    const nicsim_transport_t no_send{&box, nullptr};
    nicsim_group_t* group = reinterpret_cast<nicsim_group_t*>(&box);
    EXPECT_EQ(nicsim_group_create(0, 0, &transport, nullptr, &group), NICSIM_ERR_INVALID);
    EXPECT_EQ(group, nullptr);
    EXPECT_EQ(nicsim_group_create(2, 2, &transport, nullptr, &group), NICSIM_ERR_INVALID);
    EXPECT_EQ(nicsim_group_create(-1, 2, &transport, nullptr, &group), NICSIM_ERR_INVALID);
    EXPECT_EQ(nicsim_group_create(0, 2, nullptr, nullptr, &group), NICSIM_ERR_INVALID);
    EXPECT_EQ(nicsim_group_create(0, 2, &no_send, nullptr, &group), NICSIM_ERR_INVALID);
    EXPECT_EQ(nicsim_group_create(0, 2, &transport, nullptr, nullptr), NICSIM_ERR_INVALID);

    const int not_a_permutation[2] = {1, 1};
    const nicsim_group_config_t bad_order{0, nullptr, not_a_permutation, nullptr};
    const nicsim_group_config_t bad_credits{NICSIM_CREDITS_MAX + 1, nullptr, nullptr, nullptr};
    const int negative_window[2] = {4, -1};
    const nicsim_group_config_t bad_peer_credits{0, negative_window, nullptr, nullptr};
    EXPECT_EQ(nicsim_group_create(0, 2, &transport, &bad_order, &group), NICSIM_ERR_INVALID);
    EXPECT_EQ(nicsim_group_create(0, 2, &transport, &bad_credits, &group), NICSIM_ERR_INVALID);
    EXPECT_EQ(nicsim_group_create(0, 2, &transport, &bad_peer_credits, &group),
              NICSIM_ERR_INVALID);

    ASSERT_EQ(nicsim_group_create(0, 2, &transport, nullptr, &group), NICSIM_OK);
    nicsim_request_t* request = nullptr;
    EXPECT_EQ(nicsim_barrier_post(group, 7, &request), NICSIM_ERR_INVALID);
    EXPECT_EQ(request, nullptr);
    EXPECT_EQ(nicsim_barrier_post(nullptr, 0, &request), NICSIM_ERR_INVALID);
    EXPECT_EQ(nicsim_abort_post(group, NICSIM_OK, &request), NICSIM_ERR_INVALID);  // no failure
    EXPECT_EQ(nicsim_abort_post(group, NICSIM_ERR_AGAIN, &request), NICSIM_ERR_INVALID);
    EXPECT_EQ(nicsim_abort_post(nullptr, NICSIM_ERR_NO_MEMORY, &request), NICSIM_ERR_INVALID);
    EXPECT_EQ(request, nullptr);
    EXPECT_EQ(nicsim_group_deliver(group, 1, nullptr, nullptr, 0), NICSIM_ERR_INVALID);
    const unsigned char junk[NICSIM_HEADER_BYTES] = {1, 2, 3};
    EXPECT_EQ(nicsim_group_deliver(group, 1, junk, nullptr, 0), NICSIM_ERR_PROTOCOL);
    void* at = nullptr;
    size_t payload_bytes = 0;
    EXPECT_EQ(nicsim_group_place(group, 1, junk, &at, &payload_bytes, nullptr),
              NICSIM_ERR_PROTOCOL);
    EXPECT_EQ(nicsim_request_test(nullptr), NICSIM_ERR_INVALID);
    nicsim_request_free(nullptr);
    nicsim_group_free(group);
    nicsim_group_free(nullptr);
}

TEST(CApi, TwoGroupsCompleteABarrierThroughTheirTransports) {
    Mailbox box[2];
    nicsim_group_t* group[2];
    nicsim_request_t* request[2];
    ASSERT_NO_FATAL_FAILURE(create_groups(box, group, 2));
    box[1].busy = true;  // rank 1's transport refuses at first
    for (int r = 0; r < 2; ++r) {
        ASSERT_EQ(nicsim_barrier_post(group[r], 0, &request[r]), NICSIM_OK);
        EXPECT_EQ(nicsim_request_test(request[r]), NICSIM_IN_PROGRESS);
    }
    ASSERT_EQ(box[0].packets.size(), 1u);
    ASSERT_EQ(box[0].packets[0].bytes.size(), size_t{NICSIM_HEADER_BYTES});
    EXPECT_TRUE(box[1].packets.empty());
    box[1].busy = false;
    ASSERT_EQ(nicsim_group_progress(group[1]), NICSIM_OK);
    ASSERT_EQ(box[1].packets.size(), 1u);

    for (int r = 0; r < 2; ++r) {
        const auto& p = box[r].packets[0];
        EXPECT_EQ(p.dst, 1 - r);
        ASSERT_EQ(nicsim_group_deliver(group[p.dst], r, p.bytes.data(), nullptr, 0), NICSIM_OK);
    }
    for (int r = 0; r < 2; ++r) {
        EXPECT_EQ(nicsim_request_test(request[r]), NICSIM_OK);
        nicsim_request_free(request[r]);
        nicsim_group_free(group[r]);
    }
}

// nicsim_group_settled() moves with the delivery that ends a collective, and with no other: a
// transport stops taking packets for its caller there (coll_nicoll_shm.c).
TEST(CApi, SettledCountsTheCollectivesThatEnded) {
    Mailbox box[2];
    nicsim_group_t* group[2];
    nicsim_request_t* request[2][2];
    ASSERT_NO_FATAL_FAILURE(create_groups(box, group, 2));
    EXPECT_EQ(nicsim_group_settled(nullptr), 0u);
    for (int r = 0; r < 2; ++r) {
        ASSERT_EQ(nicsim_barrier_post(group[r], 0, &request[r][0]), NICSIM_OK);
        EXPECT_EQ(nicsim_group_settled(group[r]), 0u);
    }
    ASSERT_EQ(nicsim_barrier_post(group[0], 0, &request[0][1]), NICSIM_OK);  // rank 1's later
    ASSERT_EQ(box[0].packets.size(), 2u);
    ASSERT_EQ(box[1].packets.size(), 1u);
    for (int r = 0; r < 2; ++r) {
        const auto& p = box[r].packets[0];
        ASSERT_EQ(nicsim_group_deliver(group[p.dst], r, p.bytes.data(), nullptr, 0), NICSIM_OK);
        EXPECT_EQ(nicsim_group_settled(group[p.dst]), 1u);
    }
    // The second barrier's token reaches rank 1 before rank 1 posts it: nothing ended there.
    ASSERT_EQ(nicsim_group_deliver(group[1], 0, box[0].packets[1].bytes.data(), nullptr, 0),
              NICSIM_OK);
    EXPECT_EQ(nicsim_group_settled(group[1]), 1u);
    ASSERT_EQ(nicsim_barrier_post(group[1], 0, &request[1][1]), NICSIM_OK);
    EXPECT_EQ(nicsim_group_settled(group[1]), 2u);  // ended as posted: rank 0's token was in
    ASSERT_EQ(box[1].packets.size(), 2u);
    ASSERT_EQ(nicsim_group_deliver(group[0], 1, box[1].packets[1].bytes.data(), nullptr, 0),
              NICSIM_OK);
    EXPECT_EQ(nicsim_group_settled(group[0]), 2u);
    for (int r = 0; r < 2; ++r) {
        for (nicsim_request_t* q : request[r]) {
            EXPECT_EQ(nicsim_request_test(q), NICSIM_OK);
            nicsim_request_free(q);
        }
        nicsim_group_free(group[r]);
    }
}

// Rank 1 cannot post its collective: its abort reaches rank 0, whose barrier then fails too.
TEST(CApi, ARankThatCannotPostTellsTheOthers) {
    Mailbox box[2];
    nicsim_group_t* group[2];
    ASSERT_NO_FATAL_FAILURE(create_groups(box, group, 2));
    nicsim_request_t* barrier = nullptr;
    nicsim_request_t* abort = nullptr;
    ASSERT_EQ(nicsim_barrier_post(group[0], 0, &barrier), NICSIM_OK);
    box[1].busy = true;  // the abort waits in rank 1's NIC at first
    ASSERT_EQ(nicsim_abort_post(group[1], NICSIM_ERR_NO_MEMORY, &abort), NICSIM_OK);
    EXPECT_EQ(nicsim_request_test(abort), NICSIM_IN_PROGRESS);
    box[1].busy = false;
    ASSERT_EQ(nicsim_group_progress(group[1]), NICSIM_OK);
    EXPECT_EQ(nicsim_request_test(abort), NICSIM_ERR_NO_MEMORY);
    ASSERT_EQ(box[1].packets.size(), 1u);
    ASSERT_EQ(nicsim_group_deliver(group[0], 1, box[1].packets[0].bytes.data(), nullptr, 0),
              NICSIM_OK);
    EXPECT_EQ(nicsim_request_test(barrier), NICSIM_ERR_PEER);
    // Rank 0's barrier token reaches rank 1 late, for a collective it gave up: dropped.
    ASSERT_EQ(box[0].packets.size(), 1u);
    EXPECT_EQ(nicsim_group_deliver(group[1], 0, box[0].packets[0].bytes.data(), nullptr, 0),
              NICSIM_OK);
    for (int r = 0; r < 2; ++r) {
        nicsim_request_free(r == 0 ? barrier : abort);
        nicsim_group_free(group[r]);
    }
}

// Hands every packet in the mailboxes to its receiver, until none is left.
void deliver_all(Mailbox* box, nicsim_group_t** group, int size) {
    for (bool any = true; any;) {
        any = false;
        for (int r = 0; r < size; ++r) {
            std::vector<Mailbox::Packet> packets = std::move(box[r].packets);
            box[r].packets.clear();
            for (const Mailbox::Packet& p : packets) {
                any = true;
                const size_t payload = p.bytes.size() - NICSIM_HEADER_BYTES;
                (void) nicsim_group_deliver(group[p.dst], r, p.bytes.data(),
                                            payload == 0 ? nullptr : p.bytes.data() + NICSIM_HEADER_BYTES,
                                            payload);
            }
        }
    }
}

// Rank 1's transport fails its second send, inside a barrier (its first step's token left when it
// posted it; the second step's fails as the first step's token arrives): the group is broken.
// Rank 1's barrier fails with the transport error; it tells the others, whose barriers fail with
// NICSIM_ERR_PEER. Every later collective fails at once, everywhere.
TEST(CApi, ATransportErrorBreaksTheGroupEverywhere) {
    constexpr int kSize = 3;
    Mailbox box[kSize];
    nicsim_group_t* group[kSize];
    ASSERT_NO_FATAL_FAILURE(create_groups(box, group, kSize));
    box[1].fail_at = 2;
    nicsim_request_t* request[kSize] = {};
    for (int r = 0; r < kSize; ++r) ASSERT_EQ(nicsim_barrier_post(group[r], 0, &request[r]), NICSIM_OK);
    deliver_all(box, group, kSize);
    for (int r = 0; r < kSize; ++r) {
        EXPECT_EQ(nicsim_request_test(request[r]), r == 1 ? NICSIM_ERR_TRANSPORT : NICSIM_ERR_PEER)
            << "rank " << r;
        nicsim_request_free(request[r]);
    }
    for (int r = 0; r < kSize; ++r) {
        nicsim_request_t* later = nullptr;
        EXPECT_EQ(nicsim_barrier_post(group[r], 0, &later), r == 1 ? NICSIM_ERR_TRANSPORT
                                                                    : NICSIM_ERR_PEER)
            << "rank " << r;
        EXPECT_EQ(later, nullptr);
    }
    for (int r = 0; r < kSize; ++r) nicsim_group_free(group[r]);
}

// The driver finds rank 0's transport broken (nicsim_group_fail): rank 0's collectives in
// progress fail with the error, and rank 1's with NICSIM_ERR_PEER once told; nicsim_group_broken
// says so on each.
TEST(CApi, AGroupTheDriverFailsTellsTheOthers) {
    Mailbox box[2];
    nicsim_group_t* group[2];
    nicsim_request_t* request[2];
    ASSERT_NO_FATAL_FAILURE(create_groups(box, group, 2));
    ASSERT_EQ(nicsim_barrier_post(group[1], 0, &request[1]), NICSIM_OK);
    ASSERT_EQ(nicsim_barrier_post(group[0], 0, &request[0]), NICSIM_OK);
    box[0].packets.clear();  // rank 0's token is lost: its driver sees the transport fail
    EXPECT_EQ(nicsim_group_fail(group[0], NICSIM_ERR_PEER), NICSIM_ERR_INVALID);
    EXPECT_EQ(nicsim_group_broken(group[0]), NICSIM_OK);
    ASSERT_EQ(nicsim_group_fail(group[0], NICSIM_ERR_TRANSPORT), NICSIM_OK);
    EXPECT_EQ(nicsim_group_broken(group[0]), NICSIM_ERR_TRANSPORT);
    EXPECT_EQ(nicsim_request_test(request[0]), NICSIM_ERR_TRANSPORT);
    EXPECT_EQ(nicsim_request_test(request[1]), NICSIM_IN_PROGRESS);
    EXPECT_EQ(nicsim_group_broken(group[1]), NICSIM_OK);
    deliver_all(box, group, 2);
    EXPECT_EQ(nicsim_request_test(request[1]), NICSIM_ERR_PEER);
    EXPECT_EQ(nicsim_group_broken(group[1]), NICSIM_ERR_PEER);  // told
    EXPECT_EQ(nicsim_group_broken(nullptr), NICSIM_ERR_INVALID);
    for (int r = 0; r < 2; ++r) {
        nicsim_request_free(request[r]);
        nicsim_group_free(group[r]);
    }
}

TEST(CApi, ABroadcastsPayloadsArePlacedInTheReceiversBuffer) {
    Mailbox box[2];
    nicsim_group_t* group[2];
    for (int r = 0; r < 2; ++r) {
        const nicsim_transport_t transport{&box[r], post_to_mailbox};
        const nicsim_group_config_t config{2, nullptr, nullptr, nullptr};
        ASSERT_EQ(nicsim_group_create(r, 2, &transport, &config, &group[r]), NICSIM_OK);
    }
    const int kbinomial = nicsim_algorithm_find(NICSIM_COLL_BCAST, "kbinomial");
    ASSERT_GE(kbinomial, 0);
    std::vector<unsigned char> sent(1000), got(1000, 0xee);
    for (size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<unsigned char>(i * 7);
    nicsim_request_t* request[2];
    ASSERT_EQ(nicsim_bcast_post(group[0], kbinomial, 0, 0, sent.data(), sent.size(), 300, &request[0]),
              NICSIM_OK);
    // Two credits: the root holds the other two packets back until the receiver returns some.
    ASSERT_EQ(box[0].packets.size(), 2u);

    // The first packet arrives before the receiver posts: it is received into a room of the
    // engine's own, delivered from there and kept there until the post.
    void* at = nullptr;
    size_t payload_bytes = 0;
    Mailbox::Packet first = box[0].packets[0];
    size_t room = 0;
    ASSERT_EQ(nicsim_group_place(group[1], 0, first.bytes.data(), &at, &payload_bytes, &room),
              NICSIM_OK);
    ASSERT_NE(at, nullptr);
    EXPECT_EQ(payload_bytes, 300u);
    EXPECT_EQ(room, 300u);  // the engine's room holds this payload only
    std::memcpy(at, first.bytes.data() + NICSIM_HEADER_BYTES, payload_bytes);
    ASSERT_EQ(nicsim_group_deliver(group[1], 0, first.bytes.data(), at, payload_bytes), NICSIM_OK);
    ASSERT_EQ(nicsim_bcast_post(group[1], kbinomial, 0, 0, got.data(), got.size(), 300, &request[1]),
              NICSIM_OK);

    // The others are placed at their offsets, then delivered from there; each place runs on to
    // the message's end, which the packets that follow fill in order.
    for (size_t next = 1, offset = 300; offset < got.size(); ++next, offset += 300) {
        for (const auto& credit : box[1].packets) {
            ASSERT_EQ(nicsim_group_deliver(group[0], 1, credit.bytes.data(), nullptr, 0), NICSIM_OK);
        }
        box[1].packets.clear();
        ASSERT_GT(box[0].packets.size(), next);
        const Mailbox::Packet& p = box[0].packets[next];
        ASSERT_EQ(nicsim_group_place(group[1], 0, p.bytes.data(), &at, &payload_bytes, &room),
                  NICSIM_OK);
        ASSERT_EQ(at, got.data() + offset);
        EXPECT_EQ(room, got.size() - offset);
        std::memcpy(at, p.bytes.data() + NICSIM_HEADER_BYTES, payload_bytes);
        ASSERT_EQ(nicsim_group_deliver(group[1], 0, p.bytes.data(), at, payload_bytes), NICSIM_OK);
    }
    EXPECT_EQ(got, sent);
    for (int r = 0; r < 2; ++r) {
        EXPECT_EQ(nicsim_request_test(request[r]), NICSIM_OK);
        nicsim_request_free(request[r]);
    }
    nicsim_group_stats_t stats;
    nicsim_group_stats(group[0], &stats);
    EXPECT_GE(stats.credit_stalls, 2u);
    for (int r = 0; r < 2; ++r) nicsim_group_free(group[r]);
}

// Early payloads received into the engine's rooms: a room freed at the post is the next early
// payload's (its pages already the process's), and a collective posted between a packet's
// placement and its delivery takes the payload from its room.
TEST(CApi, EarlyPayloadsAreReceivedIntoRoomsThatTheEngineReuses) {
    Mailbox box[2];
    nicsim_group_t* group[2];
    ASSERT_NO_FATAL_FAILURE(create_groups(box, group, 2));
    const int binomial = nicsim_algorithm_find(NICSIM_COLL_BCAST, "binomial");
    ASSERT_GE(binomial, 0);
    void* first_room = nullptr;
    for (int round = 0; round < 3; ++round) {
        const bool post_before_delivery = 2 == round;
        std::vector<unsigned char> sent(5000), got(5000, 0xee);
        for (size_t i = 0; i < sent.size(); ++i) {
            sent[i] = static_cast<unsigned char>(i * 3 + round);
        }
        nicsim_request_t* request[2];
        ASSERT_EQ(nicsim_bcast_post(group[0], binomial, 0, 0, sent.data(), sent.size(), 8192,
                                    &request[0]),
                  NICSIM_OK);
        ASSERT_EQ(box[0].packets.size(), 1u);
        const Mailbox::Packet p = box[0].packets[0];
        box[0].packets.clear();
        void* at = nullptr;
        size_t payload_bytes = 0;
        ASSERT_EQ(nicsim_group_place(group[1], 0, p.bytes.data(), &at, &payload_bytes, nullptr),
                  NICSIM_OK);
        ASSERT_NE(at, nullptr);
        ASSERT_EQ(payload_bytes, sent.size());
        if (0 == round) first_room = at;
        EXPECT_EQ(at, first_room) << "round " << round;
        std::memcpy(at, p.bytes.data() + NICSIM_HEADER_BYTES, payload_bytes);
        if (post_before_delivery) {
            ASSERT_EQ(nicsim_bcast_post(group[1], binomial, 0, 0, got.data(), got.size(), 8192,
                                        &request[1]),
                      NICSIM_OK);
        }
        ASSERT_EQ(nicsim_group_deliver(group[1], 0, p.bytes.data(), at, payload_bytes), NICSIM_OK);
        if (!post_before_delivery) {
            ASSERT_EQ(nicsim_bcast_post(group[1], binomial, 0, 0, got.data(), got.size(), 8192,
                                        &request[1]),
                      NICSIM_OK);
        }
        EXPECT_EQ(got, sent) << "round " << round;
        for (const auto& credit : box[1].packets) {
            ASSERT_EQ(nicsim_group_deliver(group[0], 1, credit.bytes.data(), nullptr, 0),
                      NICSIM_OK);
        }
        box[1].packets.clear();
        for (int r = 0; r < 2; ++r) {
            EXPECT_EQ(nicsim_request_test(request[r]), NICSIM_OK) << "round " << round;
            nicsim_request_free(request[r]);
        }
    }
    for (int r = 0; r < 2; ++r) nicsim_group_free(group[r]);
}

}  // namespace
