package broker

import (
	"fmt"
	"path/filepath"

	"github.com/iggo-dev/iggo/internal/metadata"
	"github.com/iggo-dev/iggo/internal/partition"
)

// damagedMetadata is the one-line start failure of a single node whose
// metadata failed verification: the file, what is wrong, and the two
// recoveries that work (docs/OPERATIONS.md, "Damaged metadata"). Starting
// empty needs the streams directory moved aside as well: with empty
// metadata every partition directory is an orphan the start-up sweep
// would delete.
func damagedMetadata(dataDir string, ce *metadata.CorruptError) error {
	meta := filepath.Join(dataDir, MetadataDir)
	streams := filepath.Join(dataDir, partition.StreamsDirName)
	return fmt.Errorf("%w. To recover, either restore %s from a backup, or start with empty metadata by moving %s and %s aside (mv %s %s.damaged; mv %s %s.damaged); see \"Damaged metadata\" in docs/OPERATIONS.md",
		ce, meta, meta, streams, meta, meta, streams, streams)
}
