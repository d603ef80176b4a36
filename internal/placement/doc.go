// Package placement decides where the replicas of partitions live: which
// nodes hold a new partition's replicas (Place), which replicas to move
// when nodes join, leave or die (Plan), and which replica should lead
// (Preferred).
//
// A partition's placement is an ordered replica list of node (replica)
// ids: element 0 is its preferred leader, the rest the order of
// succession. Place balances replicas per node first, then preferred
// leaders per node, and spreads each list over racks as far as that
// balance allows. Plan moves one replica at a time and keeps its position
// in the list, so the order of succession of the other members stays.
//
// Everything here is pure and deterministic: the same input gives the same
// output, with no I/O, clock or randomness, so every node of a cluster
// (and a simulation) computes the same answer.
package placement
