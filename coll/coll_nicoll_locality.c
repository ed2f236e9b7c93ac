/*
 * Topology awareness: the engine builds broadcast trees over the communicator's ranks in locality
 * order (nicsim_group_config_t.order), so that a subtree stays within a node, and within a
 * package, as far as it can: the real-machine analogue of Kesavan and Panda's contention-free
 * ordering. Told each rank's node (nicsim_group_config_t.node_of), it builds them as a tree over
 * the nodes, each node's first rank serving its node, so a broadcast crosses between nodes once
 * per node.
 *
 * Each rank knows its own place: its node (a hash of its host name) and the package its binding
 * lies in (hwloc, through the topology Open MPI has loaded; -1 when the process is not bound
 * within one package). Every rank must build the same trees, so the places are gathered with the
 * previous component's allgather, once per communicator, at its first nicoll collective (which
 * every rank calls at the same point, so the extra collective is safe there, as coll/han does),
 * and every rank sorts them alike: by node, then package, then rank. The same allgather carries
 * each rank's settings, which must agree (coll_nicoll_settings.c).
 */
#include "coll_nicoll.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "opal/mca/hwloc/base/base.h"

typedef struct nicoll_place {
    uint64_t node;
    int32_t package;
    int32_t rank;
    nicoll_settings_t settings;
} nicoll_place_t;

static uint64_t node_hash(void)
{
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const char *c = host; '\0' != *c; ++c) {
        h = (h ^ (unsigned char) *c) * 1099511628211ull;
    }
    return h;
}

static int32_t my_package(void)
{
    hwloc_topology_t topology = opal_hwloc_topology;
    if (NULL == topology) {
        return -1;
    }
    int32_t package = -1;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (NULL != set && 0 == hwloc_get_cpubind(topology, set, HWLOC_CPUBIND_PROCESS)) {
        hwloc_obj_t obj =
            hwloc_get_next_obj_covering_cpuset_by_type(topology, set, HWLOC_OBJ_PACKAGE, NULL);
        if (NULL != obj && hwloc_bitmap_isincluded(set, obj->cpuset)) {
            package = (int32_t) obj->logical_index;
        }
    }
    hwloc_bitmap_free(set);
    return package;
}

static int by_place(const void *a, const void *b)
{
    const nicoll_place_t *x = a, *y = b;
    if (x->node != y->node) {
        return x->node < y->node ? -1 : 1;
    }
    if (x->package != y->package) {
        return x->package < y->package ? -1 : 1;
    }
    return (x->rank > y->rank) - (x->rank < y->rank);
}

int nicoll_setup_exchange(nicoll_module_t *m, bool ok, int *order, int *node_of, bool *agree)
{
    struct ompi_communicator_t *comm = m->transport.comm;
    const int size = ompi_comm_size(comm);
    nicoll_place_t *places =
        nicoll_fault(NICOLL_FAULT_SETUP) ? NULL : malloc((size_t) size * sizeof(*places));
    /* A rank without room for every rank's place cannot join the allgather: all learn it first. */
    *agree = nicoll_all_ok(m, ok && NULL != places);
    if (!*agree) {
        if (0 == ompi_comm_rank(comm)) {
            opal_output(0, "nicoll: communicator %s (cid %u): a rank could not allocate its "
                           "transport or set-up buffers; nicoll declines this communicator, the "
                           "next component serves it",
                        nicoll_comm_name(comm), (unsigned) comm->c_contextid);
        }
        free(places);
        return OMPI_SUCCESS;
    }
    /* This process's place, found at its first communicator: as Open MPI's own locality, it
     * is taken to stay where it started (finding it, hwloc reads every thread's binding, took
     * about a tenth of a communicator's set-up). */
    static uint64_t node;
    static int32_t package;
    static bool placed;
    if (!placed) {
        node = node_hash();
        package = my_package();
        placed = true;
    }
    nicoll_place_t mine = {.node = node, .package = package, .rank = ompi_comm_rank(comm)};
    nicoll_settings_mine(&m->transport, &mine.settings);
    int rc = m->previous_allgather(&mine, sizeof(mine), MPI_BYTE, places, sizeof(mine), MPI_BYTE,
                                   comm, m->previous_allgather_module);
    if (OMPI_SUCCESS == rc) {
        *agree = nicoll_settings_agree(m, &places[0].settings, sizeof(*places));
        qsort(places, size, sizeof(*places), by_place);
        int run = 0;
        m->nodes = m->ppn = 0;
        for (int i = 0; i < size; ++i) {
            order[i] = places[i].rank;
            run = 0 < i && places[i].node == places[i - 1].node ? run + 1 : 1;
            m->nodes += 1 == run;
            m->ppn = run > m->ppn ? run : m->ppn;
            node_of[places[i].rank] = m->nodes - 1;
        }
    }
    free(places);
    return rc;
}
