package cli

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/iggo-dev/iggo/internal/clusterinfo/local"
	"github.com/spf13/cobra"
)

func (a *app) clusterStatusCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show every node of a local cluster (iggo cluster start) with its role",
		Long: `Ask every node of the local cluster in --dir for GET_CLUSTER_METADATA (as the
root user) and print, per node, its address, whether it answers, the role the
cluster gives it and the leader that node itself sees. The cluster's leader is
the node that reports itself as leader while no node names another one.

Exits 0 only when the cluster agrees on a leader; 3 when no node answers;
1 when nodes answer but no leader is agreed (an election in progress, or
too few nodes up for a quorum).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := local.ReadLayout(dir)
			if err != nil {
				return usagef("%v (is %s a cluster started with 'iggo cluster start'?)", err, dir)
			}
			per := a.timeout
			if per <= 0 || per > 5*time.Second {
				per = 5 * time.Second
			}
			views := local.Survey(cmd.Context(), l.TCPAddrs(), per)
			leader := local.Agreed(views)
			type nodeView struct {
				Name    string `json:"name"`
				Address string `json:"address"`
				Up      bool   `json:"up"`
				Role    string `json:"role"`
				Sees    string `json:"sees_leader"`
				Error   string `json:"error,omitempty"`
			}
			v := struct {
				Name   string     `json:"name"`
				Leader string     `json:"leader"`
				Nodes  []nodeView `json:"nodes"`
			}{Name: l.Name}
			if leader >= 0 {
				v.Leader = local.NodeName(leader)
			}
			for i, nv := range views {
				n := nodeView{Name: local.NodeName(i), Address: nv.Addr, Up: nv.Err == nil, Role: "follower", Sees: "-"}
				if nv.Err != nil {
					n.Role, n.Error = "unreachable", local.Reason(nv.Err, nv.Addr)
				} else if nv.Leader >= 0 {
					n.Sees = nv.Metadata.Nodes[nv.Leader].Name
				}
				if i == leader {
					n.Role = "leader"
				}
				v.Nodes = append(v.Nodes, n)
			}
			err = a.print(cmd, v, func(tw *tabwriter.Writer) {
				kv(tw, "Cluster", l.Name)
				lead := v.Leader
				if lead == "" {
					lead = "none agreed"
				}
				kv(tw, "Leader", lead)
				row(tw)
				row(tw, "NODE", "ADDRESS", "ROLE", "SEES LEADER", "ERROR")
				for _, n := range v.Nodes {
					e := n.Error
					if e == "" {
						e = "-"
					}
					row(tw, n.Name, n.Address, n.Role, n.Sees, e)
				}
			})
			if err != nil {
				return err
			}
			return noLeaderError(l.Name, views, leader)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", DefaultClusterDir, "directory of the cluster")
	return cmd
}

// noLeaderError is the error of a status without an agreed leader: a
// connError (ExitConnection) when no node answers, a plain error
// (ExitError) when some do; nil when leader names a node.
func noLeaderError(name string, views []local.NodeView, leader int) error {
	if leader >= 0 {
		return nil
	}
	var up int
	addrs := make([]string, len(views))
	for i, v := range views {
		addrs[i] = v.Addr
		if v.Err == nil {
			up++
		}
	}
	if up == 0 {
		return &connError{addr: strings.Join(addrs, ", "), err: errors.New("no node of cluster " + name + " answers (start it with 'iggo cluster start')")}
	}
	return fmt.Errorf("cluster %s has no agreed leader (%d of %d nodes answer)", name, up, len(views))
}
