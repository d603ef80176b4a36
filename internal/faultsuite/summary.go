//go:build !windows

package faultsuite

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// nanos converts a history duration for messages.
func nanos(n int64) time.Duration { return time.Duration(n).Round(time.Millisecond) }

// Summary renders the run's figures as plain-text tables: the run, the
// faults injected by kind, the operations checked by kind and outcome,
// and the anomalies by kind (with the first few of each).
func (r *Result) Summary(cfg Config) string {
	var b strings.Builder
	net := "yes (network namespaces)"
	if r.NetReason != "" {
		net = "skipped: " + r.NetReason
	}
	fmt.Fprintf(&b, "fault suite: profile %s, seed %d, %d nodes, %d partitions, %d group members\n", cfg.Profile, cfg.Seed, cfg.Nodes, cfg.Partitions, cfg.Members)
	fmt.Fprintf(&b, "schedules run: 1 (%d of %d steps), fault phase %v, whole run %v; partitions: %s\n\n",
		r.StepsRun, len(r.Schedule.Steps), cfg.Duration, r.Elapsed.Round(time.Second), net)

	tw := tabwriter.NewWriter(&b, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "fault\tinjected")
	keys := make([]string, 0, len(r.Faults))
	total := 0
	for k, v := range r.Faults {
		keys = append(keys, k)
		total += v
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(tw, "%s\t%d\n", k, r.Faults[k])
	}
	fmt.Fprintf(tw, "total\t%d\n", total)
	tw.Flush()
	b.WriteString("\n")

	tw = tabwriter.NewWriter(&b, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "operation\tok\tfail\tinfo\tmessages read")
	type row struct{ ok, fail, info, msgs int }
	rows := map[OpKind]*row{}
	for _, op := range r.Ops {
		rw := rows[op.Kind]
		if rw == nil {
			rw = &row{}
			rows[op.Kind] = rw
		}
		switch op.Type {
		case TypeOK:
			rw.ok++
		case TypeFail:
			rw.fail++
		default:
			rw.info++
		}
		rw.msgs += len(op.Records)
	}
	var all row
	for _, k := range []OpKind{KindSend, KindPoll, KindStore, KindGet, KindJoin, KindSync, KindGroupPoll, KindLeave, KindFinal} {
		if rw := rows[k]; rw != nil {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\n", k, rw.ok, rw.fail, rw.info, rw.msgs)
			all.ok, all.fail, all.info, all.msgs = all.ok+rw.ok, all.fail+rw.fail, all.info+rw.info, all.msgs+rw.msgs
		}
	}
	finalMsgs := 0
	for _, fl := range r.Final {
		finalMsgs += len(fl.Records)
	}
	fmt.Fprintf(tw, "total\t%d\t%d\t%d\t%d\n", all.ok, all.fail, all.info, all.msgs)
	tw.Flush()
	fmt.Fprintf(&b, "final logs: %d messages over %d partitions\n\n", finalMsgs, len(r.Final))

	tw = tabwriter.NewWriter(&b, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "anomaly\tfound")
	by := map[string][]Anomaly{}
	for _, a := range r.Anomalies {
		by[a.Kind] = append(by[a.Kind], a)
	}
	for _, k := range anomalyKinds() {
		fmt.Fprintf(tw, "%s\t%d\n", k, len(by[k]))
	}
	fmt.Fprintf(tw, "total\t%d\n", len(r.Anomalies))
	tw.Flush()
	for _, k := range anomalyKinds() {
		for i, a := range by[k] {
			if i == 5 {
				fmt.Fprintf(&b, "  ... %d more %s\n", len(by[k])-5, k)
				break
			}
			fmt.Fprintf(&b, "  %s: %s (ops %v)\n", k, a.Detail, a.Ops)
		}
	}
	if r.Unreplicated != "" {
		fmt.Fprintf(&b, "\nrepair: NOT every replica caught up %v after healing: %s\n", cfg.RepairWait, r.Unreplicated)
	} else {
		fmt.Fprintf(&b, "\nrepair: every partition led and fully caught up %v after healing\n", r.ReplicatedIn.Round(time.Millisecond))
	}
	for _, d := range r.NodesDown {
		fmt.Fprintf(&b, "NOT running after healing: %s\n", d)
	}
	for i := range cfg.Nodes {
		if errs := r.NodeErrors[i]; len(errs) > 0 {
			fmt.Fprintf(&b, "node %d logged %d ERROR lines, the first: %s\n", i, len(errs), errs[0])
		}
	}
	if len(r.NemesisErrors) > 0 {
		fmt.Fprintf(&b, "\nnemesis errors (faults not injected or not healed): %d\n", len(r.NemesisErrors))
		for i, e := range r.NemesisErrors {
			if i == 10 {
				fmt.Fprintf(&b, "  ... %d more\n", len(r.NemesisErrors)-10)
				break
			}
			fmt.Fprintf(&b, "  %s\n", strings.ReplaceAll(e, "\n", "\n    "))
		}
	}
	fmt.Fprintf(&b, "\nreplay: go test ./internal/faultsuite -run TestFaultSuite -v -args -faults.profile=%s -faults.seed=%d -faults.duration=%v\n", cfg.Profile, cfg.Seed, cfg.Duration)
	return b.String()
}
