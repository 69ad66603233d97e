// Package binlogpos is dbtrail's one type for a point of a source's binlog
// stream, and its ordering rule: binlog coordinates are ordered the way the
// server orders them, by the numeric sequence of the file name's extension,
// then by byte offset. File names are never compared as text, and times are
// never used. See docs/positions.md.
package binlogpos

import (
	"fmt"
	"strconv"
	"strings"
)

// Position is a point of a source's binlog stream: the file and the byte
// offset of the end of an event in it, and where dbtrail knows them, the
// GTID of the transaction that ends there (a GTID set for a dump's position)
// and the capture seq of the last event at or before it. A snapshot's
// position, a dump's, a refresh's cut and a capture checkpoint are all
// Positions. Compare orders positions by their coordinates alone; within
// one source, seq grows with them.
type Position struct {
	File string `json:"file"`
	Pos  uint64 `json:"pos"`
	GTID string `json:"gtid,omitempty"`
	Seq  uint64 `json:"seq,omitempty"`
}

// Coords returns p's binlog coordinates alone (no GTID, no seq).
func (p Position) Coords() Position { return Position{File: p.File, Pos: p.Pos} }

func (p Position) String() string { return fmt.Sprintf("%s:%d", p.File, p.Pos) }

// IsZero reports whether p names no position.
func (p Position) IsZero() bool { return p.File == "" }

// FileSeq returns the numeric extension of a binlog file name
// ("binlog.000042" → 42).
func FileSeq(file string) (uint64, error) {
	i := strings.LastIndexByte(file, '.')
	if i < 0 || i == len(file)-1 {
		return 0, fmt.Errorf("binlog file name %q has no numeric extension", file)
	}
	n, err := strconv.ParseUint(file[i+1:], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("binlog file name %q: extension is not a number", file)
	}
	return n, nil
}

// Compare returns -1, 0 or +1 as a is before, at or after b. Both files must
// carry a numeric extension.
func Compare(a, b Position) (int, error) {
	sa, err := FileSeq(a.File)
	if err != nil {
		return 0, err
	}
	sb, err := FileSeq(b.File)
	if err != nil {
		return 0, err
	}
	switch {
	case sa < sb:
		return -1, nil
	case sa > sb:
		return 1, nil
	case a.Pos < b.Pos:
		return -1, nil
	case a.Pos > b.Pos:
		return 1, nil
	}
	return 0, nil
}

// Parse reads "file:pos".
func Parse(s string) (Position, error) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return Position{}, fmt.Errorf("binlog position %q: want file:pos", s)
	}
	n, err := strconv.ParseUint(s[i+1:], 10, 64)
	if err != nil {
		return Position{}, fmt.Errorf("binlog position %q: offset: %w", s, err)
	}
	p := Position{File: s[:i], Pos: n}
	if _, err := FileSeq(p.File); err != nil {
		return Position{}, err
	}
	return p, nil
}
