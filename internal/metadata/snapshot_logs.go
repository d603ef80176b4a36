package metadata

import (
	"fmt"
	"io"
	"os"
)

// maxLogTailBytes bounds the log tail copied into a diagnostics archive.
const maxLogTailBytes = 1 << 20

// serverLogs is the server_logs.txt entry of GET_SNAPSHOT_FILE: the last
// maxLogTailBytes of the active log file, starting at a line boundary,
// or a note saying why there is none.
func serverLogs(path string) []byte {
	if path == "" {
		return []byte("the log file is off (system.logging.file_enabled = false); iggo logs to standard error only.\n")
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Appendf(nil, "log file %s: %v\n", path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Appendf(nil, "log file %s: %v\n", path, err)
	}
	start := max(info.Size()-maxLogTailBytes, 0)
	b, err := io.ReadAll(io.NewSectionReader(f, start, maxLogTailBytes))
	if err != nil {
		return fmt.Appendf(nil, "log file %s: %v\n", path, err)
	}
	if start > 0 {
		// Drop the partial first line.
		for i, c := range b {
			if c == '\n' {
				b = b[i+1:]
				break
			}
		}
	}
	head := fmt.Sprintf("# %s (last %d bytes of %d)\n", path, len(b), info.Size())
	return append([]byte(head), b...)
}
