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
// character_set_results) and time_zone; the others are accepted with no
// effect. A time zone the port does not know is error 1298 and changes
// nothing.
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
	h.results, _ = resultsOfSet(stmt, h.results)
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
		return time.FixedZone(fmt.Sprintf("%s%02d:%02d", m[1], hh, mm), off), nil
	}
	if v == "" || strings.EqualFold(v, "local") || strings.ContainsAny(v, " \\") || strings.Contains(v, "..") {
		return nil, fmt.Errorf("not an offset or a zone name")
	}
	loc, err := time.LoadLocation(v)
	if err != nil {
		return nil, fmt.Errorf("no such zone")
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

// inSessionZone is moment text (moment.ParseAt's forms) with the
// session's time zone added to a time that names none, so the time is
// read in the session's time_zone; any other text as it is.
func (h *handler) inSessionZone(text string) string {
	if h.tz == nil || h.tz == time.UTC || !zonelessTime.MatchString(text) {
		return text
	}
	return strings.TrimSpace(text) + " " + h.tz.String()
}
