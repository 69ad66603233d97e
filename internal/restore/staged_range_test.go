package restore

import (
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// stageIDs stages rows of ids (in that order) as a restore would, with
// main-run row groups of group rows; key says whether the table has one.
// Its footer holds the rows and fingerprint as ReadStaged's does.
func stageIDs(t *testing.T, ids []int, group int, key bool) Staged {
	t.Helper()
	def := &schema.Table{Schema: "app", Name: "t", Columns: []schema.Column{{Name: "id", Type: "bigint"}, {Name: "v", Type: "varchar", Length: 20}}}
	if key {
		def.Key, def.KeyKind = []string{"id"}, schema.KeyPrimary
	}
	order, err := NewKeyOrder(def)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s := &runSorter{dir: dir, def: def, meta: snapshot.FooterMeta{CreateTable: "CREATE TABLE `t` (`id` bigint NOT NULL, `v` varchar(20) DEFAULT NULL, PRIMARY KEY (`id`)) ENGINE=InnoDB"}, order: order}
	if s.main, err = s.create("run-main.parquet", snapshot.WriterOptions{RowGroupRows: group, Scratch: true, Overlap: true}); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if err := s.add([]rowimage.Cell{rowimage.TextCell([]byte(strconv.Itoa(id))), rowimage.TextCell([]byte("v" + strconv.Itoa(id)))}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := s.finish(moment.Cut{Seq: 7})
	if err != nil {
		t.Fatal(err)
	}
	foot, err := snapshot.ReadFooter(dir + "/" + m.Runs[0])
	if err != nil {
		t.Fatal(err)
	}
	foot.Rows, foot.Fingerprint = m.Fingerprint.Rows, m.Fingerprint
	return Staged{Dir: dir, Runs: m.Runs, Groups: m.Groups, Foot: foot}
}

// readIDs reads r to its end.
func readIDs(t *testing.T, r RowReader) []int {
	t.Helper()
	defer r.Close()
	var out []int
	for {
		row, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		id, _ := strconv.Atoi(string(row[0].Text))
		out = append(out, id)
	}
}

// TestPartsAndSeek: a staged table (a main run of small row groups and a
// side run of the rows that came late) splits into key ranges that
// together read every row once in key order, and a range entered past a
// checkpoint's last key reads exactly the rows after it; a last key no
// run holds is reported.
func TestPartsAndSeek(t *testing.T) {
	var ids, late []int
	for id := -500; id < 3000; id++ {
		if id%7 != 0 {
			ids = append(ids, id)
		} else {
			late = append(late, id)
		}
	}
	rand.Shuffle(len(late), func(i, j int) { late[i], late[j] = late[j], late[i] })
	st := stageIDs(t, append(ids, late...), 256, true)
	all := append(slices.Clone(ids), late...)
	slices.Sort(all)
	if len(st.Runs) != 2 || len(st.Groups[st.Runs[0]]) < 10 {
		t.Fatalf("runs %v with %d main row groups; want a main run of small row groups and a side run", st.Runs, len(st.Groups[st.Runs[0]]))
	}
	ranges := st.Split(3)
	if len(ranges) != 3 || ranges[0].From != "" || ranges[2].To != "" {
		t.Fatalf("split(3) = %v", ranges)
	}
	var got []int
	for _, kr := range ranges {
		r, saw, err := st.OpenRange(kr, "", 0)
		if err != nil || !saw {
			t.Fatalf("range %v: %v (saw %v)", kr, err, saw)
		}
		part := readIDs(t, r)
		if len(part) < len(all)/6 {
			t.Errorf("range %v holds %d rows of %d", kr, len(part), len(all))
		}
		got = append(got, part...)
	}
	if !slices.Equal(got, all) {
		t.Fatalf("the ranges read %d rows, want the %d rows once each in key order", len(got), len(all))
	}
	order, _ := NewKeyOrder(st.Foot.Table)
	key := func(id int) string {
		return order.Text([]rowimage.Cell{rowimage.TextCell([]byte(strconv.Itoa(id))), {}})
	}
	for range 50 {
		k := rand.IntN(len(ranges))
		lo, hi := 0, len(all)
		if ranges[k].From != "" {
			lo = slices.Index(got, idOf(t, order, ranges[k].From))
		}
		if ranges[k].To != "" {
			hi = slices.Index(got, idOf(t, order, ranges[k].To))
		}
		i := lo + rand.IntN(hi-lo)
		r, saw, err := st.OpenRange(ranges[k], key(all[i]), 0)
		if err != nil || !saw {
			t.Fatalf("range %d past %d: %v (saw %v)", k, all[i], err, saw)
		}
		if rest := readIDs(t, r); !slices.Equal(rest, all[i+1:hi]) {
			t.Fatalf("range %d past %d: read %d rows from %v, want %d", k, all[i], len(rest), rest[:min(len(rest), 3)], hi-i-1)
		}
	}
	if _, saw, err := st.OpenRange(ranges[2], key(99999), 0); err != nil || saw {
		t.Errorf("past a key no run holds: saw %v, %v", saw, err)
	}
}

func idOf(t *testing.T, o *KeyOrder, text string) int {
	t.Helper()
	row, err := o.Parse(text, 2)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := strconv.Atoi(string(row[0].Text))
	return id
}

// TestKeylessSeek: a table without a key is one range, read from any row
// number on.
func TestKeylessSeek(t *testing.T) {
	var ids []int
	for i := range 2000 {
		ids = append(ids, (i*7919)%2000) // no order at all
	}
	st := stageIDs(t, ids, 128, false)
	if r := st.Split(4); len(r) != 1 {
		t.Fatalf("a keyless table split into %v", r)
	}
	for _, skip := range []int64{0, 1, 127, 128, 129, 1000, 1999, 2000} {
		r, saw, err := st.OpenRange(KeyRange{}, "", skip)
		if err != nil || !saw {
			t.Fatalf("skip %d: %v", skip, err)
		}
		if got := readIDs(t, r); !slices.Equal(got, ids[skip:]) {
			t.Fatalf("skip %d: read %d rows, want %d", skip, len(got), len(ids)-int(skip))
		}
	}
}
