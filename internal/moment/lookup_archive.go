package moment

import (
	"github.com/dbtrail/dbtrail/internal/index"
)

// archivedLookup is the index's transaction lookups extended over archived
// hours (Past.Lookup).
type archivedLookup struct {
	*index.Store
	hours ArchiveFiles
}
