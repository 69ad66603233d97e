// Package when parses a moment as the user names it (--at, ?at=): a time
// with its zone, a binlog position, a capture seq, a GTID or "latest".
// Pure and light, so a boundary (the API, the CLI) refuses a malformed
// moment before anything runs; package moment finds its cut.
package when

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // zone names in moments work without the host's zone database

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
)

// Kind is the form in which a moment T was given.
type Kind string

// The forms of T.
const (
	// KindTime: a time; the cut is the last transaction committed at or
	// before it.
	KindTime Kind = "time"
	// KindSeq: a capture seq; the cut is the end of the transaction holding
	// that event.
	KindSeq Kind = "seq"
	// KindPos: a binlog file:pos; the cut is the last transaction ending at
	// or before it (index.Store.SeqAt's rule).
	KindPos Kind = "position"
	// KindGTID: a GTID; the cut is the end of that transaction.
	KindGTID Kind = "gtid"
	// KindLatest: capture's checkpoint, the newest captured transaction.
	KindLatest Kind = "latest"
)

// At is a moment T as the user gave it, parsed. Exactly the field of its
// Kind is set; times are UTC.
type At struct {
	Kind Kind               `json:"kind"`
	Time time.Time          `json:"time,omitzero"`
	Seq  uint64             `json:"seq,omitempty"`
	Pos  binlogpos.Position `json:"pos,omitzero"`
	GTID string             `json:"gtid,omitempty"`
}

// String is T in a form Parse reads back to the same At: a time in
// RFC 3339 UTC with its fraction, seq:N, file:pos, gtid:G or latest.
func (a At) String() string {
	switch a.Kind {
	case KindTime:
		return a.Time.UTC().Format(time.RFC3339Nano)
	case KindSeq:
		return "seq:" + strconv.FormatUint(a.Seq, 10)
	case KindPos:
		return a.Pos.String()
	case KindGTID:
		return "gtid:" + a.GTID
	case KindLatest:
		return "latest"
	}
	return "(no moment)"
}

// ParseError is a T that does not parse.
type ParseError struct {
	Text string
	Why  string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("moment %q: %s (want a time such as 2026-11-29 08:00:00, 2026-11-29T08:00:00+01:00 or "+
		"'2026-11-29 09:00 Europe/Paris' (UTC when no zone is given), a seq such as seq:81234, a binlog position such as "+
		"binlog.000042:91234, a GTID such as 0-1-5123 or 3e11fa47-71ca-11e1-9e33-c80aa9429562:23, or latest)", e.Text, e.Why)
}

// dateTimeRE splits a time into date, clock and zone: the zone is Z, an
// offset (+01:00, -0530, +02), or after a space a zone name (UTC,
// Europe/Paris) or an offset.
var dateTimeRE = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?))?(.*)$`)

var offsetRE = regexp.MustCompile(`^([+-])(\d{2})(?::?(\d{2}))?$`)

// Parse reads a moment T. Its forms, tried in this order:
//
//   - latest: capture's checkpoint;
//   - seq:N, or N alone (digits only): a seq;
//   - time:…, gtid:…, pos:… force the form that follows;
//   - a time, YYYY-MM-DD[( |T)HH:MM[:SS[.fraction]]] and an optional zone:
//     Z, an offset (+01:00, -0530), or after a space UTC, an offset or an
//     IANA zone name (Europe/Paris). Without a zone the time is UTC. A
//     date alone is midnight;
//   - a binlog position file:pos (the file with a numeric extension);
//   - a GTID: MariaDB domain-server-seq or MySQL uuid:n.
//
// A MariaDB GTID whose three numbers read as a date (2026-11-29) is taken
// as the date: write gtid:2026-11-29 for the GTID.
func Parse(s string) (At, error) {
	text := strings.TrimSpace(s)
	fail := func(why string) (At, error) { return At{}, &ParseError{Text: s, Why: why} }
	if text == "" {
		return fail("empty")
	}
	if strings.EqualFold(text, "latest") {
		return At{Kind: KindLatest}, nil
	}
	if prefix, rest, ok := strings.Cut(text, ":"); ok {
		switch strings.ToLower(prefix) {
		case "seq":
			return parseSeq(s, rest)
		case "time":
			t, err := parseTime(strings.TrimSpace(rest))
			if err != nil {
				return fail(err.Error())
			}
			return At{Kind: KindTime, Time: t}, nil
		case "gtid":
			g := strings.TrimSpace(rest)
			if err := checkGTID(g); err != nil {
				return fail(err.Error())
			}
			return At{Kind: KindGTID, GTID: g}, nil
		case "pos":
			p, err := binlogpos.Parse(strings.TrimSpace(rest))
			if err != nil {
				return fail(err.Error())
			}
			return At{Kind: KindPos, Pos: p}, nil
		}
	}
	if isDigits(text) {
		return parseSeq(s, text)
	}
	if dateTimeRE.MatchString(text) {
		t, err := parseTime(text)
		if err != nil {
			return fail(err.Error())
		}
		return At{Kind: KindTime, Time: t}, nil
	}
	if p, err := binlogpos.Parse(text); err == nil {
		return At{Kind: KindPos, Pos: p}, nil
	}
	if err := checkGTID(text); err == nil {
		return At{Kind: KindGTID, GTID: text}, nil
	}
	return fail("not a time, seq, binlog position or GTID")
}

func parseSeq(orig, digits string) (At, error) {
	digits = strings.TrimSpace(digits)
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || !isDigits(digits) {
		return At{}, &ParseError{Text: orig, Why: "seq " + strconv.Quote(digits) + " is not a number"}
	}
	if n == 0 {
		return At{}, &ParseError{Text: orig, Why: "seq 0 names no event (seqs start at 1)"}
	}
	return At{Kind: KindSeq, Seq: n}, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseTime reads the time form of Parse.
func parseTime(text string) (time.Time, error) {
	m := dateTimeRE.FindStringSubmatch(text)
	if m == nil {
		return time.Time{}, fmt.Errorf("not a time")
	}
	clock := m[2]
	switch strings.Count(clock, ":") {
	case 0:
		clock = "00:00:00"
	case 1:
		clock += ":00"
	}
	loc, err := zone(strings.TrimSpace(m[3]), m[3])
	if err != nil {
		return time.Time{}, err
	}
	t, err := time.ParseInLocation("2006-01-02 15:04:05.999999999", m[1]+" "+clock, loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("not a valid time: %v", err)
	}
	return t.UTC(), nil
}

// zone reads the zone of a time: z trimmed, raw as written (a zone name
// must follow a space).
func zone(z, raw string) (*time.Location, error) {
	switch {
	case z == "" || z == "Z" || strings.EqualFold(z, "UTC"):
		return time.UTC, nil
	case offsetRE.MatchString(z):
		m := offsetRE.FindStringSubmatch(z)
		h, _ := strconv.Atoi(m[2])
		mi := 0
		if m[3] != "" {
			mi, _ = strconv.Atoi(m[3])
		}
		if h > 23 || mi > 59 {
			return nil, fmt.Errorf("offset %s out of range", z)
		}
		off := h*3600 + mi*60
		if m[1] == "-" {
			off = -off
		}
		return time.FixedZone(z, off), nil
	case strings.HasPrefix(raw, " "):
		loc, err := time.LoadLocation(z)
		if err != nil {
			return nil, fmt.Errorf("unknown time zone %q", z)
		}
		return loc, nil
	}
	return nil, fmt.Errorf("trailing %q is not a zone", z)
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// checkGTID accepts a MariaDB GTID (domain-server-seq) or a MySQL one
// (uuid:n, uuid:tag:n).
func checkGTID(g string) error {
	if _, _, err := change.GTIDKey(g); err != nil {
		return err
	}
	if uuid, _, ok := strings.Cut(g, ":"); ok && !uuidRE.MatchString(uuid) {
		return fmt.Errorf("GTID %q: %q is not a server uuid", g, uuid)
	}
	return nil
}
