package dumpfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Metadata is what a dump's metadata file says about the source.
type Metadata struct {
	// BinlogFile and BinlogPos are the source's binlog coordinates at the
	// dump's consistent point (SHOW MASTER STATUS), never a replica's.
	BinlogFile string
	BinlogPos  uint64
	// GTID is the source's GTID position at that point (MariaDB
	// gtid_binlog_pos or MySQL Executed_Gtid_Set), "" when none.
	GTID string
	// Started and Finished are the dump's start and end as written, the
	// wall clock of the host that ran mydumper. The file carries no time
	// zone, so they are returned in UTC without adjustment; they are for
	// display only, never for positioning.
	Started, Finished time.Time
}

const metadataTimeLayout = "2006-01-02 15:04:05"

// ParseMetadata parses a mydumper "metadata" file in either format:
//
// mydumper 0.9/0.10:
//
//	Started dump at: 2026-11-29 08:47:05
//	SHOW MASTER STATUS:
//		Log: binlog.000003
//		Pos: 1234
//		GTID:0-1-5
//
//	SHOW SLAVE STATUS: ...   (ignored: a replica's coordinates)
//	Finished dump at: 2026-11-29 08:47:06
//
// mydumper 0.12 and later, an INI-like file:
//
//	# Started dump at: 2026-11-29 08:47:05
//	[source]            ([master] in some versions)
//	File = binlog.000003
//	Position = 1234
//	Executed_Gtid_Set = 0-1-5
//	# Finished dump at: 2026-11-29 08:47:06
//
// where the [source] section may instead hold (with --source-data)
// `executed_gtid_set = "0-1-5"`, `SOURCE_LOG_FILE = "binlog.000003"`,
// `SOURCE_LOG_POS = 1234`, the last two possibly commented out with '#'
// (then used only when no uncommented value exists). [replication...],
// table and config sections are ignored.
//
// A file without the source's binlog file and position, with an unreadable
// position, or without "Finished dump at" (mydumper writes it last, so its
// absence means the dump did not complete) is an error.
func ParseMetadata(r io.Reader) (Metadata, error) {
	var (
		md                     Metadata
		file, pos, gtid        string
		cFile, cPos            string // commented-out SOURCE_LOG_* values
		section                string // "master" for the source's section
		lastGTID, sawFinished  bool
		sawFile, sawPos, isINI bool
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20) // GTID sets can be long lines
	for lineNo := 1; sc.Scan(); lineNo++ {
		raw := strings.TrimRight(sc.Text(), "\r")
		line := strings.TrimSpace(raw)
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		if v, ok := strings.CutPrefix(text, "Started dump at:"); ok {
			t, err := parseMetadataTime(v, lineNo)
			if err != nil {
				return Metadata{}, err
			}
			md.Started = t
			continue
		}
		if v, ok := strings.CutPrefix(text, "Finished dump at:"); ok {
			t, err := parseMetadataTime(v, lineNo)
			if err != nil {
				return Metadata{}, err
			}
			md.Finished, sawFinished = t, true
			continue
		}
		switch {
		case line == "":
			lastGTID = false
			if !isINI {
				section = ""
			}
			continue
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			isINI, lastGTID = true, false
			section = ""
			if name := strings.ToLower(line[1 : len(line)-1]); name == "source" || name == "master" {
				section = "master"
			}
			continue
		case !isINI && raw == line && strings.HasSuffix(line, ":"):
			// 0.10 section header at column 0: "SHOW MASTER STATUS:".
			lastGTID = false
			section = ""
			if line == "SHOW MASTER STATUS:" {
				section = "master"
			}
			continue
		}
		if section != "master" {
			continue
		}
		if isINI {
			key, val, ok := strings.Cut(text, "=")
			if !ok {
				continue
			}
			key = strings.ToLower(strings.TrimSpace(key))
			val = unquoteMetadata(strings.TrimSpace(val))
			commented := strings.HasPrefix(line, "#")
			switch {
			case key == "file" && !commented, key == "source_log_file" && !commented, key == "master_log_file" && !commented:
				file, sawFile = val, true
			case key == "position" && !commented, key == "source_log_pos" && !commented, key == "master_log_pos" && !commented:
				pos, sawPos = val, true
			case key == "source_log_file" || key == "master_log_file":
				cFile = val
			case key == "source_log_pos" || key == "master_log_pos":
				cPos = val
			case key == "executed_gtid_set" && !commented:
				gtid = val
			}
			continue
		}
		switch key, val, _ := strings.Cut(line, ":"); key {
		case "Log":
			file, sawFile, lastGTID = strings.TrimSpace(val), true, false
		case "Pos":
			pos, sawPos, lastGTID = strings.TrimSpace(val), true, false
		case "GTID":
			gtid, lastGTID = strings.TrimSpace(val), true
		default:
			if lastGTID { // a multi-line GTID set
				gtid += line
			}
		}
	}
	if err := sc.Err(); err != nil {
		return Metadata{}, fmt.Errorf("read metadata: %w", err)
	}
	if !sawFile && cFile != "" {
		file, sawFile = cFile, true
	}
	if !sawPos && cPos != "" {
		pos, sawPos = cPos, true
	}
	if !sawFile || !sawPos || file == "" {
		return Metadata{}, errors.New("metadata: no binlog file and position of the source " +
			"(SHOW MASTER STATUS / [source]); is binary logging enabled on the source, " +
			"and did the dump user have the REPLICATION CLIENT (BINLOG MONITOR) privilege?")
	}
	n, err := strconv.ParseUint(pos, 10, 64)
	if err != nil {
		return Metadata{}, fmt.Errorf("metadata: binlog position %q is not a number", pos)
	}
	if !sawFinished {
		return Metadata{}, fmt.Errorf("metadata: no \"Finished dump at\" line: %w", ErrUnfinished)
	}
	md.BinlogFile, md.BinlogPos = file, n
	if gtid != "(null)" && gtid != "NULL" {
		md.GTID = gtid
	}
	return md, nil
}

func parseMetadataTime(v string, lineNo int) (time.Time, error) {
	t, err := time.ParseInLocation(metadataTimeLayout, strings.TrimSpace(v), time.UTC)
	if err != nil {
		return time.Time{}, fmt.Errorf("metadata line %d: bad time %q", lineNo, strings.TrimSpace(v))
	}
	return t, nil
}

// unquoteMetadata removes one pair of surrounding " or ' quotes.
func unquoteMetadata(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}
