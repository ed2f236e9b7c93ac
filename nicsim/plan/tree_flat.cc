// Flat tree: the root sends to every other position, 1 first; every other node is a leaf.
//
// In Kesavan and Panda's model the slowest tree for one packet (the root's n - 1 sends take n - 1
// steps) and no faster for many, as the root sends every packet n - 1 times. It wins where a send
// costs the sender almost nothing and the receivers move the payload themselves: over shared memory
// a packet to a child is a descriptor, and the children read the root's buffer at once, each
// scheduled once, instead of waiting for a parent that waits for its own turn on a core (the
// tree Open MPI's tuned broadcast uses on up to 7 ranks from 8 KiB to 1 MiB, "basic linear").
#include "plan/tree.h"

namespace nicsim::plan {

Tree flat_tree(Rank n) {
    std::vector<std::vector<Rank>> children(n);
    for (Rank p = 1; p < n; ++p) children[0].push_back(p);
    return tree_from_children(0, std::move(children));
}

}  // namespace nicsim::plan
