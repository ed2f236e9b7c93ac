// The C side of the tuning table (nicoll_tuning.h) over tuning/table.h.
#include <charconv>
#include <cstdio>
#include <cstring>
#include <new>
#include <system_error>

#include "nicoll_tuning.h"
#include "table.h"

using nicoll::tuning::Table;

struct nicoll_tuning {
    Table table;
};

// The C enums name the C++ ones by value (the conversions below are casts).
namespace {
using nicoll::tuning::Fabric;
using nicoll::tuning::Section;
static_assert(NICOLL_TUNING_BARRIER == static_cast<int>(Section::Barrier) &&
              NICOLL_TUNING_BCAST == static_cast<int>(Section::Bcast) &&
              NICOLL_TUNING_ALLGATHER == static_cast<int>(Section::Allgather) &&
              NICOLL_TUNING_IBARRIER == static_cast<int>(Section::Ibarrier) &&
              NICOLL_TUNING_IBCAST == static_cast<int>(Section::Ibcast) &&
              NICOLL_TUNING_IALLGATHER == static_cast<int>(Section::Iallgather) &&
              NICOLL_TUNING_TRANSPORT == static_cast<int>(Section::Transport));
static_assert(NICOLL_TUNING_FABRIC_UNKNOWN == static_cast<int>(Fabric::Unknown) &&
              NICOLL_TUNING_FABRIC_SHM == static_cast<int>(Fabric::Shm) &&
              NICOLL_TUNING_FABRIC_UCX == static_cast<int>(Fabric::Ucx) &&
              NICOLL_TUNING_FABRIC_PML == static_cast<int>(Fabric::Pml) &&
              NICOLL_TUNING_FABRIC_MIXED == static_cast<int>(Fabric::Mixed));
}  // namespace

extern "C" {

nicoll_tuning_t* nicoll_tuning_load(const char* path, char* error, size_t error_size) {
    nicoll::tuning::LoadResult r = nicoll::tuning::load_table_file(path);
    if (!r.table) {
        std::string why = r.errors.empty() ? std::string(path) + ": not loaded" : r.errors.front();
        if (r.errors.size() > 1)
            why += " (and " + std::to_string(r.errors.size() - 1) + " more errors)";
        if (error != nullptr && error_size > 0) std::snprintf(error, error_size, "%s", why.c_str());
        return nullptr;
    }
    auto* t = new (std::nothrow) nicoll_tuning{std::move(*r.table)};
    if (t == nullptr && error != nullptr && error_size > 0)
        std::snprintf(error, error_size, "%s: out of memory", path);
    return t;
}

void nicoll_tuning_free(nicoll_tuning_t* table) {
    delete table;
}

const nicoll_tuning_t* nicoll_tuning_embedded(void) {
    static const nicoll_tuning embedded{nicoll::tuning::embedded_table()};
    return &embedded;
}

const char* nicoll_tuning_name(const nicoll_tuning_t* table) {
    return table->table.name.c_str();
}

const char* nicoll_tuning_provenance(const nicoll_tuning_t* table) {
    return table->table.provenance.c_str();
}

unsigned long long nicoll_tuning_digest(const nicoll_tuning_t* table) {
    return table->table.digest;
}

int nicoll_tuning_decide(const nicoll_tuning_t* table, nicoll_tuning_section_t section,
                         int comm_size, size_t bytes, int nodes, int ppn,
                         nicoll_tuning_fabric_t fabric, nicoll_tuning_decision_t* decision) {
    nicoll::tuning::Query q;
    q.section = static_cast<nicoll::tuning::Section>(section);
    q.comm_size = comm_size;
    q.bytes = bytes;
    q.nodes = nodes;
    q.ppn = ppn;
    q.fabric = static_cast<nicoll::tuning::Fabric>(fabric);
    const nicoll::tuning::Rule* r = nicoll::tuning::decide(table->table, q);
    if (r == nullptr) return 0;
    decision->algorithm = r->algorithm;
    decision->k = r->k;
    decision->packet_size = static_cast<size_t>(r->packet_size);
    decision->credits = r->credits;
    decision->rule = r->name.c_str();
    return 1;
}

const char* nicoll_tuning_fabric_name(nicoll_tuning_fabric_t fabric) {
    return nicoll::tuning::fabric_name(static_cast<nicoll::tuning::Fabric>(fabric)).data();
}

int nicoll_tuning_parse_size(const char* text, unsigned long long* bytes) {
    std::uint64_t v = 0;
    if (text == nullptr || nicoll::tuning::parse_size(text, &v) != nicoll::tuning::SizeSyntax::Ok) {
        return 0;
    }
    *bytes = v;
    return 1;
}

int nicoll_tuning_parse_integer(const char* text, long min, long max, long* value) {
    if (text == nullptr || *text < '0' || *text > '9') return 0;
    const char* end = text + std::strlen(text);
    long v = 0;
    const auto [ptr, ec] = std::from_chars(text, end, v);
    if (ec != std::errc{} || ptr != end || v < min || v > max) return 0;
    *value = v;
    return 1;
}

size_t nicoll_tuning_auto_packet_size(int comm_size) {
    return comm_size == 2 ? std::size_t{4} << 20 : 65536;
}

}  // extern "C"
