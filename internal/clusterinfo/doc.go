// Package clusterinfo assembles the GET_CLUSTER_METADATA reply of a node
// in cluster mode from the [cluster] roster (cluster-contract.md §2): the
// cluster name, every roster node in roster order with the client-facing
// address chosen for the caller, the node's client ports, the metadata
// leader as the only Leader and every node Healthy.
//
// The package holds no state: the metadata plane calls Metadata with the
// leader it currently sees and the caller's transport-level peer address.
package clusterinfo
