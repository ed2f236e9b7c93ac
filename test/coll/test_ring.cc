// The shared-memory fabric's rings and staging area (coll/coll_nicoll_ring.h) on threads, as
// its sender and receivers run in separate processes: one sender streams packets to two
// receivers, each over a ring of its own, payloads of 0-700 bytes inline in the slot, in its
// body or staged (the same payload staged once for both receivers, as the engine sends a packet
// to a tree's children).
// Every receiver checks every packet's header and bytes. Built with ThreadSanitizer where the
// compiler has it (configure's TSAN_FLAGS), which then stops the program at the first data
// race: the TAP plan is not met and the test fails.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

extern "C" {
#include "coll_nicoll_ring.h"
}

extern "C" const char* __tsan_default_options() {
    return "halt_on_error=1:abort_on_error=1";
}

namespace {

constexpr int kWindow = 6;  // the credits, fewer than the ring's slots
constexpr int kSlots = 8;
constexpr std::size_t kBodyBytes = 7 * NICOLL_SHM_LINE;  // payloads of 265-448 bytes
constexpr std::size_t kStageBytes = 4096;
constexpr int kReceivers = 2;

std::size_t payload_bytes(std::uint64_t i) {
    return static_cast<std::size_t>((i * 37) % 701);
}
unsigned char payload_byte(std::uint64_t i, std::size_t j) {
    return static_cast<unsigned char>(i * 131 + j * 7 + 1);
}

// The shared memory: a ring per receiver, then the sender's staging area, each on its lines.
struct Segment {
    explicit Segment() {
        ring_bytes = nicoll_ring_bytes(kSlots, kBodyBytes);
        const std::size_t bytes = kReceivers * ring_bytes + kStageBytes;
        base = static_cast<unsigned char*>(std::aligned_alloc(NICOLL_SHM_LINE, bytes));
        std::memset(base, 0, bytes);
    }
    ~Segment() { std::free(base); }
    nicoll_shm_ring_t* ring(int receiver) const {
        return reinterpret_cast<nicoll_shm_ring_t*>(base + receiver * ring_bytes);
    }
    unsigned char* stage() const { return base + kReceivers * ring_bytes; }

    unsigned char* base;
    std::size_t ring_bytes;
};

void sender(const Segment& seg, std::uint64_t packets, std::uint64_t* staged,
            unsigned long long* streamed) {
    nicoll_stage_t stage{};
    stage.area = seg.stage();
    stage.bytes = kStageBytes;
    stage.streamed = streamed;
    std::uint64_t head[kReceivers] = {};
    std::uint64_t tail_seen[kReceivers] = {};
    std::vector<unsigned char> payload;
    for (std::uint64_t i = 0; i < packets; ++i) {
        nicoll_stage_forget(&stage);  // the payload changes
        payload.resize(payload_bytes(i));
        for (std::size_t j = 0; j < payload.size(); ++j) payload[j] = payload_byte(i, j);
        for (int r = 0; r < kReceivers; ++r) {
            nicoll_shm_ring_t* ring = seg.ring(r);
            while (nicoll_ring_full(ring, kWindow, head[r], &tail_seen[r])) {
                std::this_thread::yield();
            }
            nicoll_shm_slot_t* out = nicoll_ring_slot(ring, kSlots, head[r]);
            out->payload_bytes = payload.size();
            out->remote = 0;
            out->staged = 0;
            if (payload.size() > kBodyBytes) {
                while ((out->staged = nicoll_stage_put(&stage, payload.data(), payload.size(),
                                                       ring->read_cost)) == 0) {
                    std::this_thread::yield();  // no room until the receivers read
                }
                ++*staged;
            } else if (!payload.empty()) {
                std::memcpy(nicoll_ring_inline(ring, kSlots, kBodyBytes, head[r], payload.size()),
                            payload.data(), payload.size());
            }
            std::memcpy(out->header, &i, sizeof i);
            nicoll_ring_publish(out, head[r]++);
        }
    }
}

// The first packet that was not what the sender sent, or `packets` when all were. Every packet
// is taken, right or not, so that the sender never waits for good.
std::uint64_t receiver(const Segment& seg, int r, std::uint64_t packets) {
    nicoll_shm_ring_t* ring = seg.ring(r);
    std::vector<unsigned char> got;
    std::uint64_t first_wrong = packets;
    for (std::uint64_t taken = 0; taken < packets;) {
        const nicoll_shm_slot_t* in = nicoll_ring_peek(ring, kSlots, taken);
        if (in == nullptr) {
            std::this_thread::yield();
            continue;
        }
        std::uint64_t i;
        std::memcpy(&i, in->header, sizeof i);
        got.resize(in->payload_bytes);
        if (in->staged != 0) {
            nicoll_stage_read(seg.stage(), kStageBytes, in->staged, got.data(), got.size(),
                              ring->read_cost);
        } else if (!got.empty()) {
            std::memcpy(got.data(),
                        nicoll_ring_inline(ring, kSlots, kBodyBytes, taken, got.size()),
                        got.size());
        }
        bool right = i == taken && got.size() == payload_bytes(i);
        for (std::size_t j = 0; right && j < got.size(); ++j) right = got[j] == payload_byte(i, j);
        if (!right && first_wrong == packets) first_wrong = taken;
        nicoll_ring_consume(ring, ++taken);
    }
    return first_wrong;
}

TEST(ShmRing, OneSenderTwoReceiversEveryPacketIntactInOrder) {
    const std::uint64_t packets = 100000;
    Segment seg;
    std::uint64_t staged = 0;
    unsigned long long streamed = 0;
    std::uint64_t first_wrong[kReceivers] = {};
    std::vector<std::thread> threads;
    for (int r = 0; r < kReceivers; ++r) {
        threads.emplace_back([&, r] { first_wrong[r] = receiver(seg, r, packets); });
    }
    sender(seg, packets, &staged, &streamed);
    for (std::thread& t : threads) t.join();
    for (int r = 0; r < kReceivers; ++r) EXPECT_EQ(first_wrong[r], packets) << "receiver " << r;
    // Payloads over 448 bytes, 36% of them, went through the staging area, once per receiver.
    EXPECT_GT(staged, kReceivers * packets / 3);
    // Staged both ways: each way is measured, the other probed every NICOLL_STAGE_PROBE copies
    // (a payload staged for both receivers is copied once).
    if (NICOLL_STAGE_STREAMING) {
        EXPECT_GE(streamed, staged / 4 / NICOLL_STAGE_PROBE);
        EXPECT_LT(streamed, staged);
        for (int r = 0; r < kReceivers; ++r) {  // each receiver timed its copies out, both ways
            EXPECT_NE(seg.ring(r)->read_cost[0][0], 0u) << "receiver " << r;
            EXPECT_NE(seg.ring(r)->read_cost[0][1], 0u) << "receiver " << r;
        }
    }
    std::printf("# %llu packets to each of %d receivers, %llu staged, %llu with streaming stores\n",
                static_cast<unsigned long long>(packets), kReceivers,
                static_cast<unsigned long long>(staged), streamed);
}

// A ring has a power of two of slots, at least its window; the sender stops at the window.
TEST(ShmRing, SlotsAreThePowerOfTwoAboveTheWindowWhichBoundsTheSender) {
    EXPECT_EQ(nicoll_ring_slots(1), 1);
    EXPECT_EQ(nicoll_ring_slots(kWindow), kSlots);
    EXPECT_EQ(nicoll_ring_slots(8), 8);
    EXPECT_EQ(nicoll_ring_slots(9), 16);
    EXPECT_EQ(nicoll_ring_slots(NICSIM_CREDITS_MAX), NICSIM_CREDITS_MAX);
    Segment seg;
    nicoll_shm_ring_t* ring = seg.ring(0);
    std::uint64_t head = 0, tail_seen = 0, taken = 0;
    for (int round = 0; round < 3; ++round) {  // round the ring's 8 slots, 6 at a time
        while (!nicoll_ring_full(ring, kWindow, head, &tail_seen)) {
            nicoll_shm_slot_t* out = nicoll_ring_slot(ring, kSlots, head);
            std::memcpy(out->header, &head, sizeof head);
            nicoll_ring_publish(out, head++);
        }
        EXPECT_EQ(head - taken, static_cast<std::uint64_t>(kWindow));
        while (const nicoll_shm_slot_t* in = nicoll_ring_peek(ring, kSlots, taken)) {
            std::uint64_t i;
            std::memcpy(&i, in->header, sizeof i);
            EXPECT_EQ(i, taken);
            nicoll_ring_consume(ring, ++taken);
        }
        EXPECT_EQ(taken, head);
    }
}

// The choice between cached and streaming stores, from costs set by hand: before the reader
// has read payloads of the size class copied both ways, the owner's own costs, cached up to 4
// times streaming.
TEST(ShmStage, BeforeTheReaderHasCostsStreamsWhereCachedCopiesCostOver4Times) {
    if (!NICOLL_STAGE_STREAMING) GTEST_SKIP() << "no streaming stores on this architecture";
    constexpr int c = 7;  // 512 KiB-1 MiB
    nicoll_stage_t s{};
    std::uint64_t read_cost[NICOLL_STAGE_CLASSES][NICOLL_WAYS] = {};
    read_cost[c][NICOLL_WAY_STREAMING] = 50;  // no cached payload of the class read yet
    read_cost[c - 1][NICOLL_WAY_CACHED] = read_cost[c - 1][NICOLL_WAY_STREAMING] = 1;  // (another)
    s.cost[c][0] = 1000;  // whatever the costs, the first copies alternate
    s.cost[c][1] = 1;
    EXPECT_EQ(nicoll_stage_way(&s, c, read_cost), NICOLL_WAY_CACHED);
    s.payloads[c] = 1;
    EXPECT_EQ(nicoll_stage_way(&s, c, read_cost), NICOLL_WAY_STREAMING);
    s.payloads[c] = NICOLL_STAGE_WARMUP + 1;
    s.cost[c][0] = 400;
    s.cost[c][1] = 100;
    EXPECT_EQ(nicoll_stage_way(&s, c, read_cost), NICOLL_WAY_CACHED);  // 4 times: still cached
    EXPECT_EQ(nicoll_stage_way(&s, c, nullptr), NICOLL_WAY_CACHED);
    s.cost[c][1] = 99;
    EXPECT_EQ(nicoll_stage_way(&s, c, read_cost), NICOLL_WAY_STREAMING);
    s.payloads[c] = 2 * NICOLL_STAGE_PROBE;
    EXPECT_EQ(nicoll_stage_way(&s, c, read_cost), NICOLL_WAY_CACHED);  // the probe of the other way
    s.cost[c][1] = 400;
    EXPECT_EQ(nicoll_stage_way(&s, c, read_cost), NICOLL_WAY_STREAMING);
    s.payloads[c] = 2 * NICOLL_STAGE_PROBE + 1;
    EXPECT_EQ(nicoll_stage_way(&s, c, read_cost), NICOLL_WAY_CACHED);
    EXPECT_EQ(nicoll_stage_way(&s, c - 1, read_cost), NICOLL_WAY_CACHED);  // another: warming up
}

// Once the reader has read payloads of the class copied both ways: whichever way costs less
// from copy in to copy out, however the copies in alone compare.
TEST(ShmStage, ThenTheCheaperWayFromCopyInToCopyOut) {
    if (!NICOLL_STAGE_STREAMING) GTEST_SKIP() << "no streaming stores on this architecture";
    constexpr int c = NICOLL_STAGE_CLASSES - 1;  // over 2 MiB
    nicoll_stage_t s{};
    s.payloads[c] = NICOLL_STAGE_WARMUP + 1;
    s.cost[c][0] = 80;  // cached copies in cheaper...
    s.cost[c][1] = 120;
    std::uint64_t read_cost[NICOLL_STAGE_CLASSES][NICOLL_WAYS] = {};
    read_cost[c][NICOLL_WAY_CACHED] = 100;  // ...and copies out of them too
    read_cost[c][NICOLL_WAY_STREAMING] = 200;
    read_cost[c][NICOLL_WAY_APART] = 1;  // (apart: only where every process has a core)
    EXPECT_EQ(nicoll_stage_way(&s, c, read_cost), NICOLL_WAY_CACHED);
    s.cost[c][0] = 300;  // cached copies in dearer, but 300 + 100 < 120 + 300
    read_cost[c][NICOLL_WAY_STREAMING] = 300;
    EXPECT_EQ(nicoll_stage_way(&s, c, read_cost), NICOLL_WAY_CACHED);
    s.cost[c][0] = 200;  // 200 + 400 > 120 + 300: far-apart cores, whose lines the copy takes
    read_cost[c][NICOLL_WAY_CACHED] = 400;
    EXPECT_EQ(nicoll_stage_way(&s, c, read_cost), NICOLL_WAY_STREAMING);
    s.payloads[c] = 2 * NICOLL_STAGE_PROBE;
    EXPECT_EQ(nicoll_stage_way(&s, c, read_cost), NICOLL_WAY_CACHED);  // the probe of the other way
}

// Where every process has a core, the first payloads take the three ways in turn; then a payload
// goes apart where the reader's read in place costs less than the cheaper staged way's copy in
// and copy out together, unless most payloads of its class continue the one before, and the
// probes take the other two ways in turn.
TEST(ShmStage, ApartWhereReadingInPlaceCostsLessThanBothCopies) {
    if (!NICOLL_STAGE_STREAMING) GTEST_SKIP() << "no streaming stores on this architecture";
    constexpr int c = 4;  // 64-128 KiB
    nicoll_stage_t s{};
    s.may_leave_apart = true;
    std::uint64_t read_cost[NICOLL_STAGE_CLASSES][NICOLL_WAYS] = {};
    for (int n = 0; n < 6; ++n) {
        s.payloads[c] = n;
        EXPECT_EQ(nicoll_stage_way(&s, c, read_cost), n % 3) << "payload " << n;
    }
    s.payloads[c] = NICOLL_STAGE_WARMUP + 1;
    s.cost[c][0] = 100;
    s.cost[c][1] = 150;
    read_cost[c][NICOLL_WAY_CACHED] = 100;
    read_cost[c][NICOLL_WAY_STREAMING] = 100;
    EXPECT_EQ(nicoll_stage_way(&s, c, read_cost), NICOLL_WAY_CACHED);  // not read apart yet
    read_cost[c][NICOLL_WAY_APART] = 200;
    EXPECT_EQ(nicoll_stage_way(&s, c, read_cost), NICOLL_WAY_CACHED);  // 200 = 100 + 100
    read_cost[c][NICOLL_WAY_APART] = 199;
    EXPECT_EQ(nicoll_stage_way(&s, c, read_cost), NICOLL_WAY_APART);
    s.payloads[c] = NICOLL_STAGE_PROBE;
    EXPECT_EQ(nicoll_stage_way(&s, c, read_cost), NICOLL_WAY_STREAMING);  // probes: the others
    s.payloads[c] = 2 * NICOLL_STAGE_PROBE;
    EXPECT_EQ(nicoll_stage_way(&s, c, read_cost), NICOLL_WAY_CACHED);
    s.payloads[c] = NICOLL_STAGE_WARMUP + 1;
    s.continued[c] = s.payloads[c] / 4;
    EXPECT_EQ(nicoll_stage_way(&s, c, read_cost), NICOLL_WAY_APART);
    s.continued[c] += 1;  // mostly a message's next packets, copied in and out at once: staged
    EXPECT_EQ(nicoll_stage_way(&s, c, read_cost), NICOLL_WAY_CACHED);
    s.continued[c] = 0;
    s.may_leave_apart = false;  // processes that share cores: staged, whatever it costs
    EXPECT_EQ(nicoll_stage_way(&s, c, read_cost), NICOLL_WAY_CACHED);
}

// A lazy area grows as chunks reach it and counts what it grows by; a growth that would take the
// count past the limit is refused (the caller reads that payload in place), until the count
// falls again (another segment freed).
TEST(ShmStage, LazyAreaCountsItsGrowthAndStopsAtTheLimit) {
    constexpr std::size_t area_bytes = 4 * NICOLL_STAGE_GROW;
    void* area =
        mmap(nullptr, area_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(area, MAP_FAILED);
    if (!nicoll_populate(area, 1)) {
        munmap(area, area_bytes);
        GTEST_SKIP() << "no MADV_POPULATE_WRITE on this kernel: areas are not lazy";
    }
    constexpr std::size_t others = NICOLL_STAGE_GROW;  // what other segments hold
    std::size_t counted = others;
    nicoll_stage_t s{};
    s.area = static_cast<unsigned char*>(area);
    s.bytes = area_bytes;
    s.lazy = 1;
    s.counted = &counted;
    s.limit = others + 2 * NICOLL_STAGE_GROW;
    const std::vector<unsigned char> bytes(NICOLL_STAGE_GROW, 7);
    const unsigned char* payload = bytes.data();
    const std::size_t half = NICOLL_STAGE_GROW / 2;
    EXPECT_NE(nicoll_stage_put(&s, payload, half, nullptr), 0u);  // grows by one step
    EXPECT_EQ(s.ready, NICOLL_STAGE_GROW);
    EXPECT_EQ(counted, others + NICOLL_STAGE_GROW);
    nicoll_stage_forget(&s);
    EXPECT_NE(nicoll_stage_put(&s, payload, half, nullptr), 0u);  // reaches into the second
    EXPECT_EQ(counted, others + 2 * NICOLL_STAGE_GROW);
    nicoll_stage_forget(&s);
    EXPECT_EQ(nicoll_stage_put(&s, payload, NICOLL_STAGE_GROW, nullptr), 0u);  // over
    EXPECT_TRUE(s.refused);
    EXPECT_EQ(s.ready, 2 * NICOLL_STAGE_GROW);
    EXPECT_EQ(counted, others + 2 * NICOLL_STAGE_GROW);
    counted -= others;  // another segment gave its memory back
    EXPECT_NE(nicoll_stage_put(&s, payload, NICOLL_STAGE_GROW, nullptr), 0u);
    EXPECT_EQ(s.ready, 3 * NICOLL_STAGE_GROW);
    EXPECT_EQ(counted, 3 * NICOLL_STAGE_GROW);
    EXPECT_EQ(s.lazy, 1);  // (a refusal is not a failure to allocate)
    munmap(area, area_bytes);
}

TEST(ShmStage, SizeClasses) {
    EXPECT_EQ(nicoll_stage_class(4001), 0);
    EXPECT_EQ(nicoll_stage_class(8 << 10), 0);
    EXPECT_EQ(nicoll_stage_class((8 << 10) + 1), 1);
    EXPECT_EQ(nicoll_stage_class(16 << 10), 1);
    EXPECT_EQ(nicoll_stage_class(64 << 10), 3);
    EXPECT_EQ(nicoll_stage_class((64 << 10) + 1), 4);
    EXPECT_EQ(nicoll_stage_class(1 << 20), 7);
    EXPECT_EQ(nicoll_stage_class(2 << 20), 8);
    EXPECT_EQ(nicoll_stage_class((2 << 20) + 1), NICOLL_STAGE_CLASSES - 1);
    EXPECT_EQ(nicoll_stage_class(std::size_t{1} << 40), NICOLL_STAGE_CLASSES - 1);
}

// A copy either way leaves the bytes, whatever the source's alignment and the length's tail,
// and moves the cost of the way it took.
TEST(ShmStage, CopiesEitherWayIntact) {
    alignas(64) static unsigned char to[8192 + 1];  // (to[bytes] is checked)
    static unsigned char from[8192 + 64];
    for (std::size_t i = 0; i < sizeof from; ++i) from[i] = static_cast<unsigned char>(i * 13 + 5);
    nicoll_stage_t s{};
    unsigned long long streamed = 0;
    s.streamed = &streamed;
    for (int copy = 0; copy < 6; ++copy) {
        const std::size_t offset = static_cast<std::size_t>(copy) * 7 % 64;
        const std::size_t bytes = 8192 - static_cast<std::size_t>(copy) * 29;
        const bool streams = NICOLL_STAGE_STREAMING && 1 == copy % 2;
        std::memset(to, 0, sizeof to);
        EXPECT_EQ(nicoll_stage_copy(&s, to, from + offset, bytes, streams, false), streams);
        EXPECT_EQ(std::memcmp(to, from + offset, bytes), 0) << "copy " << copy;
        EXPECT_EQ(to[bytes], 0) << "copy " << copy;
        if (NICOLL_STAGE_STREAMING) {
            EXPECT_NE(s.cost[0][streams], 0u) << "copy " << copy;
        }
    }
    if (NICOLL_STAGE_STREAMING) {
        EXPECT_GT(streamed, 0u);
    }
}

// An emptied area goes on from where its last chunk ended until it is NICOLL_STAGE_ROUND bytes
// in, then starts again from its beginning; unread chunks are never overwritten.
TEST(ShmStage, EmptyAreaStartsAgainPastTheRound) {
    constexpr std::size_t kBytes = 4 * NICOLL_STAGE_ROUND, kPayload = NICOLL_STAGE_ROUND / 4;
    alignas(64) static unsigned char area[kBytes];
    static unsigned char payload[kPayload], got[kPayload];
    for (std::size_t i = 0; i < sizeof payload; ++i) payload[i] = static_cast<unsigned char>(i);
    uint64_t read_cost[NICOLL_STAGE_CLASSES][NICOLL_WAYS] = {};
    nicoll_stage_t s{};
    s.area = area;
    s.bytes = kBytes;
    std::vector<std::uint64_t> at;
    for (int i = 0; i < 5; ++i) {  // each read before the next: 4 chunks reach past the round
        nicoll_stage_forget(&s);
        at.push_back(nicoll_stage_put(&s, payload, sizeof payload, read_cost));
        ASSERT_NE(at.back(), 0u) << i;
        nicoll_stage_read(area, kBytes, at.back(), got, sizeof got, read_cost);
        ASSERT_EQ(std::memcmp(got, payload, sizeof got), 0) << i;
    }
    for (int i = 1; i < 4; ++i) EXPECT_GT(at[i], at[i - 1]) << i;  // on from the last
    EXPECT_EQ(at[4], at[0]);  // past the round, emptied: from the beginning again
    nicoll_stage_forget(&s);
    const std::uint64_t unread = nicoll_stage_put(&s, payload, sizeof payload, read_cost);
    nicoll_stage_forget(&s);
    EXPECT_GT(nicoll_stage_put(&s, payload, sizeof payload, read_cost), unread);  // not emptied
}

// A message's next packets (each payload starting where the last ended) go the way its first
// went, whatever the costs say, so that its packets left apart are read together.
TEST(ShmStage, AMessagesNextPacketsGoItsFirstsWay) {
    if (!NICOLL_STAGE_STREAMING) GTEST_SKIP() << "no streaming stores on this architecture";
    constexpr std::size_t kBytes = NICOLL_STAGE_ROUND, kPacket = 64 << 10;
    alignas(64) static unsigned char area[kBytes];
    static unsigned char message[4 * kPacket];
    const int c = nicoll_stage_class(kPacket);
    std::uint64_t read_cost[NICOLL_STAGE_CLASSES][NICOLL_WAYS] = {};
    nicoll_stage_t s{};
    s.area = area;
    s.bytes = kBytes;
    s.may_leave_apart = true;
    s.payloads[c] = NICOLL_STAGE_WARMUP + 1;
    s.cost[c][0] = s.cost[c][1] = 100;
    read_cost[c][NICOLL_WAY_CACHED] = read_cost[c][NICOLL_WAY_STREAMING] = 100;
    read_cost[c][NICOLL_WAY_APART] = 150;  // apart: cheaper than both copies
    EXPECT_EQ(nicoll_stage_put(&s, message, kPacket, read_cost), 0u);
    read_cost[c][NICOLL_WAY_APART] = 250;  // now dearer, but the message goes on apart
    for (std::size_t at = kPacket; at < sizeof message; at += kPacket) {
        EXPECT_EQ(nicoll_stage_put(&s, message + at, kPacket, read_cost), 0u) << at;
    }
    EXPECT_NE(nicoll_stage_put(&s, message, kPacket, read_cost), 0u);  // a new message: staged
    nicoll_stage_forget(&s);
    EXPECT_NE(nicoll_stage_put(&s, message + kPacket, kPacket, read_cost), 0u);  // and its next
}

// Copies through a chunk on the area's first time round pay the readers' page faults, not the
// copy: neither the owner's copy in nor the reader's copy out is timed there; once the area
// starts again from its beginning, both are.
TEST(ShmStage, CopiesOnTheAreasFirstRoundAreNotTimed) {
    if (!NICOLL_STAGE_STREAMING) GTEST_SKIP() << "no TSC to time copies with on this architecture";
    constexpr std::size_t kBytes = 4 * NICOLL_STAGE_ROUND, kPayload = NICOLL_STAGE_ROUND / 4;
    alignas(64) static unsigned char area[kBytes];
    static unsigned char payload[kPayload], got[kPayload];
    const int c = nicoll_stage_class(kPayload);
    std::uint64_t read_cost[NICOLL_STAGE_CLASSES][NICOLL_WAYS] = {};
    nicoll_stage_t s{};
    s.area = area;
    s.bytes = kBytes;
    const auto timed = [&] {
        return s.cost[c][0] + s.cost[c][1] + read_cost[c][NICOLL_WAY_CACHED] +
               read_cost[c][NICOLL_WAY_STREAMING];
    };
    for (int i = 0; i < 5; ++i) {  // 4 chunks round the area's first MiB, then from 0 again
        nicoll_stage_forget(&s);
        const std::uint64_t at = nicoll_stage_put(&s, payload, sizeof payload, read_cost);
        ASSERT_NE(at, 0u) << i;
        nicoll_stage_read(area, kBytes, at, got, sizeof got, read_cost);
        if (i < 4) {
            EXPECT_EQ(timed(), 0u) << "payload " << i << ", first time round";
        }
    }
    EXPECT_NE(s.cost[c][0], 0u);  // the fifth, cached (the warm-up alternates), timed both ways
    EXPECT_NE(read_cost[c][NICOLL_WAY_CACHED], 0u);
}

}  // namespace
