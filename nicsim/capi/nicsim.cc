// The C API (include/nicsim/nicsim.h) over the C++ engine. Every entry point catches what the
// C++ side may throw (only std::bad_alloc in practice) and turns it into a status.
#include "config.h"
#include "nicsim/nicsim.h"

#include <cstring>
#include <memory>
#include <new>

#include "nic/agent.h"
#include "plan/barrier.h"
#include "real/transport_fabric.h"

using nicsim::Status;

static_assert(static_cast<int>(Status::ok) == NICSIM_OK);
static_assert(static_cast<int>(Status::in_progress) == NICSIM_IN_PROGRESS);
static_assert(static_cast<int>(Status::invalid) == NICSIM_ERR_INVALID);
static_assert(static_cast<int>(Status::no_memory) == NICSIM_ERR_NO_MEMORY);
static_assert(static_cast<int>(Status::again) == NICSIM_ERR_AGAIN);
static_assert(static_cast<int>(Status::transport) == NICSIM_ERR_TRANSPORT);
static_assert(static_cast<int>(Status::protocol) == NICSIM_ERR_PROTOCOL);

struct nicsim_group {
    nicsim_group(int rank, int size, const nicsim_transport_t& transport)
        : fabric(transport), agent(rank, size, fabric) {}
    nicsim::real::TransportFabric fabric;
    nicsim::nic::Agent agent;
};

struct nicsim_request {
    nicsim_group* group;
    nicsim::Seq seq;
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

bool valid_algorithm(nicsim_collective_t coll, int algorithm) {
    return algorithm >= 0 && algorithm < nicsim_algorithm_count(coll);
}

}  // namespace

extern "C" {

const char* nicsim_version(void) { return PACKAGE_VERSION; }

const char* nicsim_status_string(nicsim_status_t status) {
    return nicsim::to_string(static_cast<Status>(status));
}

int nicsim_algorithm_count(nicsim_collective_t coll) {
    switch (coll) {
        case NICSIM_COLL_BARRIER: return static_cast<int>(nicsim::plan::barrier_algorithms().size());
    }
    return 0;
}

const char* nicsim_algorithm_name(nicsim_collective_t coll, int algorithm) {
    if (!valid_algorithm(coll, algorithm)) return nullptr;
    // The tables hold string_views of literals, so data() is NUL-terminated.
    return nicsim::plan::barrier_algorithms()[algorithm].name.data();
}

const char* nicsim_algorithm_description(nicsim_collective_t coll, int algorithm) {
    if (!valid_algorithm(coll, algorithm)) return nullptr;
    return nicsim::plan::barrier_algorithms()[algorithm].description.data();
}

int nicsim_algorithm_find(nicsim_collective_t coll, const char* name) {
    if (name == nullptr) return -1;
    for (int i = 0; i < nicsim_algorithm_count(coll); ++i) {
        if (std::strcmp(nicsim_algorithm_name(coll, i), name) == 0) return i;
    }
    return -1;
}

size_t nicsim_packet_max_bytes(void) { return nicsim::kPacketMaxBytes; }

nicsim_status_t nicsim_group_create(int rank, int size, const nicsim_transport_t* transport,
                                    nicsim_group_t** group) {
    if (group == nullptr) return NICSIM_ERR_INVALID;
    *group = nullptr;
    if (size < 1 || rank < 0 || rank >= size || transport == nullptr || transport->send == nullptr) {
        return NICSIM_ERR_INVALID;
    }
    return guarded([&] {
        *group = new nicsim_group(rank, size, *transport);
        return Status::ok;
    });
}

void nicsim_group_free(nicsim_group_t* group) { delete group; }

nicsim_status_t nicsim_group_deliver(nicsim_group_t* group, int src, const void* packet,
                                     size_t bytes) {
    if (group == nullptr || (packet == nullptr && bytes != 0)) return NICSIM_ERR_INVALID;
    return guarded([&] {
        return group->agent.deliver(src, {static_cast<const std::byte*>(packet), bytes});
    });
}

nicsim_status_t nicsim_group_progress(nicsim_group_t* group) {
    if (group == nullptr) return NICSIM_ERR_INVALID;
    return guarded([&] { return group->agent.progress(); });
}

nicsim_status_t nicsim_barrier_post(nicsim_group_t* group, int algorithm,
                                    nicsim_request_t** request) {
    if (request == nullptr) return NICSIM_ERR_INVALID;
    *request = nullptr;
    if (group == nullptr || !valid_algorithm(NICSIM_COLL_BARRIER, algorithm)) {
        return NICSIM_ERR_INVALID;
    }
    return guarded([&] {
        auto req = std::make_unique<nicsim_request>(nicsim_request{group, 0});
        const Status s =
            group->agent.post_barrier(nicsim::plan::barrier_algorithms()[algorithm], &req->seq);
        if (nicsim::failed(s)) {
            group->agent.release(req->seq);
        } else {
            *request = req.release();
        }
        return s;
    });
}

nicsim_status_t nicsim_request_test(const nicsim_request_t* request) {
    if (request == nullptr) return NICSIM_ERR_INVALID;
    return to_c(request->group->agent.test(request->seq));
}

void nicsim_request_free(nicsim_request_t* request) {
    if (request == nullptr) return;
    request->group->agent.release(request->seq);
    delete request;
}

}  // extern "C"
