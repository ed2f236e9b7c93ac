// Seeded fuzzing of the three places bytes from outside enter: the packet-header decoder, the
// agent's deliver() (a peer's packets), and the tuning-file reader. Each test feeds inputs made
// by mutating valid ones (bit flips, overwritten, inserted and dropped bytes, truncation) and
// some random ones, and checks that every input gets a clear answer and nothing else breaks:
// no crash, a decoded header that encodes back to the same bytes, a status from deliver() and an
// agent that still answers, a table or a non-empty list of errors.
//
// NICSIM_FUZZ_INPUTS sets the inputs per test (default 10000, a few seconds in the check);
// a benchmark-sized run: NICSIM_FUZZ_INPUTS=1000000 test/nicsim_tests --gtest_filter='Fuzz*'.
// NICSIM_FUZZ_SEED changes the seed (default 1); a failure names the input's number.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/packet.h"
#include "nic/agent.h"
#include "plan/allgather.h"
#include "plan/barrier.h"
#include "plan/tree.h"
#include "table.h"

namespace nicsim {
namespace {

long env_number(const char* name, long fallback) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' ? std::strtol(v, nullptr, 10) : fallback;
}

long inputs() { return env_number("NICSIM_FUZZ_INPUTS", 10000); }

// A mutated copy of `seed`: a few random edits of random kinds.
std::vector<std::byte> mutate(std::vector<std::byte> b, std::mt19937_64& rng) {
    auto below = [&](std::size_t n) { return n == 0 ? 0 : std::size_t(rng() % n); };
    const int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits; ++e) {
        switch (rng() % 6) {
        case 0:  // flip a bit
            if (!b.empty()) b[below(b.size())] ^= std::byte(1u << (rng() % 8));
            break;
        case 1:  // overwrite a byte
            if (!b.empty()) b[below(b.size())] = std::byte(rng());
            break;
        case 2:  // insert a byte
            b.insert(b.begin() + std::ptrdiff_t(below(b.size() + 1)), std::byte(rng()));
            break;
        case 3:  // drop a byte
            if (!b.empty()) b.erase(b.begin() + std::ptrdiff_t(below(b.size())));
            break;
        case 4:  // truncate
            b.resize(below(b.size() + 1));
            break;
        default:  // overwrite a 32-bit field at a header offset with an extreme value
            if (b.size() >= 24) {
                const std::uint32_t extremes[] = {0, 1, 0x7fffffffu, 0x80000000u, 0xffffffffu};
                const std::uint32_t v = extremes[rng() % 5];
                std::memcpy(&b[4 * (1 + below(5))], &v, 4);
            }
        }
    }
    return b;
}

std::vector<std::byte> random_bytes(std::mt19937_64& rng, std::size_t max) {
    std::vector<std::byte> b(rng() % (max + 1));
    for (auto& x : b) x = std::byte(rng());
    return b;
}

// A valid packet of a random kind for a group of `size` ranks and collectives 0..3.
std::vector<std::byte> valid_packet(std::mt19937_64& rng, Rank size) {
    PacketHeader h;
    h.kind = static_cast<PacketKind>(1 + rng() % 8);
    h.seq = Seq(rng() % 4);
    h.step = std::uint32_t(rng() % 16);
    h.origin = Rank(rng() % std::uint64_t(size));
    h.flags = std::uint16_t(rng() % 4);
    h.credits = std::uint16_t(rng() % 4);
    h.payload_bytes = std::uint32_t(rng() % 3 == 0 ? 0 : rng() % 1200);
    const auto head = h.encode();
    std::vector<std::byte> b(head.begin(), head.end());
    for (std::uint32_t i = 0; i < h.payload_bytes; ++i) b.push_back(std::byte(rng()));
    return b;
}

TEST(Fuzz, PacketDecoderAnswersEveryInputAndRoundTrips) {
    std::mt19937_64 rng(std::uint64_t(env_number("NICSIM_FUZZ_SEED", 1)));
    long decoded = 0;
    for (long i = 0; i < inputs(); ++i) {
        const std::vector<std::byte> b =
            i % 8 == 0 ? random_bytes(rng, 64) : mutate(valid_packet(rng, 4), rng);
        const auto whole = PacketHeader::decode(b);
        const auto head = PacketHeader::decode_header(b);
        if (whole) {
            ++decoded;
            ASSERT_TRUE(head) << "input " << i << ": decode() took what decode_header() refused";
            ASSERT_EQ(*whole, *head) << "input " << i;
            ASSERT_EQ(b.size(), PacketHeader::kBytes + whole->payload_bytes) << "input " << i;
        }
        if (head) {
            const auto again = head->encode();
            ASSERT_TRUE(std::equal(again.begin(), again.end(), b.begin()))
                << "input " << i << ": the header does not encode back to its bytes";
        }
    }
    std::printf("# %ld inputs, %ld decoded as whole packets\n", inputs(), decoded);
    EXPECT_GT(decoded, 0);  // the mutations also keep some packets valid
}

// Takes every packet, as a transport with room does.
class SinkFabric final : public nic::Fabric {
public:
    Status transmit(Rank, const PacketHeader&, std::span<const std::byte>) override {
        return Status::ok;
    }
};

TEST(Fuzz, AgentAnswersEveryPacketWithAStatus) {
    std::mt19937_64 rng(std::uint64_t(env_number("NICSIM_FUZZ_SEED", 1)) + 1);
    constexpr Rank kSize = 4;
    const plan::TreeShape* binomial = plan::find_tree_shape("binomial");
    const plan::AllgatherAlgorithm* rd = plan::find_allgather_algorithm("rd");
    const plan::AllgatherAlgorithm* ab = plan::find_allgather_algorithm("ab");
    ASSERT_NE(binomial, nullptr);
    ASSERT_NE(rd, nullptr);
    ASSERT_NE(ab, nullptr);
    long failed_ops = 0, rounds = 0;
    for (long i = 0; i < inputs(); ++rounds) {
        // A fresh agent of rank 1 with collectives 0..3 posted: two broadcasts, two allgathers
        // (one with a window of credits), then a burst of packets from its peers.
        SinkFabric fabric;
        nic::AgentConfig config;
        config.nic.credits = rounds % 2 ? 2 : 0;
        nic::Agent agent(1, kSize, fabric, config);
        std::vector<std::byte> message(5000), result(kSize * 700), small(kSize * 40);
        std::vector<std::byte> message2(300);
        Seq seqs[4];
        ASSERT_EQ(agent.post_bcast(*binomial, 0, 0, message.size(), 1000, message, &seqs[0]),
                  Status::ok);
        ASSERT_EQ(agent.post_allgather(*ab, 700, 256, result, &seqs[1]), Status::ok);
        ASSERT_EQ(agent.post_allgather(*rd, 40, 1000, small, &seqs[2]), Status::ok);
        ASSERT_EQ(agent.post_bcast(*binomial, 0, 3, message2.size(), 100, message2, &seqs[3]),
                  Status::ok);
        for (int burst = 0; burst < 64 && i < inputs(); ++burst, ++i) {
            const Rank src = Rank(rng() % kSize);
            const std::vector<std::byte> b =
                i % 16 == 0 ? random_bytes(rng, 64)
                : rng() % 4 == 0 ? valid_packet(rng, kSize)
                                 : mutate(valid_packet(rng, kSize), rng);
            const Status s = agent.deliver(src, b);
            ASSERT_TRUE(s == Status::ok || failed(s)) << "input " << i << ": " << to_string(s);
        }
        const Status p = agent.progress();
        ASSERT_TRUE(p == Status::ok || p == Status::in_progress || failed(p)) << to_string(p);
        for (Seq s : seqs) {
            const Status t = agent.test(s);
            ASSERT_TRUE(t == Status::ok || t == Status::in_progress || failed(t));
            failed_ops += failed(t);
        }
    }
    std::printf("# %ld packets to %ld agents; %ld of their collectives failed on a bad packet\n",
                inputs(), rounds, failed_ops);
}

TEST(Fuzz, TuningReaderAnswersEveryFileWithATableOrErrors) {
    std::mt19937_64 rng(std::uint64_t(env_number("NICSIM_FUZZ_SEED", 1)) + 2);
    const std::string_view valid = nicoll::tuning::embedded_text();
    const std::vector<std::byte> seed(reinterpret_cast<const std::byte*>(valid.data()),
                                      reinterpret_cast<const std::byte*>(valid.data()) +
                                          valid.size());
    long tables = 0;
    const long n = inputs();
    for (long i = 0; i < n; ++i) {
        const std::vector<std::byte> b = i % 8 == 0 ? random_bytes(rng, 256) : mutate(seed, rng);
        const std::string text(reinterpret_cast<const char*>(b.data()), b.size());
        const nicoll::tuning::LoadResult r = nicoll::tuning::load_table(text, "fuzz.json");
        ASSERT_NE(bool(r.table), !r.errors.empty())
            << "input " << i << ": a table and errors, or neither";
        for (const std::string& e : r.errors) {
            ASSERT_EQ(e.rfind("fuzz.json", 0), 0u) << "input " << i << ": an error not naming "
                                                   << "the file: " << e;
        }
        tables += bool(r.table);
    }
    std::printf("# %ld files, %ld of them valid tables\n", n, tables);
}

}  // namespace
}  // namespace nicsim
