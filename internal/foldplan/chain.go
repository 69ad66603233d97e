package foldplan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// Entry returns a chain entry's name: "000003" for one pair, or
// "000000-000014" for a range pair (from < to).
func Entry(from, to int) string {
	if from == to {
		return fmt.Sprintf("%06d", from)
	}
	return fmt.Sprintf("%06d-%06d", from, to)
}

// ParseChainEntry reads a chain file name (or path) such as
// "t.000003.posdel" or "db/t.000000-000014.upserts": the chain numbers it
// covers (from == to for one pair) and its suffix ("posdel" or "upserts").
// Numbers must be spelled as Entry spells them.
func ParseChainEntry(name string) (from, to int, suffix string, ok bool) {
	rest, suffix, found := cutLast(name, '.')
	if !found || (suffix != "posdel" && suffix != "upserts") {
		return 0, 0, "", false
	}
	stem, entry, found := cutLast(rest, '.')
	if !found || stem == "" || strings.HasSuffix(stem, "/") {
		return 0, 0, "", false
	}
	if from, to, ok = parseEntry(entry); !ok {
		return 0, 0, "", false
	}
	return from, to, suffix, true
}

func cutLast(s string, sep byte) (before, after string, found bool) {
	i := strings.LastIndexByte(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

func parseEntry(e string) (from, to int, ok bool) {
	a, b, isRange := strings.Cut(e, "-")
	num := func(s string) (int, bool) {
		if len(s) < 6 || strings.Trim(s, "0123456789") != "" {
			return 0, false
		}
		n, err := strconv.Atoi(s)
		return n, err == nil
	}
	var okA, okB bool
	if from, okA = num(a); !okA {
		return 0, 0, false
	}
	to, okB = from, true
	if isRange {
		to, okB = num(b)
	}
	if !okB || from > to || (isRange && from == to) || Entry(from, to) != e {
		return 0, 0, false
	}
	return from, to, true
}

// NextChainNumber returns the number of the pair that follows a chain: one
// past the highest number any entry covers, 0 for a chain with none.
func NextChainNumber(chain []string) int {
	next := 0
	for _, name := range chain {
		if _, to, _, ok := ParseChainEntry(name); ok && to+1 > next {
			next = to + 1
		}
	}
	return next
}

// entry is one chain entry: a pair or a range pair.
type entry struct {
	from, to        int
	posdel, upserts string
}

// parseChain checks a previous table's chain: for KindDelta, pairs of
// <prefix>.<entry>.posdel and .upserts of the table, contiguous from 000000;
// for KindFull, none.
func parseChain(mt snapshot.ManifestTable) ([]entry, error) {
	prefix, ok := strings.CutSuffix(mt.File, ".parquet")
	if !ok {
		return nil, fmt.Errorf("table file %q is not a .parquet file", mt.File)
	}
	switch mt.Kind {
	case snapshot.KindFull:
		if len(mt.Chain) > 0 {
			return nil, fmt.Errorf("kind %q but the manifest lists %d chain files", mt.Kind, len(mt.Chain))
		}
		return nil, nil
	case snapshot.KindDelta:
	default:
		return nil, fmt.Errorf("unknown kind %q", mt.Kind)
	}
	if len(mt.Chain) == 0 || len(mt.Chain)%2 != 0 {
		return nil, fmt.Errorf("%d chain files, want pairs starting with 000000", len(mt.Chain))
	}
	var es []entry
	next := 0
	for i := 0; i < len(mt.Chain); i += 2 {
		p, u := mt.Chain[i], mt.Chain[i+1]
		f1, t1, s1, ok1 := ParseChainEntry(p)
		f2, t2, s2, ok2 := ParseChainEntry(u)
		if !ok1 || !ok2 || s1 != "posdel" || s2 != "upserts" || f1 != f2 || t1 != t2 ||
			p != prefix+"."+Entry(f1, t1)+".posdel" || u != prefix+"."+Entry(f1, t1)+".upserts" {
			return nil, fmt.Errorf("chain files %q, %q are not a pair of %s", p, u, mt.File)
		}
		if f1 != next {
			return nil, fmt.Errorf("chain entry %s where %s was expected", Entry(f1, t1), Entry(next, next))
		}
		next = t1 + 1
		es = append(es, entry{from: f1, to: t1, posdel: p, upserts: u})
	}
	return es, nil
}

// matchCompacted checks a waiting range against the previous chain: it must
// have been merged from this very table file and exactly the first entries
// of this chain (same paths, same sha256). It returns the entries after
// substituting the range, or why the range does not apply.
func matchCompacted(cr CompactedRange, mt snapshot.ManifestTable, es []entry, files map[string]digest.Digest) ([]entry, error) {
	name := Entry(cr.From, cr.To)
	if cr.From != 0 || cr.From >= cr.To || cr.Posdel == "" || cr.Upserts == "" {
		return nil, fmt.Errorf("range %d-%d (%s, %s) is malformed", cr.From, cr.To, cr.Posdel, cr.Upserts)
	}
	if cr.TableFile.Path != mt.File || cr.TableFile.SHA256 != files[mt.File].SHA256 {
		return nil, fmt.Errorf("range %s was merged for another table file than %s (the table was rewritten since)", name, mt.File)
	}
	n := len(cr.Merged)
	if n == 0 || n%2 != 0 || n > len(mt.Chain) {
		return nil, fmt.Errorf("range %s merged %d chain files; the chain lists %d", name, n, len(mt.Chain))
	}
	for i, m := range cr.Merged {
		switch {
		case m.Path != mt.Chain[i]:
			return nil, fmt.Errorf("range %s was merged from %s, but the chain lists %s there (the chain moved on)", name, m.Path, mt.Chain[i])
		case m.SHA256 != files[m.Path].SHA256:
			return nil, fmt.Errorf("range %s was merged from another %s than the chain lists (the chain was rewritten since)", name, m.Path)
		}
	}
	if last := es[n/2-1]; es[0].from != cr.From || last.to != cr.To {
		return nil, fmt.Errorf("range %s does not cover the entries %s to %s it merged", name, Entry(es[0].from, es[0].to), Entry(last.from, last.to))
	}
	prefix := strings.TrimSuffix(mt.File, ".parquet") + "." + name
	out := []entry{{from: cr.From, to: cr.To, posdel: prefix + ".posdel", upserts: prefix + ".upserts"}}
	return append(out, es[n/2:]...), nil
}

// HumanBytes spells a size in binary units with one decimal: "512 B",
// "1.5 MiB".
func HumanBytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v, units := float64(n)/1024, []string{"KiB", "MiB", "GiB", "TiB", "PiB"}
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}
