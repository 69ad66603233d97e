package sqlport

import (
	"regexp"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/charset"
	"golang.org/x/text/encoding/charmap"

	"github.com/dbtrail/dbtrail/internal/schema"
)

// The character set number (a collation id) of each text column on the
// wire is the one a MariaDB or MySQL server sends: with
// character_set_results set (the handshake's collation, SET NAMES, SET
// character_set_results), every text column is sent converted to it and
// carries its id; with character_set_results NULL (Connector/J's SET
// character_set_results = NULL) no conversion is made and a column
// carries its own collation's id (collationID), its text in that
// character set. Binary strings, numbers and temporals carry 63 (binary)
// either way. The port's text is UTF-8, so a utf8mb4 or utf8mb3 result
// charset is the text as it is, and latin1 (MySQL's latin1 is cp1252) is
// the text transcoded (a character latin1 lacks becomes '?', as MySQL
// writes it); any other result charset is taken as utf8mb4_general_ci.

// charsetDefaults are the ids of MariaDB's default collation of each
// character set (SHOW CHARSET's Default collation).
var charsetDefaults = map[string]uint16{
	"utf8mb4": 45, "utf8mb3": 33, "utf8": 33, "latin1": 8, "ascii": 11, "binary": 63,
	"ucs2": 35, "utf16": 54, "utf16le": 56, "utf32": 60, "big5": 1, "dec8": 3, "cp850": 4,
	"hp8": 6, "koi8r": 7, "latin2": 9, "swe7": 10, "ujis": 12, "sjis": 13, "hebrew": 16,
	"tis620": 18, "euckr": 19, "koi8u": 22, "gb2312": 24, "greek": 25, "cp1250": 26, "gbk": 28,
	"latin5": 30, "armscii8": 32, "cp866": 36, "keybcs2": 37, "macce": 38, "macroman": 39,
	"cp852": 40, "latin7": 41, "cp1251": 51, "cp1256": 57, "cp1257": 59, "geostd8": 92,
	"cp932": 95, "eucjpms": 97,
}

// collationID is the id of a text column's collation: declared (its own
// COLLATE or its table's, schema.ColumnCollations; "" for its character
// set's default), else its character set's default collation
// (utf8mb4's when the definition names no character set). A collation
// the id table does not know (MariaDB's uca1400 family) is its
// character set's default.
func collationID(c *schema.Column, declared string) uint16 {
	cs := strings.ToLower(c.Charset)
	if cs == "binary" {
		return charsetBinary
	}
	if declared != "" {
		// A text column's collation of its own charset (not the binary
		// one a prepass gives a type the parser does not know).
		if co, err := charset.GetCollationByName(declared); err == nil && co.ID > 0 && co.ID < 1<<16 && co.ID != charsetBinary {
			return uint16(co.ID)
		}
	}
	if id, ok := charsetDefaults[cs]; ok {
		return id
	}
	return charsetUTF8MB4
}

// charsetOfID names the character set of collation id, or "".
func charsetOfID(id uint16) string {
	if co, err := charset.GetCollationByID(int(id)); err == nil {
		if co.CharsetName == "utf8" {
			return "utf8mb3"
		}
		return co.CharsetName
	}
	return ""
}

// resultsCollation is the collation id of character_set_results for a
// client's collation id (the handshake's, SET NAMES): itself when its
// character set is one the port sends (utf8mb4, utf8mb3, latin1), else
// utf8mb4_general_ci.
func resultsCollation(id uint16) uint16 {
	switch charsetOfID(id) {
	case "utf8mb4", "utf8mb3", "latin1":
		return id
	}
	return charsetUTF8MB4
}

// wire sets f's character set number for the session (results: the
// collation id of character_set_results, 0 for NULL): binary stays 63;
// text is sent as results when set, else as its own collation. It reports
// whether the column's text must be transcoded to latin1.
func wire(f *mysql.Field, results uint16) (latin1 bool) {
	if f.Charset == charsetBinary {
		return false
	}
	if results != 0 {
		f.Charset = results
	}
	switch charsetOfID(f.Charset) {
	case "utf8mb4", "utf8mb3", "ascii", "latin1":
	default:
		f.Charset = charsetUTF8MB4 // the port's text is UTF-8
	}
	return charsetOfID(f.Charset) == "latin1"
}

// toLatin1 is UTF-8 text in latin1 (cp1252, MySQL's latin1); a character
// it lacks is '?'.
func toLatin1(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for _, r := range string(b) {
		if c, ok := charmap.Windows1252.EncodeRune(r); ok {
			out = append(out, c)
		} else if r >= 0x80 && r <= 0xff { // cp1252's holes (0x81…): MySQL's latin1 keeps them
			out = append(out, byte(r))
		} else {
			out = append(out, '?')
		}
	}
	return out
}

// setCharsets are the assignments of a SET statement that change the
// result character set: SET NAMES cs [COLLATE co], SET CHARACTER SET cs,
// character_set_results = cs | NULL.
var (
	setNames   = regexp.MustCompile(`(?is)\bNAMES\s+(?:'([^']*)'|"([^"]*)"|([\w]+))(?:\s+COLLATE\s+(?:'([^']*)'|"([^"]*)"|([\w]+)))?`)
	setCharSet = regexp.MustCompile(`(?is)\bCHAR(?:ACTER)?\s+SET\s+(?:'([^']*)'|"([^"]*)"|([\w]+))`)
	setResults = regexp.MustCompile(`(?is)(?:@@(?:session\.)?|\bSESSION\s+|\bLOCAL\s+|\b)character_set_results\s*(?:=|:=)\s*(?:'([^']*)'|"([^"]*)"|([\w]+))`)
)

// resultsOfSet is the collation id of character_set_results after the
// SET statement stmt, from the session's current one (0: NULL), and
// whether stmt changed it.
func resultsOfSet(stmt string, cur uint16) (uint16, bool) {
	first := func(m []string) string { return m[0] + m[1] + m[2] }
	switch {
	case setResults.MatchString(stmt):
		v := first(setResults.FindStringSubmatch(stmt)[1:])
		if strings.EqualFold(v, "NULL") || strings.EqualFold(v, "binary") {
			return 0, true
		}
		return resultsCollation(charsetDefaults[strings.ToLower(v)]), true
	case setNames.MatchString(stmt):
		m := setNames.FindStringSubmatch(stmt)
		if co := first(m[4:]); co != "" && !strings.EqualFold(co, "DEFAULT") {
			if c, err := charset.GetCollationByName(co); err == nil {
				return resultsCollation(uint16(c.ID)), true
			}
		}
		return resultsCollation(charsetDefaults[strings.ToLower(first(m[1:]))]), true
	case setCharSet.MatchString(stmt):
		return resultsCollation(charsetDefaults[strings.ToLower(first(setCharSet.FindStringSubmatch(stmt)[1:]))]), true
	}
	return cur, false
}
