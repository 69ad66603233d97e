package sqlport

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// The session's time_zone (SET time_zone = '+02:00' | 'Europe/Berlin' |
// 'SYSTEM'; the port's system zone is UTC) is MySQL's: NOW(), CURDATE(),
// CURTIME() and their kin are the moment's commit time in it, a
// TIMESTAMP column's values are shown in it, and a time given to
// SET @@dbtrail_at (or a database name's @T) without its own zone is a
// time in it. UTC_TIMESTAMP() and kin stay UTC.

// setTimeZone is a time_zone assignment of a SET statement.
var setTimeZone = regexp.MustCompile(`(?is)(?:@@(?:session\.|global\.)?|\bSESSION\s+|\bLOCAL\s+|\b)time_zone\s*(?:=|:=)\s*(?:'([^']*)'|"([^"]*)"|(\w+))`)

// set applies a SET statement's assignments the port keeps:
// character_set_results (SET NAMES, SET CHARACTER SET,
// character_set_results), time_zone and group_concat_max_len; the others
// are accepted with no effect. A time zone the port does not know is error
// 1298, a group_concat_max_len it cannot read 1235; both change nothing.
func (h *handler) set(stmt string) error {
	if stmt == "" {
		return nil
	}
	var loc *time.Location
	name := ""
	if m := setTimeZone.FindStringSubmatch(stmt); m != nil {
		name = m[1] + m[2] + m[3]
		var err error
		if loc, err = parseTimeZone(name); err != nil {
			return errRefused(mysql.ER_UNKNOWN_TIME_ZONE, "Unknown or incorrect time zone: '%s' (%v)", name, err)
		}
	}
	concatMax, setsConcat, err := concatMaxOfSet(stmt)
	if err != nil {
		return err
	}
	h.results, _ = resultsOfSet(stmt, h.results)
	if setsConcat {
		h.concatMax = concatMax
	}
	if loc != nil {
		if strings.EqualFold(name, "DEFAULT") {
			name = "SYSTEM" // the global time_zone's value
		}
		h.tz, h.tzName = loc, name
	}
	return nil
}

// tzOffset is a time zone written as an offset from UTC.
var tzOffset = regexp.MustCompile(`^([+-])(\d{1,2}):(\d{2})$`)

// utcNames are the IANA database's names of UTC itself (lower case).
var utcNames = map[string]bool{}

func init() {
	for _, n := range []string{"UTC", "UCT", "GMT", "GMT0", "GMT+0", "GMT-0", "Greenwich", "Universal", "Zulu"} {
		utcNames[strings.ToLower(n)] = true
		utcNames["etc/"+strings.ToLower(n)] = true
	}
}

// parseTimeZone reads a time_zone value: SYSTEM or DEFAULT (UTC here), an
// offset [+-]HH:MM from -13:59 to +14:00, or a zone name of the IANA
// database.
func parseTimeZone(v string) (*time.Location, error) {
	if strings.EqualFold(v, "SYSTEM") || strings.EqualFold(v, "UTC") || strings.EqualFold(v, "DEFAULT") {
		return time.UTC, nil
	}
	if m := tzOffset.FindStringSubmatch(v); m != nil {
		hh, _ := strconv.Atoi(m[2])
		mm, _ := strconv.Atoi(m[3])
		off := hh*3600 + mm*60
		if m[1] == "-" {
			off = -off
		}
		if mm > 59 || off > 14*3600 || off < -(13*3600+59*60) {
			return nil, fmt.Errorf("an offset is -13:59 to +14:00")
		}
		if off == 0 {
			return time.UTC, nil // UTC itself: nothing to convert
		}
		return time.FixedZone(fmt.Sprintf("%s%02d:%02d", m[1], hh, mm), off), nil
	}
	if v == "" || strings.EqualFold(v, "local") || strings.ContainsAny(v, " \\") || strings.Contains(v, "..") {
		return nil, fmt.Errorf("not an offset or a zone name")
	}
	loc, err := time.LoadLocation(v)
	if err != nil {
		return nil, fmt.Errorf("no such zone")
	}
	if utcNames[strings.ToLower(v)] {
		return time.UTC, nil
	}
	return loc, nil
}

// location is the session's time zone.
func (h *handler) location() *time.Location {
	if h.tz == nil {
		return time.UTC
	}
	return h.tz
}

// timeZoneName is @@time_zone: as set, else the port's (UTC).
func (h *handler) timeZoneName() string {
	if h.tzName == "" {
		return "UTC"
	}
	return h.tzName
}

// zonelessTime is a moment written as a time without its own zone.
var zonelessTime = regexp.MustCompile(`(?i)^\s*(?:time:\s*)?\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)?\s*$`)

// inSessionZone is moment text (when.Parse's forms) with the
// session's time zone added to a time that names none, so the time is
// read in the session's time_zone; any other text as it is.
func (h *handler) inSessionZone(text string) string {
	if h.tz == nil || h.tz == time.UTC || !zonelessTime.MatchString(text) {
		return text
	}
	return strings.TrimSpace(text) + " " + h.tz.String()
}

// convertTZ is MySQL's CONVERT_TZ(x, from, to): the time x read in zone
// from, as the same instant's time in zone to. A zone is a string literal:
// an offset ('+05:30'), a name of the IANA database ('Europe/Berlin',
// converted by DuckDB's ICU with that zone's rules at that instant) or
// SYSTEM (UTC, the port's); a literal that is neither is NULL, as MySQL
// answers an unknown zone. A zone that is not a literal is not translated.
func convertTZ(x, from, to string) (string, error) {
	var zones [2]string
	for i, z := range []string{from, to} {
		name, ok := stringLiteral(z)
		if !ok {
			return "", notTranslated("CONVERT_TZ with the zone "+z, "give each zone as a string literal: an offset such as '+02:00' or a zone name such as 'Europe/Berlin'")
		}
		loc, err := parseTimeZone(name)
		if err != nil {
			return "CAST(NULL AS TIMESTAMP)", nil
		}
		zones[i] = zoneOf(name, loc)
	}
	ts := "CAST(" + x + " AS TIMESTAMP)"
	if zones[0] == zones[1] {
		return ts, nil
	}
	return zoneExpr(zones[1], zoneExpr(zones[0], ts, true), false), nil
}

// zoneOf is a zone for zoneExpr: "UTC", an offset in seconds ("+7200"),
// or an IANA name.
func zoneOf(name string, loc *time.Location) string {
	switch {
	case loc == time.UTC:
		return "UTC"
	case tzOffset.MatchString(name):
		_, off := time.Date(2000, 1, 1, 0, 0, 0, 0, loc).Zone()
		return fmt.Sprintf("%+d", off)
	}
	return loc.String()
}

// zoneExpr converts between zone z (zoneOf's) and UTC: toUTC turns the
// TIMESTAMP e, a time in z, into the instant (TIMESTAMPTZ); otherwise it
// turns the instant e into its TIMESTAMP in z.
func zoneExpr(z, e string, toUTC bool) string {
	switch {
	case z == "UTC":
		return "timezone('UTC', " + e + ")"
	case z[0] == '+' || z[0] == '-':
		if toUTC {
			return "timezone('UTC', " + e + " - INTERVAL (" + z + ") SECOND)"
		}
		return "(timezone('UTC', " + e + ") + INTERVAL (" + z + ") SECOND)"
	}
	return "timezone(" + sqlString(z) + ", " + e + ")"
}

// stringLiteral is the text of the DuckDB string literal s (quoted with ',
// a quote in it doubled), false when s is not one.
func stringLiteral(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '\'' || s[len(s)-1] != '\'' || strings.Contains(strings.ReplaceAll(s[1:len(s)-1], "''", ""), "'") {
		return "", false
	}
	return strings.ReplaceAll(s[1:len(s)-1], "''", "'"), true
}
