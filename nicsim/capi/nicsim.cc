// The C API (include/nicsim/nicsim.h) over the C++ engine. Every entry point catches what the
// C++ side may throw (only std::bad_alloc in practice) and turns it into a status.
#include "config.h"
#include "nicsim/nicsim.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>
#include <memory>
#include <new>

#include "core/spares.h"
#include "nic/agent.h"
#include "plan/allgather.h"
#include "plan/barrier.h"
#include "plan/kbinomial.h"
#include "plan/tree.h"
#include "real/transport_fabric.h"

using nicsim::Status;

static_assert(static_cast<int>(Status::ok) == NICSIM_OK);
static_assert(static_cast<int>(Status::in_progress) == NICSIM_IN_PROGRESS);
static_assert(static_cast<int>(Status::invalid) == NICSIM_ERR_INVALID);
static_assert(static_cast<int>(Status::no_memory) == NICSIM_ERR_NO_MEMORY);
static_assert(static_cast<int>(Status::again) == NICSIM_ERR_AGAIN);
static_assert(static_cast<int>(Status::transport) == NICSIM_ERR_TRANSPORT);
static_assert(static_cast<int>(Status::protocol) == NICSIM_ERR_PROTOCOL);
static_assert(static_cast<int>(Status::peer_failed) == NICSIM_ERR_PEER);

struct nicsim_group {
    nicsim_group(int rank, int size, const nicsim_transport_t& transport,
                 nicsim::nic::AgentConfig config)
        : fabric(transport), agent(rank, size, fabric, std::move(config)) {}
    nicsim::real::TransportFabric fabric;
    nicsim::nic::Agent agent;
    nicsim::Spares requests;  // the memory of requests, reused
    // Theorem 3's k for the last packet count asked (a job repeats its message sizes).
    std::uint64_t k_packets = 0;
    int k = 0;
};

struct nicsim_request {
    explicit nicsim_request(nicsim_group* g) : group(g) {}
    nicsim_group* group;
    nicsim::Seq seq = 0;
};

namespace {

nicsim_status_t to_c(Status s) { return static_cast<nicsim_status_t>(s); }

template <typename F>
nicsim_status_t guarded(F&& f) noexcept {
    try {
        return to_c(f());
    } catch (const std::bad_alloc&) {
        return NICSIM_ERR_NO_MEMORY;
    } catch (...) {
        return NICSIM_ERR_INVALID;
    }
}

// An algorithm table's entry as the C API shows it.
struct Entry {
    std::string_view name;
    std::string_view description;
};

// The allgather algorithms the agent runs: the table's NIC-based ones (the host-based baselines
// run only in the simulator). Made when the library loads: every allgather call reads it.
const std::vector<const nicsim::plan::AllgatherAlgorithm*> nic_allgathers = [] {
    std::vector<const nicsim::plan::AllgatherAlgorithm*> out;
    for (const auto& a : nicsim::plan::allgather_algorithms()) {
        if (!a.on_host) out.push_back(&a);
    }
    return out;
}();

std::optional<Entry> entry(nicsim_collective_t coll, int algorithm) {
    if (algorithm < 0 || algorithm >= nicsim_algorithm_count(coll)) return std::nullopt;
    switch (coll) {
        case NICSIM_COLL_BARRIER: {
            const auto& a = nicsim::plan::barrier_algorithms()[algorithm];
            return Entry{a.name, a.description};
        }
        case NICSIM_COLL_BCAST: {
            const auto& shape = nicsim::plan::tree_shapes()[algorithm];
            return Entry{shape.name, shape.description};
        }
        case NICSIM_COLL_ALLGATHER: {
            const auto* a = nic_allgathers[algorithm];
            return Entry{a->name, a->description};
        }
    }
    return std::nullopt;
}

bool valid_algorithm(nicsim_collective_t coll, int algorithm) {
    return algorithm >= 0 && algorithm < nicsim_algorithm_count(coll);
}

// Posts what `post` starts into a new request for `group`.
template <typename Post>
nicsim_status_t post_request(nicsim_group_t* group, nicsim_request_t** request, Post&& post) {
    return guarded([&] {
        nicsim_request* req = group->requests.make<nicsim_request>(group);
        Status s;
        try {
            s = post(&req->seq);
        } catch (...) {
            group->requests.destroy(req);
            throw;
        }
        if (nicsim::failed(s)) {
            group->agent.release(req->seq);
            group->requests.destroy(req);
        } else {
            *request = req;
        }
        return s;
    });
}

}  // namespace

extern "C" {

const char* nicsim_version(void) { return PACKAGE_VERSION; }

const char* nicsim_status_string(nicsim_status_t status) {
    return nicsim::to_string(static_cast<Status>(status));
}

int nicsim_algorithm_count(nicsim_collective_t coll) {
    switch (coll) {
        case NICSIM_COLL_BARRIER:
            return static_cast<int>(nicsim::plan::barrier_algorithms().size());
        case NICSIM_COLL_BCAST: return static_cast<int>(nicsim::plan::tree_shapes().size());
        case NICSIM_COLL_ALLGATHER: return static_cast<int>(nic_allgathers.size());
    }
    return 0;
}

// The tables hold string_views of literals, so data() is NUL-terminated.
const char* nicsim_algorithm_name(nicsim_collective_t coll, int algorithm) {
    const auto e = entry(coll, algorithm);
    return e ? e->name.data() : nullptr;
}

const char* nicsim_algorithm_description(nicsim_collective_t coll, int algorithm) {
    const auto e = entry(coll, algorithm);
    return e ? e->description.data() : nullptr;
}

int nicsim_algorithm_find(nicsim_collective_t coll, const char* name) {
    if (name == nullptr) return -1;
    for (int i = 0; i < nicsim_algorithm_count(coll); ++i) {
        if (std::strcmp(nicsim_algorithm_name(coll, i), name) == 0) return i;
    }
    return -1;
}

nicsim_status_t nicsim_group_create(int rank, int size, const nicsim_transport_t* transport,
                                    const nicsim_group_config_t* config, nicsim_group_t** group) {
    if (group == nullptr) return NICSIM_ERR_INVALID;
    *group = nullptr;
    const nicsim_group_config_t defaults{};
    if (config == nullptr) config = &defaults;
    if (size < 1 || rank < 0 || rank >= size || transport == nullptr ||
        transport->send == nullptr || config->credits < 0 || config->credits > NICSIM_CREDITS_MAX) {
        return NICSIM_ERR_INVALID;
    }
    if (config->peer_credits != nullptr &&
        !std::all_of(config->peer_credits, config->peer_credits + size,
                     [](int c) { return c >= 0 && c <= NICSIM_CREDITS_MAX; })) {
        return NICSIM_ERR_INVALID;
    }
    return guarded([&] {
        nicsim::nic::AgentConfig agent;
        // A real job cannot drop a packet and ask for it again: keep every early one. Its
        // collectives keep their buffers until they complete, so payloads are sent in place.
        agent.channels.unbounded = true;
        agent.nic.stable_payloads = true;
        agent.nic.credits = config->credits;
        if (config->peer_credits != nullptr) {
            agent.peer_credits.assign(config->peer_credits, config->peer_credits + size);
        }
        if (config->order != nullptr) agent.order.assign(config->order, config->order + size);
        if (config->node_of != nullptr) {
            agent.node_of.assign(config->node_of, config->node_of + size);
        }
        try {
            *group = new nicsim_group(rank, size, *transport, std::move(agent));
        } catch (const std::invalid_argument&) {
            return Status::invalid;  // the order is not a permutation
        }
        return Status::ok;
    });
}

void nicsim_group_stats(const nicsim_group_t* group, nicsim_group_stats_t* stats) {
    if (group == nullptr || stats == nullptr) return;
    stats->forwarded = group->agent.stats().forwarded;
    stats->credit_stalls = group->agent.credit_stalls();
}

NICSIM_HOT_PATH
unsigned long long nicsim_group_settled(const nicsim_group_t* group) {
    return group == nullptr ? 0 : group->agent.settled();
}

void nicsim_group_free(nicsim_group_t* group) { delete group; }

NICSIM_HOT_PATH
nicsim_status_t nicsim_group_deliver(nicsim_group_t* group, int src, const void* header,
                                     const void* payload, size_t payload_bytes) {
    if (group == nullptr || header == nullptr || (payload == nullptr && payload_bytes != 0)) {
        return NICSIM_ERR_INVALID;
    }
    const auto h = nicsim::PacketHeader::decode_header(
        {static_cast<const std::byte*>(header), nicsim::PacketHeader::kBytes});
    if (!h || h->payload_bytes != payload_bytes) return NICSIM_ERR_PROTOCOL;
    return guarded([&] {
        return group->agent.deliver(src, *h,
                                    {static_cast<const std::byte*>(payload), payload_bytes});
    });
}

NICSIM_HOT_PATH
nicsim_status_t nicsim_group_place(nicsim_group_t* group, int src, const void* header, void** at,
                                   size_t* payload_bytes, size_t* room) {
    if (group == nullptr || header == nullptr || at == nullptr || payload_bytes == nullptr) {
        return NICSIM_ERR_INVALID;
    }
    *at = nullptr;
    *payload_bytes = 0;
    if (room != nullptr) *room = 0;
    const auto h = nicsim::PacketHeader::decode_header(
        {static_cast<const std::byte*>(header), nicsim::PacketHeader::kBytes});
    if (!h) return NICSIM_ERR_PROTOCOL;
    *payload_bytes = h->payload_bytes;
    return guarded([&] {
        const auto place = group->agent.placement(src, *h);
        if (place.empty()) return Status::ok;
        if (place.size() < h->payload_bytes) return Status::protocol;
        *at = place.data();
        if (room != nullptr) *room = place.size();
        return Status::ok;
    });
}

NICSIM_HOT_PATH
nicsim_status_t nicsim_group_progress(nicsim_group_t* group) {
    if (group == nullptr) return NICSIM_ERR_INVALID;
    return guarded([&] { return group->agent.progress(); });
}

nicsim_status_t nicsim_group_fail(nicsim_group_t* group, nicsim_status_t why) {
    if (group == nullptr || why >= NICSIM_OK || why == NICSIM_ERR_AGAIN || why == NICSIM_ERR_PEER) {
        return NICSIM_ERR_INVALID;
    }
    return guarded([&] {
        group->agent.fail(static_cast<Status>(why));
        return Status::ok;
    });
}

nicsim_status_t nicsim_group_broken(const nicsim_group_t* group) {
    return group == nullptr ? NICSIM_ERR_INVALID : to_c(group->agent.broken());
}

nicsim_status_t nicsim_abort_post(nicsim_group_t* group, nicsim_status_t why,
                                  nicsim_request_t** request) {
    if (request == nullptr) return NICSIM_ERR_INVALID;
    *request = nullptr;
    if (group == nullptr || why >= NICSIM_OK || why == NICSIM_ERR_AGAIN) return NICSIM_ERR_INVALID;
    return post_request(group, request, [&](nicsim::Seq* seq) {
        return group->agent.post_abort(static_cast<Status>(why), seq);
    });
}

NICSIM_HOT_PATH
nicsim_status_t nicsim_barrier_post(nicsim_group_t* group, int algorithm,
                                    nicsim_request_t** request) {
    if (request == nullptr) return NICSIM_ERR_INVALID;
    *request = nullptr;
    if (group == nullptr || !valid_algorithm(NICSIM_COLL_BARRIER, algorithm)) {
        return NICSIM_ERR_INVALID;
    }
    return post_request(group, request, [&](nicsim::Seq* seq) {
        return group->agent.post_barrier(nicsim::plan::barrier_algorithms()[algorithm], seq);
    });
}

NICSIM_HOT_PATH
nicsim_status_t nicsim_bcast_post(nicsim_group_t* group, int algorithm, int k, int root,
                                  void* buffer, size_t bytes, size_t packet_bytes,
                                  nicsim_request_t** request) {
    if (request == nullptr) return NICSIM_ERR_INVALID;
    *request = nullptr;
    if (group == nullptr || !valid_algorithm(NICSIM_COLL_BCAST, algorithm) || k < 0 ||
        packet_bytes == 0 || packet_bytes > UINT32_MAX || (buffer == nullptr && bytes != 0)) {
        return NICSIM_ERR_INVALID;
    }
    const auto& shape = nicsim::plan::tree_shapes()[algorithm];
    if (shape.takes_k && k == 0) {
        const auto packets = nicsim::packet_count(bytes, packet_bytes);
        if (packets != group->k_packets || group->k == 0) {
            group->k = nicsim::plan::optimal_k(
                group->agent.size(),
                static_cast<std::int64_t>(std::min<std::uint64_t>(packets, INT64_MAX)));
            group->k_packets = packets;
        }
        k = group->k;
    }
    return post_request(group, request, [&](nicsim::Seq* seq) {
        return group->agent.post_bcast(shape, k, root, bytes,
                                       static_cast<std::uint32_t>(packet_bytes),
                                       {static_cast<std::byte*>(buffer), bytes}, seq);
    });
}

NICSIM_HOT_PATH
nicsim_status_t nicsim_allgather_post(nicsim_group_t* group, int algorithm, void* result,
                                      size_t block_bytes, size_t packet_bytes, const void* own,
                                      nicsim_request_t** request) {
    if (request == nullptr) return NICSIM_ERR_INVALID;
    *request = nullptr;
    if (group == nullptr || !valid_algorithm(NICSIM_COLL_ALLGATHER, algorithm) ||
        packet_bytes == 0 || packet_bytes > UINT32_MAX || (result == nullptr && block_bytes != 0)) {
        return NICSIM_ERR_INVALID;
    }
    const std::size_t bytes = block_bytes * static_cast<std::size_t>(group->agent.size());
    return post_request(group, request, [&](nicsim::Seq* seq) {
        return group->agent.post_allgather(*nic_allgathers[algorithm], block_bytes,
                                           static_cast<std::uint32_t>(packet_bytes),
                                           {static_cast<std::byte*>(result), bytes}, seq,
                                           {static_cast<const std::byte*>(own),
                                            own == nullptr ? 0 : block_bytes});
    });
}

NICSIM_HOT_PATH
nicsim_status_t nicsim_request_test(const nicsim_request_t* request) {
    if (request == nullptr) return NICSIM_ERR_INVALID;
    return to_c(request->group->agent.test(request->seq));
}

NICSIM_HOT_PATH
void nicsim_request_free(nicsim_request_t* request) {
    if (request == nullptr) return;
    nicsim_group* group = request->group;
    group->agent.release(request->seq);
    group->requests.destroy(request);
}

}  // extern "C"
