package wire

// ClusterRebalanceReply is the reply of CLUSTER_REBALANCE:
// [started u32][in_progress u32], the replica moves the request started
// and those in progress after it (started included). An empty reply
// decodes with Known false.
type ClusterRebalanceReply struct {
	Started, InProgress uint32
	// Known is false when the reply was empty.
	Known bool
}

// AppendTo appends the reply.
func (r *ClusterRebalanceReply) AppendTo(dst []byte) []byte {
	dst = appendU32(dst, r.Started)
	return appendU32(dst, r.InProgress)
}

// Decode decodes the reply, rejecting trailing bytes.
func (r *ClusterRebalanceReply) Decode(src []byte) error {
	*r = ClusterRebalanceReply{}
	if len(src) == 0 {
		return nil
	}
	rd := newReader(src)
	r.Started, r.InProgress = rd.u32(), rd.u32()
	r.Known = true
	return rd.finish()
}
