package restore

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// MaxIdent is the longest MySQL schema or table name.
const MaxIdent = 64

// Modes of a restore's target tables.
const (
	// ModeNew loads into a table that does not exist, or exists empty.
	ModeNew = "new"
	// ModeReplace loads into a new table and swaps it with the existing one
	// (RENAME TABLE) once it is loaded and verified.
	ModeReplace = "replace"
)

// ID is the id of a restore in the bookkeeping table: the same source, cut,
// mode and target schema mapping give the same id, so a rerun of a
// restore finds its checkpoints (and writes nothing more when it is done),
// while a restore of another moment never takes another's checkpoints.
func ID(source string, cutSeq uint64, mode, into string) string {
	h := sha256.Sum256([]byte(source + "\x00" + strconv.FormatUint(cutSeq, 10) + "\x00" + mode + "\x00" + into))
	return "r" + strconv.FormatUint(cutSeq, 10) + "-" + hex.EncodeToString(h[:6])
}

// SchemaPlaceholder in --into-schema stands for the source table's schema.
const SchemaPlaceholder = "{schema}"

// DrillSchema is where a restore drill puts the tables of each schema: new
// schemas, dropped at the drill's end.
const DrillSchema = "dbtrail_drill_" + SchemaPlaceholder

// TargetSchema is the schema a table of srcSchema is restored into: into
// with {schema} replaced by srcSchema, or srcSchema when into is empty.
func TargetSchema(into, srcSchema string) string {
	if into == "" {
		return srcSchema
	}
	return strings.ReplaceAll(into, SchemaPlaceholder, srcSchema)
}

// CheckIdent refuses a name MySQL cannot hold as a schema or table name.
func CheckIdent(what, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%s: empty name", what)
	case len(name) > MaxIdent:
		return fmt.Errorf("%s %q: longer than %d characters", what, name, MaxIdent)
	case strings.TrimRight(name, " ") != name:
		return fmt.Errorf("%s %q: ends with a space", what, name)
	case strings.ContainsRune(name, 0):
		return fmt.Errorf("%s %q: holds a NUL character", what, name)
	}
	return nil
}

// LoadTable is the name a --replace load writes into beside table, and
// OldTable the name the replaced table keeps after the swap; both stay
// within MaxIdent (a long name is cut and a hash of it added).
func LoadTable(table string) string { return affix("_dbtrail_new_", table) }

// OldTable: see LoadTable.
func OldTable(table string) string { return affix("_dbtrail_old_", table) }

func affix(prefix, table string) string {
	name := prefix + table
	if len(name) <= MaxIdent {
		return name
	}
	h := sha256.Sum256([]byte(table))
	tag := "_" + hex.EncodeToString(h[:4])
	cut := MaxIdent - len(prefix) - len(tag)
	for cut > 0 && !validCut(table, cut) {
		cut--
	}
	return prefix + table[:cut] + tag
}

// validCut reports whether table[:n] ends on a UTF-8 character boundary.
func validCut(s string, n int) bool { return n >= len(s) || s[n]&0xC0 != 0x80 }
