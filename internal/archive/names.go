package archive

import (
	"strings"
	"time"
)

// Names in a store (storage.Store, under its prefix) of a source's archive:
//
//	<source>/archives/<YYYY-MM-DD>/<HH>.parquet   the archive file of one UTC hour
//	<source>/history.json                         schema history, capture gaps and starts (History)

// ObjectName returns the name of source's archive file of the hour starting
// at hour (UTC).
func ObjectName(source string, hour time.Time) string {
	return ArchivesPrefix(source) + hour.UTC().Format("2006-01-02/15") + ".parquet"
}

// ArchivesPrefix is the prefix of every archive file name of source.
func ArchivesPrefix(source string) string { return source + "/archives/" }

// HistoryName returns the name of source's history file.
func HistoryName(source string) string { return source + "/history.json" }

// ParseObjectName returns the hour of an archive file name of source; ok is
// false for any other name.
func ParseObjectName(source, name string) (hour time.Time, ok bool) {
	rest, found := strings.CutPrefix(name, ArchivesPrefix(source))
	if !found {
		return time.Time{}, false
	}
	rest, found = strings.CutSuffix(rest, ".parquet")
	if !found {
		return time.Time{}, false
	}
	h, err := time.Parse("2006-01-02/15", rest)
	if err != nil || ObjectName(source, h) != name {
		return time.Time{}, false
	}
	return h.UTC(), true
}
