package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/internal/atomicfile"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// planChanges cuts the range [From, Until) and lists the tables to write:
// those of sel with changes in the range, and every table sel names.
func (a *Activities) planChanges(ctx context.Context, sp ExportSpec, sel moment.Selection) (*ChangesRange, []ExportTableInput, error) {
	from, err1 := moment.ParseAt(sp.From)
	until, err2 := moment.ParseAt(sp.Until)
	if err := errors.Join(err1, err2); err != nil {
		return nil, nil, nonRetryable(ErrBadInput, err)
	}
	past := a.past(ctx, sp.Source)
	r, err := past.ResolveRange(ctx, from, until)
	if err != nil {
		return nil, nil, momentErr(err)
	}
	hist, err := a.Index.SchemaHistory(ctx, sp.Source)
	if err != nil {
		return nil, nil, err
	}
	counts, err := past.ChangeCounts(ctx, r.After(), r.Upto())
	if err != nil {
		return nil, nil, momentErr(err)
	}
	tables, err := moment.SelectChanges(hist, r.Upto(), sel, counts)
	if err != nil {
		return nil, nil, nonRetryable(ErrBadInput, err)
	}
	cr := &ChangesRange{From: r.From, Until: r.Until}
	var jobs []ExportTableInput
	for _, t := range tables {
		jobs = append(jobs, ExportTableInput{Source: sp.Source, Format: ExportChanges, Schema: t.Key.Schema, Name: t.Key.Table,
			Range: cr, Always: t.Named, Spec: ExportSpecHeader{From: sp.From, Until: sp.Until},
			Need: uint64(max(t.Changes, 0)) * bytesPerChange})
	}
	return cr, jobs, nil
}

// shapeWriter is the open changes file of one shape.
type shapeWriter struct {
	n    int
	def  *schema.Table
	rel  string
	file *atomicfile.File
	hc   *digest.Hasher
	w    *snapshot.ChangesWriter
}

// exportChanges writes the changes of one table in the range, streamed
// from the events seam: one file per shape (a schema change that changes
// the stored columns starts the next file), <schema>/<table>.<n>.parquet
// with n = 000001, 000002, … in stream order. A retry redoes the table.
func (a *Activities) exportChanges(ctx context.Context, in ExportTableInput, set func(any)) (ExportTableResult, error) {
	k := moment.TableKey{Schema: in.Schema, Table: in.Name}
	res := ExportTableResult{Schema: in.Schema, Table: in.Name}
	base, err := snapshot.TableFile(in.Schema, in.Name)
	if err != nil {
		return res, nonRetryable(ErrBadInput, err)
	}
	dir := filepath.Join(in.Staging, in.Schema)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	// Files of an earlier attempt are written again.
	stale, _ := filepath.Glob(filepath.Join(dir, globQuote(in.Name)+".[0-9]*.parquet"))
	for _, p := range stale {
		os.Remove(p)
	}
	if err := a.checkRoom(in.Staging, in.Need, "export changes of "+k.String()); err != nil {
		return res, err
	}
	hist, err := a.Index.SchemaHistory(ctx, in.Source)
	if err != nil {
		return res, err
	}
	versions := map[uint32]change.SchemaVersion{}
	var last *change.SchemaVersion // the table's version at the range's end
	for i, v := range hist {
		if v.Schema == k.Schema && v.Table == k.Table {
			versions[v.Version] = v
			if v.Seq <= in.Range.Until.Seq && v.Definition != nil {
				last = &hist[i]
			}
		}
	}
	rangeJSON, err := json.Marshal(map[string]any{"from": in.Range.From, "until": in.Range.Until})
	if err != nil {
		return res, err
	}
	var cur *shapeWriter
	closeCur := func() error {
		if cur == nil {
			return nil
		}
		wr, err := cur.w.Close()
		if err == nil {
			err = cur.file.Commit()
		}
		if err != nil {
			cur.w.Abort()
		}
		if err != nil {
			cur.file.Abort()
			return err
		}
		res.Files = append(res.Files, ExportFile{Path: cur.rel, Rows: wr.Rows, SHA256: cur.hc.Digest().SHA256, Size: cur.hc.Digest().Size})
		cur = nil
		return nil
	}
	open := func(v change.SchemaVersion, stored *schema.Table) error {
		n := len(res.Files) + 1
		rel := strings.TrimSuffix(base, ".parquet") + fmt.Sprintf(".%06d.parquet", n)
		file, err := atomicfile.Create(filepath.Join(in.Staging, filepath.FromSlash(rel)), 0o644)
		if err != nil {
			return err
		}
		hc := digest.NewHasher()
		meta := snapshot.ChangesMeta{Source: in.Source, CreateTable: a.createTableOf(ctx, in.Source, v, stored),
			Extra: [][2]string{{snapshot.KeyFrom, in.Spec.From}, {snapshot.KeyUntil, in.Spec.Until}, {snapshot.KeyRange, string(rangeJSON)},
				{snapshot.KeyExportedAt, in.ExportedAt.Format(time.RFC3339Nano)}, {snapshot.KeyShape, fmt.Sprint(n)}}}
		w, err := snapshot.NewChangesWriter(io.MultiWriter(file, hc), stored, meta, snapshot.WriterOptions{})
		if err != nil {
			file.Abort()
			return nonRetryable(ErrBadInput, err)
		}
		cur = &shapeWriter{n: n, def: stored, rel: rel, file: file, hc: hc, w: w}
		return nil
	}
	defer func() {
		if cur != nil {
			cur.w.Abort()
			cur.file.Abort()
		}
	}()
	name := k.String()
	err = a.events(ctx, in.Source).TableEvents(ctx, in.Source, in.Schema, in.Name, in.Range.From.Seq, in.Range.Until.Seq, func(e change.Event) error {
		v, ok := versions[e.SchemaVersion]
		if !ok || v.Definition == nil {
			return nonRetryable(ErrBadInput, fmt.Errorf("changes of %s: event seq %d follows schema version %d, which the schema history does not define", name, e.Seq, e.SchemaVersion))
		}
		stored, err := v.Definition.Stored()
		if err != nil {
			return nonRetryable(ErrBadInput, err)
		}
		if cur == nil || !schema.SameShape(cur.def, stored) {
			if err := closeCur(); err != nil {
				return err
			}
			if err := open(v, stored); err != nil {
				return err
			}
		}
		if err := cur.w.Append(changeOf(e)); err != nil {
			var re *snapshot.RowError
			if errors.As(err, &re) {
				return nonRetryable(ErrBadInput, err)
			}
			return err
		}
		res.Events++
		if res.Events%65536 == 0 {
			set(ExportProgress{Table: name, Stage: "changes", Rows: res.Events})
		}
		return nil
	})
	if err != nil {
		return ExportTableResult{}, err
	}
	if res.Events == 0 && in.Always && last != nil {
		stored, err := last.Definition.Stored()
		if err != nil {
			return ExportTableResult{}, nonRetryable(ErrBadInput, err)
		}
		if err := open(*last, stored); err != nil {
			return ExportTableResult{}, err
		}
	}
	if err := closeCur(); err != nil {
		return ExportTableResult{}, err
	}
	res.Rows = res.Events
	a.log(ctx).Info("table changes exported", "table", name, "changes", res.Events, "files", len(res.Files))
	return res, nil
}

// changeOf is an index event as a changes file row.
func changeOf(e change.Event) snapshot.Change {
	return snapshot.Change{Seq: e.Seq, Op: byte(e.Op), CommitTime: e.CommitTime, GTID: e.GTID, BinlogFile: e.BinlogFile,
		EndPos: e.EndPos, PK: e.PK, PKBefore: e.PKBefore, Before: e.Before, After: e.After}
}

// createTableOf is the CREATE TABLE of a table's shape: the one in the
// footer of a local snapshot's table file of that shape (the dump's), else the
// schema change's own CREATE TABLE statement, else one rendered from the
// definition (snapshot.CreateTableSQL).
func (a *Activities) createTableOf(ctx context.Context, source string, v change.SchemaVersion, stored *schema.Table) string {
	local := moment.LocalCatalog{SourceDir: a.sourceDir(source)}
	if ms, err := local.Manifests(ctx); err == nil {
		for i := len(ms) - 1; i >= 0; i-- {
			mt, ok := ms[i].Table(v.Schema, v.Table)
			if !ok {
				continue
			}
			snap, err := local.Open(ctx, ms[i].SnapshotID)
			if err != nil {
				continue
			}
			if f, err := snapshot.ReadFooter(snap.Path(mt.File)); err == nil && schema.SameShape(f.Table, stored) {
				return f.CreateTable
			}
		}
	}
	u := strings.ToUpper(strings.Join(strings.Fields(v.DDL), " "))
	if strings.HasPrefix(u, "CREATE TABLE") && !strings.Contains(u, " LIKE ") && !strings.Contains(u, " SELECT ") && !strings.Contains(u, " AS ") {
		return v.DDL
	}
	return snapshot.CreateTableSQL(stored)
}

// globQuote escapes glob characters of a file name.
func globQuote(s string) string {
	return strings.NewReplacer("*", "[*]", "?", "[?]", "[", "[[]", "\\", "\\\\").Replace(s)
}
