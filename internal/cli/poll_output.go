package cli

import (
	"bufio"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/template"
	"time"
	"unicode/utf8"

	"github.com/iggo-dev/iggo/wire"
)

// Table limits of `iggo poll`: longer cells are cut and say how long
// they were.
const (
	// maxTablePayloadRunes is how much of a text payload the table shows.
	maxTablePayloadRunes = 100
	// maxTableBinaryBytes is how many bytes of a binary payload the
	// table shows in hex.
	maxTableBinaryBytes = 32
	// maxTableHeadersRunes is how much of the headers the table shows.
	maxTableHeadersRunes = 60
)

// messageWriter writes one polled message in the chosen output form.
type messageWriter func(w *bufio.Writer, partition uint32, m *wire.PolledMessage) error

// messageWriter returns the writer the flags and --output choose.
func (a *app) messageWriter(f *pollFlags) (messageWriter, error) {
	format, err := a.outputFormat()
	if err != nil {
		return nil, err
	}
	if f.raw && f.format != "" {
		return nil, usagef("--raw and --format exclude each other")
	}
	if f.delimiter != "\n" && !f.raw {
		return nil, usagef("--delimiter goes with --raw")
	}
	if format != outputTable && (f.raw || f.format != "") {
		flag := "--raw"
		if f.format != "" {
			flag = "--format"
		}
		return nil, usagef("%s and --output %s exclude each other", flag, format)
	}
	switch {
	case f.raw:
		return rawWriter(f.delimiter), nil
	case f.format != "":
		return templateWriter(f.format)
	case format == outputJSON:
		return writeJSON, nil
	case format == outputYAML:
		return writeYAML, nil
	}
	header := false
	return func(w *bufio.Writer, partition uint32, m *wire.PolledMessage) error {
		if !header {
			header = true
			fmt.Fprintf(w, "%-9s  %-8s  %-27s  %-12s  %s\n", "PARTITION", "OFFSET", "TIMESTAMP", "HEADERS", "PAYLOAD")
		}
		writeText(w, partition, m)
		return nil
	}, nil
}

// rawWriter writes each payload as is followed by delimiter.
func rawWriter(delimiter string) messageWriter {
	return func(w *bufio.Writer, _ uint32, m *wire.PolledMessage) error {
		w.Write(m.Payload)
		_, err := w.WriteString(delimiter)
		return err
	}
}

func writeText(w *bufio.Writer, partition uint32, m *wire.PolledMessage) {
	hs := "-"
	if len(m.UserHeaders) > 0 {
		hs = truncRunes(fmtHeaders(m.UserHeaders), maxTableHeadersRunes)
	}
	fmt.Fprintf(w, "%-9d  %-8d  %-27s  %-12s  %s\n", partition, m.Offset, fmtTimeMicros(m.Timestamp), hs, fmtPayload(m.Payload))
}

// fmtPayload renders a payload for one table cell: UTF-8 text without
// control characters as is, other UTF-8 text Go-quoted, anything else as
// hex. A payload longer than the table shows is cut, and the cell ends
// with its full size.
func fmtPayload(b []byte) string {
	var s string
	cut := false
	switch {
	case !utf8.Valid(b):
		n := min(len(b), maxTableBinaryBytes)
		s, cut = "hex:"+hex.EncodeToString(b[:n]), n < len(b)
	case printable(b):
		s = truncRunes(string(b), maxTablePayloadRunes)
		cut = len(s) < len(b)
	default:
		t := truncRunes(string(b), maxTablePayloadRunes)
		s, cut = strconv.Quote(t), len(t) < len(b)
	}
	if cut {
		s += fmt.Sprintf("… (%d bytes", len(b))
		if len(b) >= 1024 {
			s += ", " + fmtSize(uint64(len(b)))
		}
		s += ")"
	}
	return s
}

// truncRunes returns the first n runes of s.
func truncRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// polledView is one message of `poll -o json` (one object per line) and
// `poll -o yaml` (one document per message).
type polledView struct {
	Partition       uint32         `json:"partition"`
	Offset          uint64         `json:"offset"`
	ID              string         `json:"id"`
	Timestamp       time.Time      `json:"timestamp"`
	TimestampMicros uint64         `json:"timestamp_us"`
	OriginMicros    uint64         `json:"origin_timestamp_us"`
	Checksum        uint64         `json:"checksum"`
	Headers         map[string]any `json:"headers,omitempty"`
	Payload         *string        `json:"payload,omitempty"`
	PayloadBase64   *string        `json:"payload_base64,omitempty"`
}

func newPolledView(partition uint32, m *wire.PolledMessage) polledView {
	v := polledView{
		Partition: partition, Offset: m.Offset, ID: fmtID(m.ID), Timestamp: microsTime(m.Timestamp),
		TimestampMicros: m.Timestamp, OriginMicros: m.OriginTimestamp, Checksum: m.Checksum,
		Headers: headersMap(m.UserHeaders),
	}
	if utf8.Valid(m.Payload) {
		// Valid UTF-8 travels as a JSON string without loss.
		s := string(m.Payload)
		v.Payload = &s
	} else {
		s := base64.StdEncoding.EncodeToString(m.Payload)
		v.PayloadBase64 = &s
	}
	return v
}

func writeJSON(w *bufio.Writer, partition uint32, m *wire.PolledMessage) error {
	data, err := json.Marshal(newPolledView(partition, m))
	if err != nil {
		return fmt.Errorf("encode message %d: %w", m.Offset, err)
	}
	w.Write(data)
	return w.WriteByte('\n')
}

// writeYAML writes one message as a YAML document of a stream.
func writeYAML(w *bufio.Writer, partition uint32, m *wire.PolledMessage) error {
	data, err := marshalYAML(newPolledView(partition, m))
	if err != nil {
		return fmt.Errorf("encode message %d: %w", m.Offset, err)
	}
	w.WriteString("---\n")
	_, err = w.Write(data)
	return err
}

// templateMessage is what a `poll --format` template sees.
type templateMessage struct {
	Partition             uint32
	Offset                uint64
	ID                    string
	Timestamp             time.Time
	TimestampMicros       uint64
	OriginTimestampMicros uint64
	Checksum              uint64
	Size                  int
	Headers               map[string]any
	Payload               string
}

// templateFuncs are the functions a `poll --format` template may call.
var templateFuncs = template.FuncMap{
	"hex":     func(s string) string { return hex.EncodeToString([]byte(s)) },
	"base64":  func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
	"quote":   strconv.Quote,
	"preview": func(s string) string { return fmtPayload([]byte(s)) },
	"trunc":   func(n int, s string) string { return truncRunes(s, n) },
	"json": func(v any) (string, error) {
		data, err := json.Marshal(v)
		return string(data), err
	},
}

// templateWriter parses a --format template; each message is executed
// through it and followed by a newline.
func templateWriter(text string) (messageWriter, error) {
	tmpl, err := template.New("format").Funcs(templateFuncs).Option("missingkey=zero").Parse(text)
	if err != nil {
		return nil, usagef("--format: %v", strings.TrimPrefix(err.Error(), "template: "))
	}
	return func(w *bufio.Writer, partition uint32, m *wire.PolledMessage) error {
		v := templateMessage{
			Partition: partition, Offset: m.Offset, ID: fmtID(m.ID), Timestamp: microsTime(m.Timestamp),
			TimestampMicros: m.Timestamp, OriginTimestampMicros: m.OriginTimestamp, Checksum: m.Checksum,
			Size: len(m.Payload), Headers: headersMap(m.UserHeaders), Payload: string(m.Payload),
		}
		if err := tmpl.Execute(w, v); err != nil {
			return usagef("--format: message %d: %v", m.Offset, strings.TrimPrefix(err.Error(), "template: "))
		}
		return w.WriteByte('\n')
	}, nil
}

// headersMap decodes a user-headers block for JSON; an undecodable block
// is reported as {"_raw": base64}.
func headersMap(block []byte) map[string]any {
	if len(block) == 0 {
		return nil
	}
	var hs wire.UserHeaders
	if err := hs.Decode(block); err != nil {
		return map[string]any{"_raw": base64.StdEncoding.EncodeToString(block)}
	}
	out := make(map[string]any, len(hs))
	for _, h := range hs {
		out[headerKey(h.Key)] = optionValue(wire.OptionKind(h.Value.Kind), h.Value.Data)
	}
	return out
}

func headerKey(f wire.HeaderField) string {
	if f.Kind == wire.HeaderString || f.Kind == wire.HeaderRaw && printable(f.Data) {
		return string(f.Data)
	}
	return jsonScalar(optionValue(wire.OptionKind(f.Kind), f.Data))
}

// fmtHeaders renders headers for text output: k=v,k2=v2.
func fmtHeaders(block []byte) string {
	var hs wire.UserHeaders
	if err := hs.Decode(block); err != nil {
		return "(undecodable)"
	}
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = headerKey(h.Key) + "=" + fmtOptionValue("", wire.OptionKind(h.Value.Kind), h.Value.Data)
	}
	return strings.Join(parts, ",")
}
