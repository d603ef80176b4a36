package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/iggo-dev/iggo/wire"
	"github.com/spf13/cobra"
)

// Output formats of --output.
const (
	outputTable = "table"
	outputJSON  = "json"
	outputYAML  = "yaml"
)

// outputFormat returns the format --output names: outputTable ("text"
// is a synonym), outputJSON or outputYAML ("yml" is a synonym).
func (a *app) outputFormat() (string, error) {
	switch strings.ToLower(a.output) {
	case outputTable, "text", "":
		return outputTable, nil
	case outputJSON:
		return outputJSON, nil
	case outputYAML, "yml":
		return outputYAML, nil
	}
	return "", usagef("--output %q: want table, json or yaml", a.output)
}

// jsonOutput reports whether --output asks for structured output (JSON
// or YAML, both written by print from the same JSON view) rather than a
// table.
func (a *app) jsonOutput() (bool, error) {
	f, err := a.outputFormat()
	return f != outputTable, err
}

// print writes v as indented JSON or as YAML, or calls table with a tab
// writer whose columns are aligned when it returns.
func (a *app) print(cmd *cobra.Command, v any, table func(tw *tabwriter.Writer)) error {
	format, err := a.outputFormat()
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	switch format {
	case outputJSON:
		data, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(data, '\n'))
		return err
	case outputYAML:
		data, err := marshalYAML(v)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	table(tw)
	return tw.Flush()
}

// done reports a completed action: the sentence in table mode, obj as
// JSON otherwise.
func (a *app) done(cmd *cobra.Command, sentence string, obj any) error {
	return a.print(cmd, obj, func(tw *tabwriter.Writer) { fmt.Fprintln(tw, sentence) })
}

// row writes one tab-separated table row.
func row(tw *tabwriter.Writer, cells ...any) {
	for i, c := range cells {
		if i > 0 {
			tw.Write([]byte{'\t'})
		}
		fmt.Fprint(tw, c)
	}
	tw.Write([]byte{'\n'})
}

// kv writes one "Key:  value" line of a details block.
func kv(tw *tabwriter.Writer, key string, value any) { row(tw, key+":", value) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func mark(b bool) string {
	if b {
		return "*"
	}
	return ""
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// microsTime converts µs since the Unix epoch to a UTC time.
func microsTime(us uint64) time.Time {
	if us > math.MaxInt64 {
		us = math.MaxInt64
	}
	return time.UnixMicro(int64(us)).UTC()
}

// fmtTime renders µs since the epoch for tables.
func fmtTime(us uint64) string {
	if us == 0 {
		return "-"
	}
	return microsTime(us).Format("2006-01-02 15:04:05")
}

// fmtTimeMicros renders a message timestamp with microseconds.
func fmtTimeMicros(us uint64) string { return microsTime(us).Format("2006-01-02T15:04:05.000000Z") }

// fmtSize renders a byte count with a binary unit ("1.5 MiB").
func fmtSize(n uint64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatUint(n, 10) + " B"
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, i := float64(n)/unit, 0
	for v >= unit && i < len(units)-1 {
		v /= unit
		i++
	}
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	return s + " " + units[i]
}

// fmtMaxSize renders max_topic_size (0 and u64::MAX are unlimited).
func fmtMaxSize(n uint64) string {
	if n == 0 || n == wire.SizeUnlimited {
		return "unlimited"
	}
	return fmtSize(n)
}

// fmtLocalRetentionSize renders local_retention_size (0 is the server's
// setting, u64::MAX keeps everything).
func fmtLocalRetentionSize(n uint64) string {
	switch n {
	case 0:
		return "server default"
	case wire.LocalRetentionKeepAll:
		return "keep all"
	}
	return fmtSize(n)
}

// fmtLocalRetentionAge renders local_retention_age in µs (0 is the
// server's setting, u64::MAX no age rule).
func fmtLocalRetentionAge(us uint64) string {
	switch us {
	case 0:
		return "server default"
	case wire.LocalRetentionNoAge:
		return "none"
	}
	return fmtDuration(time.Duration(min(us, math.MaxInt64/1000)) * time.Microsecond)
}

// fmtExpiry renders message_expiry in µs (0 and u64::MAX are never).
func fmtExpiry(us uint64) string {
	if us == 0 || us == wire.ExpiryNever {
		return "never"
	}
	return fmtDuration(time.Duration(min(us, math.MaxInt64/1000)) * time.Microsecond)
}

// fmtDuration renders d with days and weeks ("7d", "1d 2h", "90s").
func fmtDuration(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	var parts []string
	for _, u := range []struct {
		name string
		d    time.Duration
	}{{"d", 24 * time.Hour}, {"h", time.Hour}, {"m", time.Minute}, {"s", time.Second}, {"ms", time.Millisecond}, {"us", time.Microsecond}} {
		if n := d / u.d; n > 0 {
			parts = append(parts, strconv.FormatInt(int64(n), 10)+u.name)
			d -= n * u.d
		}
	}
	return strings.Join(parts, " ")
}

// optionalU64 maps the "never"/"unlimited" sentinels (0 and u64::MAX) to
// nil for JSON, so consumers never meet a number beyond 2^53.
func optionalU64(v uint64) *uint64 {
	if v == 0 || v == math.MaxUint64 {
		return nil
	}
	return &v
}

// printable reports whether b is UTF-8 text without control characters
// other than tab, so it can be printed as is on one line.
func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r != '\t' && unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// fmtID renders a message id: a UUID when it has the version-4 layout
// the SDKs mint (the UUID bytes are the little-endian u128 bytes), else
// the u128 in decimal.
func fmtID(id wire.Uint128) string {
	var b [16]byte
	wire.PutUint128(b[:], id)
	if b[6]>>4 == 4 && b[8]>>6 == 2 {
		const hexdigits = "0123456789abcdef"
		out := make([]byte, 0, 36)
		for i, x := range b {
			if i == 4 || i == 6 || i == 8 || i == 10 {
				out = append(out, '-')
			}
			out = append(out, hexdigits[x>>4], hexdigits[x&15])
		}
		return string(out)
	}
	if id.Hi == 0 {
		return strconv.FormatUint(id.Lo, 10)
	}
	return fmt.Sprintf("0x%016x%016x", id.Hi, id.Lo)
}
