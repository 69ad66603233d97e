// Package archivebench is the hourly archive's benchmark: synthetic hours
// of the capture benchmark's shape, written and read back with the archive
// package's writer and reader. It is benchmark code, kept out of the
// production package.
package archivebench

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/internal/archive"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// BenchResult holds the figures of Bench.
type BenchResult struct {
	// Events is the events of each benchmark hour.
	Events int
	// FileBytes and BytesPerEvent are the size of the one-table hour's file.
	FileBytes     int64
	BytesPerEvent float64
	// WriteRate is the best rate of the runs writing the one-table hour
	// (events/s; Writer from the first Append to Close, events in memory);
	// WriteRates are all of them.
	WriteRate  float64
	WriteRates []float64
	// Tables is the number of equally busy tables of the second hour's file;
	// ReadAll is the best time to open it and read all its events, ReadOne
	// to open it and read one table's; ReadRatio is ReadOne / ReadAll.
	Tables           int
	ReadAll, ReadOne time.Duration
	ReadRatio        float64
}

// Bench measures the codec on the workload shape of the capture benchmark
// (cmd/dbtrail-bench): an hour of events of the 7-column table bench.t, half
// inserts, a third updates, the rest deletes, in transactions of 5,000 rows,
// images made by internal/rowimage as capture makes them. It writes that hour
// (events in memory, file in memory) runs times, then an hour of the same
// shape spread over tables equally busy tables and reads it whole and one
// table of it, runs times each, keeping the best times.
func Bench(events, tables, runs int) (BenchResult, error) {
	res := BenchResult{Events: events, Tables: tables}
	if events <= 0 || tables <= 0 || runs <= 0 {
		return res, fmt.Errorf("archive bench: events %d, tables %d, runs %d must be positive", events, tables, runs)
	}
	hour := benchHour()
	evs, err := BenchEvents(events, 1)
	if err != nil {
		return res, err
	}
	var buf bytes.Buffer
	for range runs {
		buf.Reset()
		began := time.Now()
		if _, err := writeEvents(&buf, hour, evs); err != nil {
			return res, err
		}
		rate := float64(len(evs)) / time.Since(began).Seconds()
		res.WriteRates = append(res.WriteRates, rate)
		res.WriteRate = max(res.WriteRate, rate)
	}
	res.FileBytes = int64(buf.Len())
	res.BytesPerEvent = float64(buf.Len()) / float64(len(evs))
	evs = nil
	if evs, err = BenchEvents(events, tables); err != nil {
		return res, err
	}
	buf.Reset()
	if _, err := writeEvents(&buf, hour, evs); err != nil {
		return res, err
	}
	evs = nil
	one := benchTableName(tables/2 + 1)
	for range runs {
		all, err := timeRead(buf.Bytes(), "", "")
		if err != nil {
			return res, err
		}
		some, err := timeRead(buf.Bytes(), "bench", one)
		if err != nil {
			return res, err
		}
		if res.ReadAll == 0 || all < res.ReadAll {
			res.ReadAll = all
		}
		if res.ReadOne == 0 || some < res.ReadOne {
			res.ReadOne = some
		}
	}
	res.ReadRatio = res.ReadOne.Seconds() / res.ReadAll.Seconds()
	return res, nil
}

// benchHour is the hour of the benchmark's events.
func benchHour() time.Time { return time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC) }

// writeEvents writes evs as the archive of source "main" for hour.
func writeEvents(buf *bytes.Buffer, hour time.Time, evs []change.Event) (archive.WriteResult, error) {
	w, err := archive.NewWriter(buf, "main", hour, archive.WriterOptions{})
	if err != nil {
		return archive.WriteResult{}, err
	}
	for i := range evs {
		if err := w.Append(&evs[i]); err != nil {
			return archive.WriteResult{}, err
		}
	}
	return w.Close()
}

// timeRead opens the file b and reads every event, or only those of
// schemaName.table when table is not empty, and returns the time it took.
func timeRead(b []byte, schemaName, table string) (time.Duration, error) {
	began := time.Now()
	r, err := archive.NewReader(bytes.NewReader(b), int64(len(b)), "bench.parquet")
	if err != nil {
		return 0, err
	}
	var n int64
	count := func(change.Event) error { n++; return nil }
	if table == "" {
		err = r.Events(count)
	} else {
		err = r.TableEvents(schemaName, table, count)
	}
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, fmt.Errorf("archive bench: no events read of %q.%q", schemaName, table)
	}
	return time.Since(began), nil
}

func benchTableName(i int) string { return fmt.Sprintf("t%02d", i) }

// BenchEvents returns an hour of n events in (schema, table, seq) order, of
// the capture benchmark's shape (see Bench), spread over tables equally busy
// tables bench.t01, bench.t02, ... (bench.t when tables is 1) whose
// transactions take turns.
func BenchEvents(n, tables int) ([]change.Event, error) {
	t := benchTable()
	per := make([][]change.Event, tables)
	txs := make([][][]change.Event, tables) // each table's transactions
	for k := range tables {
		name := "t"
		if tables > 1 {
			name = benchTableName(k + 1)
		}
		evs, bounds, err := benchTableEvents(t, name, n/tables+boolInt(k < n%tables))
		if err != nil {
			return nil, err
		}
		per[k] = evs
		for i := range len(bounds) - 1 {
			txs[k] = append(txs[k], evs[bounds[i]:bounds[i+1]])
		}
	}
	// Transactions of the tables take turns; each gets its seqs, GTID, end
	// position and commit second.
	seq, pos, gtid := uint64(0), uint64(4), 0
	for round := 0; ; round++ {
		more := false
		for k := range tables {
			if round >= len(txs[k]) {
				continue
			}
			more = true
			gtid++
			pos += uint64(len(txs[k][round]) * 64)
			at := benchHour().Add(time.Duration(gtid%3600) * time.Second)
			for i := range txs[k][round] {
				seq++
				e := &txs[k][round][i]
				e.Seq, e.CommitTime, e.EndPos, e.GTID = seq, at, pos, "0-1-"+strconv.Itoa(gtid)
			}
		}
		if !more {
			break
		}
	}
	out := make([]change.Event, 0, n)
	for _, evs := range per {
		out = append(out, evs...)
	}
	return out, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// benchTable is the capture benchmark's table.
func benchTable() *schema.Table {
	return &schema.Table{Schema: "bench", Name: "t", Key: []string{"id"}, KeyKind: schema.KeyPrimary, Columns: []schema.Column{
		{Name: "id", Type: "int"},
		{Name: "a", Type: "int"},
		{Name: "b", Type: "varchar", Length: 100, Charset: "utf8mb4", Nullable: true},
		{Name: "c", Type: "datetime", FSP: 6, Nullable: true},
		{Name: "d", Type: "decimal", Precision: 12, Scale: 2, Nullable: true},
		{Name: "e", Type: "double", Nullable: true},
		{Name: "f", Type: "varchar", Length: 200, Charset: "utf8mb4", Nullable: true},
	}}
}

// benchTableEvents returns the n events of one table as the capture
// benchmark's statements make them (seqs, times, GTIDs and positions left
// for the caller), and the bounds of its transactions in them.
func benchTableEvents(t *schema.Table, name string, n int) ([]change.Event, []int, error) {
	const stmtRows = 5000
	inserts, updates := n/2, n/3
	deletes := n - inserts - updates
	evs := make([]change.Event, 0, n)
	bounds := []int{0}
	add := func(op change.Op, id int, before, after []byte) {
		evs = append(evs, change.Event{BinlogFile: "mariadb-bin.000001", Schema: "bench", Table: name, Op: op,
			PK: "[" + strconv.Itoa(id) + "]", SchemaVersion: 1, Before: before, After: after})
		if len(evs)-bounds[len(bounds)-1] == stmtRows {
			bounds = append(bounds, len(evs))
		}
	}
	for id := 1; id <= inserts; id++ {
		img, err := benchImage(t, id, false)
		if err != nil {
			return nil, nil, err
		}
		add(change.OpInsert, id, nil, img)
	}
	for id := 1; id <= updates; id++ {
		before, err := benchImage(t, id, false)
		if err != nil {
			return nil, nil, err
		}
		after, err := benchImage(t, id, true)
		if err != nil {
			return nil, nil, err
		}
		add(change.OpUpdate, id, before, after)
	}
	if bounds[len(bounds)-1] != len(evs) {
		bounds = append(bounds, len(evs))
	}
	for id := inserts - deletes + 1; id <= inserts; id++ { // one DELETE statement
		img, err := benchImage(t, id, false)
		if err != nil {
			return nil, nil, err
		}
		evs = append(evs, change.Event{BinlogFile: "mariadb-bin.000001", Schema: "bench", Table: name, Op: change.OpDelete,
			PK: "[" + strconv.Itoa(id) + "]", SchemaVersion: 1, Before: img})
	}
	if bounds[len(bounds)-1] != len(evs) {
		bounds = append(bounds, len(evs))
	}
	return evs, bounds, nil
}

// benchImage is the image of row id of the capture benchmark's table:
// as inserted, or after its update (a + 1, b || 'u').
func benchImage(t *schema.Table, id int, updated bool) ([]byte, error) {
	a, b := id%1000, "name-"+strconv.Itoa(id)
	if updated {
		a, b = a+1, b+"u"
	}
	c := time.Date(2026, 11, 29, 8, 0, 0, 123456000, time.UTC).Add(time.Duration(id) * time.Second)
	// d = id / 7: the division keeps 4 digits, the column 2, each rounded
	// half up.
	q4 := (id*10000*2/7 + 1) / 2
	d2 := (q4 + 50) / 100
	row := []rowimage.Cell{
		rowimage.TextCell([]byte(strconv.Itoa(id))),
		rowimage.TextCell([]byte(strconv.Itoa(a))),
		rowimage.TextCell([]byte(b)),
		rowimage.TextCell([]byte(c.Format("2006-01-02 15:04:05.000000"))),
		rowimage.TextCell([]byte(fmt.Sprintf("%d.%02d", d2/100, d2%100))),
		rowimage.TextCell([]byte(strconv.FormatFloat(float64(id)*1.5, 'f', -1, 64))),
		rowimage.TextCell([]byte(strings.Repeat("f", 20+id%80))),
	}
	return rowimage.SQLImage(t, row)
}
