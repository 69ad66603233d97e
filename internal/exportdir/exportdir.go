// Package exportdir owns an export's output on the worker's machine: which
// output paths an export may write (CheckOut), the hidden staging folder
// beside the output that one rename moves into place (StagingDir,
// IsStaging), and the staged table file a retried table export reuses
// (Reusable), and a changes export's files, one per shape of a table
// (ChangesWriter, changes.go). The file formats are sqlexport's, moment's
// and snapshot's; the Export activities adapt this package to Temporal.
package exportdir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// StagingSuffix ends the name of every export staging folder.
const StagingSuffix = ".dbtrail-partial"

// StagingDir is the staging folder of an export to out by run runID: a
// hidden sibling of out (the run id cut to 12 characters), so that the
// finished export moves into place with one rename.
func StagingDir(out, runID string) string {
	id := runID
	if len(id) > 12 {
		id = id[:12]
	}
	return filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+"."+id+StagingSuffix)
}

// IsStaging reports whether path names a staging folder (hidden, ending in
// StagingSuffix): the only folders an export's cleanup may remove.
func IsStaging(path string) bool {
	base := filepath.Base(path)
	return strings.HasPrefix(base, ".") && strings.HasSuffix(base, StagingSuffix)
}

// CheckOut refuses an output an export cannot write: a relative path, a
// missing parent folder, an existing folder for a one-file export
// (oneFile: `.sql`), any existing path for a folder export (format names
// it in the error).
func CheckOut(out, format string, oneFile bool) error {
	if out == "" || !filepath.IsAbs(out) {
		return fmt.Errorf("export output %q: want an absolute path on the worker's machine", out)
	}
	parent := filepath.Dir(out)
	if st, err := os.Stat(parent); err != nil || !st.IsDir() {
		return fmt.Errorf("export output %s: its folder %s does not exist on the worker's machine", out, parent)
	}
	st, err := os.Stat(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("export output %s: %w", out, err)
	case oneFile && st.IsDir():
		return fmt.Errorf("export output %s is a folder; a .%s export is one file", out, format)
	case !oneFile:
		return fmt.Errorf("export output %s exists: a %s export writes a new folder; choose another name or remove it", out, format)
	}
	return nil
}

// Reusable reports whether path is a complete table file of an earlier
// attempt at cut (its footer names the same cut: seq and transaction
// position), with its digest and rows. A table file is written under its
// name only when complete, so one found with the same cut needs no redo.
func Reusable(path string, cut moment.Cut) (d digest.Digest, rows int64, ok bool) {
	foot, err := snapshot.ReadFooter(path)
	if err != nil || foot.Position.Seq != cut.Seq {
		return d, 0, false
	}
	if v, ok := foot.ExtraValue(snapshot.KeyCut); !ok || !sameCut(v, cut) {
		return d, 0, false
	}
	d, err = digest.File(path)
	if err != nil {
		return d, 0, false
	}
	return d, foot.Rows, true
}

// sameCut reports whether text, a footer's JSON cut, is cut.
func sameCut(text string, cut moment.Cut) bool {
	var c moment.Cut
	return json.Unmarshal([]byte(text), &c) == nil && c.Seq == cut.Seq && c.Txn.Position == cut.Txn.Position
}
