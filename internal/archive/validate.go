package archive

import (
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// validate checks the footer keys against each other and against the
// Parquet metadata of the row groups: the tables are in order with
// consistent counts and seq ranges; the row groups hold one table each, in
// table order, with the rows, seq ranges and schema_name/table_name/seq
// statistics the footer lists; and their column chunks lie end to end from
// the Parquet magic to the footer (which starts at footerStart), each row
// group exactly the byte range its digest covers.
func validate(md *metadata.FileMetaData, f *Footer, groups []rowGroupEntry, footerStart int64) error {
	if f.Source == "" {
		return fmt.Errorf("footer %s is empty", KeySource)
	}
	if err := validateTables(f); err != nil {
		return err
	}
	if len(groups) != md.NumRowGroups() {
		return fmt.Errorf("footer lists %d row groups, the file has %d", len(groups), md.NumRowGroups())
	}
	perTable := make([]int64, len(f.Tables))
	next := int64(len("PAR1"))
	for i := range groups {
		g := &groups[i]
		if err := validateGroup(md.RowGroup(i), f, groups, i, next); err != nil {
			return fmt.Errorf("row group %d: %w", i, err)
		}
		perTable[g.Table] += g.Rows
		next = g.Offset + g.Bytes
	}
	if next != footerStart {
		return fmt.Errorf("row groups end at offset %d, the footer starts at %d", next, footerStart)
	}
	for i, t := range f.Tables {
		if perTable[i] != t.Events {
			return fmt.Errorf("table %s.%s: footer counts %d events, its row groups hold %d", t.Schema, t.Table, t.Events, perTable[i])
		}
	}
	return nil
}

// validateTables checks the footer's tables against its counts and seqs.
func validateTables(f *Footer) error {
	var total int64
	var first, last uint64
	for i, t := range f.Tables {
		if i > 0 {
			p := f.Tables[i-1]
			if !(p.Schema < t.Schema || (p.Schema == t.Schema && p.Table < t.Table)) {
				return fmt.Errorf("footer %s: %s.%s comes after %s.%s", KeyTables, t.Schema, t.Table, p.Schema, p.Table)
			}
		}
		if t.Events <= 0 || t.FirstSeq == 0 || t.FirstSeq > t.LastSeq || uint64(t.Events-1) > t.LastSeq-t.FirstSeq {
			return fmt.Errorf("footer %s: %s.%s has %d events in seqs %d..%d", KeyTables, t.Schema, t.Table, t.Events, t.FirstSeq, t.LastSeq)
		}
		if i == 0 || t.FirstSeq < first {
			first = t.FirstSeq
		}
		last = max(last, t.LastSeq)
		total += t.Events
	}
	if total != f.Events {
		return fmt.Errorf("footer %s is %d, its tables count %d", KeyEventCount, f.Events, total)
	}
	if f.FirstSeq != first || f.LastSeq != last {
		return fmt.Errorf("footer seqs %d..%d, its tables span %d..%d", f.FirstSeq, f.LastSeq, first, last)
	}
	return nil
}

// validateGroup checks row group i (Parquet metadata rg) against its footer
// entry and the entries before it; it must start at offset next.
func validateGroup(rg *metadata.RowGroupMetaData, f *Footer, groups []rowGroupEntry, i int, next int64) error {
	g := &groups[i]
	if g.Table < 0 || g.Table >= len(f.Tables) {
		return fmt.Errorf("footer names table %d of %d", g.Table, len(f.Tables))
	}
	t := &f.Tables[g.Table]
	first := i == 0 || groups[i-1].Table != g.Table // the table's first row group
	switch {
	case i == 0 && g.Table != 0, i > 0 && first && g.Table != groups[i-1].Table+1:
		return fmt.Errorf("holds table %s.%s out of order", t.Schema, t.Table)
	case !first && g.FirstSeq <= groups[i-1].LastSeq:
		return fmt.Errorf("seqs %d..%d overlap the row group before", g.FirstSeq, g.LastSeq)
	case first && g.FirstSeq != t.FirstSeq:
		return fmt.Errorf("first seq %d, table %s.%s starts at %d", g.FirstSeq, t.Schema, t.Table, t.FirstSeq)
	case (i == len(groups)-1 || groups[i+1].Table != g.Table) && g.LastSeq != t.LastSeq:
		return fmt.Errorf("last seq %d, table %s.%s ends at %d", g.LastSeq, t.Schema, t.Table, t.LastSeq)
	case g.Rows <= 0 || g.Rows != rg.NumRows() || g.FirstSeq > g.LastSeq || uint64(g.Rows-1) > g.LastSeq-g.FirstSeq:
		return fmt.Errorf("footer says %d rows in seqs %d..%d, Parquet says %d rows", g.Rows, g.FirstSeq, g.LastSeq, rg.NumRows())
	case g.Offset != next || g.Bytes <= 0:
		return fmt.Errorf("footer places it at bytes %d..%d, it should start at %d", g.Offset, g.Offset+g.Bytes, next)
	}
	if d, err := hex.DecodeString(g.XXH64); err != nil || len(d) != 8 {
		return fmt.Errorf("digest %q is not 16 hex digits", g.XXH64)
	}
	if err := validateChunks(rg, g); err != nil {
		return err
	}
	return validateStats(rg, g, t)
}

// validateChunks checks that the column chunks of rg lie end to end over
// exactly the byte range of its footer entry, each with one value per row.
func validateChunks(rg *metadata.RowGroupMetaData, g *rowGroupEntry) error {
	if rg.NumColumns() != numColumns {
		return fmt.Errorf("%d columns, want %d", rg.NumColumns(), numColumns)
	}
	pos := g.Offset
	for c := 0; c < numColumns; c++ {
		cc, err := rg.ColumnChunk(c)
		if err != nil {
			return fmt.Errorf("column %d: %w", c, err)
		}
		if start := chunkStart(cc); start != pos {
			return fmt.Errorf("column %s starts at offset %d, want %d", columnDefs()[c].name, start, pos)
		}
		if cc.TotalCompressedSize() <= 0 || cc.NumValues() != g.Rows {
			return fmt.Errorf("column %s: %d bytes, %d values for %d rows", columnDefs()[c].name, cc.TotalCompressedSize(), cc.NumValues(), g.Rows)
		}
		pos += cc.TotalCompressedSize()
	}
	if pos != g.Offset+g.Bytes {
		return fmt.Errorf("column chunks end at offset %d, the footer says %d", pos, g.Offset+g.Bytes)
	}
	return nil
}

// chunkStart is where the Parquet reader starts reading a column chunk:
// its dictionary page if it has one, else its first data page.
func chunkStart(cc *metadata.ColumnChunkMetaData) int64 {
	start := cc.DataPageOffset()
	if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && cc.DictionaryPageOffset() < start {
		start = cc.DictionaryPageOffset()
	}
	return start
}

// validateStats checks the schema_name, table_name and seq statistics of rg
// against its table and footer entry: they are what a reader selects row
// groups by.
func validateStats(rg *metadata.RowGroupMetaData, g *rowGroupEntry, t *TableCount) error {
	for _, c := range []struct {
		col  int
		want string
	}{{colSchema, t.Schema}, {colTable, t.Table}} {
		lo, hi, err := byteStats(rg, c.col)
		if err != nil {
			return err
		}
		if string(lo) != c.want || string(hi) != c.want {
			return fmt.Errorf("%s statistics %q..%q, the footer says %q", columnDefs()[c.col].name, lo, hi, c.want)
		}
	}
	lo, hi, err := seqStats(rg)
	if err != nil {
		return err
	}
	if lo != g.FirstSeq || hi != g.LastSeq {
		return fmt.Errorf("seq statistics %d..%d, the footer says %d..%d", lo, hi, g.FirstSeq, g.LastSeq)
	}
	return nil
}

// byteStats returns the min and max statistics of byte column col of rg.
func byteStats(rg *metadata.RowGroupMetaData, col int) (lo, hi []byte, err error) {
	st, err := chunkStats(rg, col)
	if err != nil {
		return nil, nil, err
	}
	bs, ok := st.(*metadata.ByteArrayStatistics)
	if !ok {
		return nil, nil, fmt.Errorf("%s statistics are %T", columnDefs()[col].name, st)
	}
	return bs.Min(), bs.Max(), nil
}

// seqStats returns the min and max statistics of the seq column of rg.
func seqStats(rg *metadata.RowGroupMetaData) (lo, hi uint64, err error) {
	st, err := chunkStats(rg, colSeq)
	if err != nil {
		return 0, 0, err
	}
	is, ok := st.(*metadata.Int64Statistics)
	if !ok {
		return 0, 0, fmt.Errorf("seq statistics are %T", st)
	}
	return uint64(is.Min()), uint64(is.Max()), nil
}

func chunkStats(rg *metadata.RowGroupMetaData, col int) (metadata.TypedStatistics, error) {
	cc, err := rg.ColumnChunk(col)
	if err != nil {
		return nil, err
	}
	st, err := cc.Statistics()
	if err != nil {
		return nil, fmt.Errorf("%s statistics: %w", columnDefs()[col].name, err)
	}
	if st == nil || !st.HasMinMax() {
		return nil, errors.New(columnDefs()[col].name + " has no min/max statistics")
	}
	return st, nil
}
