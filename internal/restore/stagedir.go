package restore

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// StagedDir is the folder under restoreDir (a restore's folder on the
// worker) that table tp is staged in; a name that cannot be a table file
// is KindBadInput.
func StagedDir(restoreDir string, tp moment.TablePlan) (string, error) {
	rel, err := snapshot.TableFile(tp.Schema, tp.Table)
	if err != nil {
		return "", fail(KindBadInput, err)
	}
	return filepath.Join(restoreDir, filepath.FromSlash(strings.TrimSuffix(rel, ".parquet"))), nil
}

// StagedMeta is the footer of a table staged at cut for a restore at at
// (as given) from source, rebuilt from snapshot base: its CREATE TABLE,
// the cut's position, and the moment and cut it stands for.
func StagedMeta(createTable, source, at, base string, cut moment.Cut) (snapshot.FooterMeta, error) {
	c, err := json.Marshal(cut)
	if err != nil {
		return snapshot.FooterMeta{}, err
	}
	return snapshot.FooterMeta{CreateTable: createTable, Position: cut.Position(), SnapshotID: base, Source: source,
		Extra: [][2]string{{snapshot.KeyAt, at}, {snapshot.KeyCut, string(c)}, {snapshot.KeyBaseSnapshot, base}}}, nil
}
