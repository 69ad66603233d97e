package schema

import (
	"strings"

	tidbcharset "github.com/pingcap/tidb/pkg/parser/charset"
)

// DefaultCharset is the character set assumed when neither the column, the
// table, the schema nor the server says otherwise.
const DefaultCharset = "utf8mb4"

// charsetMaxLen is the longest character, in bytes, of every character set
// MariaDB 10.11 and MySQL 8 know (information_schema.CHARACTER_SETS.MAXLEN).
var charsetMaxLen = map[string]int{
	"armscii8": 1, "ascii": 1, "big5": 2, "binary": 1, "cp1250": 1, "cp1251": 1,
	"cp1256": 1, "cp1257": 1, "cp850": 1, "cp852": 1, "cp866": 1, "cp932": 2,
	"dec8": 1, "eucjpms": 3, "euckr": 2, "gb18030": 4, "gb2312": 2, "gbk": 2,
	"geostd8": 1, "greek": 1, "hebrew": 1, "hp8": 1, "keybcs2": 1, "koi8r": 1,
	"koi8u": 1, "latin1": 1, "latin2": 1, "latin5": 1, "latin7": 1, "macce": 1,
	"macroman": 1, "sjis": 2, "swe7": 1, "tis620": 1, "ucs2": 2, "ujis": 3,
	"utf16": 4, "utf16le": 4, "utf32": 4, "utf8mb3": 3, "utf8mb4": 4,
}

// NormalizeCharset returns the canonical lower-case name of a character set:
// "utf8" (an alias of utf8mb3 in MariaDB and MySQL) becomes "utf8mb3".
func NormalizeCharset(cs string) string {
	cs = strings.ToLower(strings.TrimSpace(cs))
	if cs == "utf8" {
		return "utf8mb3"
	}
	return cs
}

// CharsetMaxLen returns the longest character of cs in bytes, or 0 when cs
// is unknown.
func CharsetMaxLen(cs string) int { return charsetMaxLen[NormalizeCharset(cs)] }

// CharsetOfCollation returns the character set a collation name belongs to
// ("utf8mb4_uca1400_ai_ci" → "utf8mb4", "binary" → "binary"), or "" when the
// name starts with no known character set.
func CharsetOfCollation(collation string) string {
	co := strings.ToLower(strings.TrimSpace(collation))
	if co == "binary" {
		return "binary"
	}
	best := ""
	for cs := range charsetMaxLen {
		if strings.HasPrefix(co, cs+"_") && len(cs) > len(best) {
			best = cs
		}
	}
	if best == "" && strings.HasPrefix(co, "utf8_") {
		best = "utf8mb3"
	}
	return best
}

// collationRange maps collation IDs lo..hi to a character set.
type collationRange struct {
	lo, hi int
	cs     string
}

// collationRanges covers the collation IDs below 1024, taken from MariaDB
// 10.11's information_schema.COLLATIONS plus MySQL 8's own (76, 248-250,
// 255-323).
var collationRanges = []collationRange{
	{1, 1, "big5"}, {2, 2, "latin2"}, {3, 3, "dec8"}, {4, 4, "cp850"}, {5, 5, "latin1"},
	{6, 6, "hp8"}, {7, 7, "koi8r"}, {8, 8, "latin1"}, {9, 9, "latin2"}, {10, 10, "swe7"},
	{11, 11, "ascii"}, {12, 12, "ujis"}, {13, 13, "sjis"}, {14, 14, "cp1251"}, {15, 15, "latin1"},
	{16, 16, "hebrew"}, {18, 18, "tis620"}, {19, 19, "euckr"}, {20, 20, "latin7"}, {21, 21, "latin2"},
	{22, 22, "koi8u"}, {23, 23, "cp1251"}, {24, 24, "gb2312"}, {25, 25, "greek"}, {26, 26, "cp1250"},
	{27, 27, "latin2"}, {28, 28, "gbk"}, {29, 29, "cp1257"}, {30, 30, "latin5"}, {31, 31, "latin1"},
	{32, 32, "armscii8"}, {33, 33, "utf8mb3"}, {34, 34, "cp1250"}, {35, 35, "ucs2"}, {36, 36, "cp866"},
	{37, 37, "keybcs2"}, {38, 38, "macce"}, {39, 39, "macroman"}, {40, 40, "cp852"}, {41, 42, "latin7"},
	{43, 43, "macce"}, {44, 44, "cp1250"}, {45, 46, "utf8mb4"}, {47, 49, "latin1"}, {50, 52, "cp1251"},
	{53, 53, "macroman"}, {54, 55, "utf16"}, {56, 56, "utf16le"}, {57, 57, "cp1256"}, {58, 59, "cp1257"},
	{60, 61, "utf32"}, {62, 62, "utf16le"}, {63, 63, "binary"}, {64, 64, "armscii8"}, {65, 65, "ascii"},
	{66, 66, "cp1250"}, {67, 67, "cp1256"}, {68, 68, "cp866"}, {69, 69, "dec8"}, {70, 70, "greek"},
	{71, 71, "hebrew"}, {72, 72, "hp8"}, {73, 73, "keybcs2"}, {74, 74, "koi8r"}, {75, 75, "koi8u"},
	{76, 76, "utf8mb3"}, {77, 77, "latin2"}, {78, 78, "latin5"}, {79, 79, "latin7"}, {80, 80, "cp850"},
	{81, 81, "cp852"}, {82, 82, "swe7"}, {83, 83, "utf8mb3"}, {84, 84, "big5"}, {85, 85, "euckr"},
	{86, 86, "gb2312"}, {87, 87, "gbk"}, {88, 88, "sjis"}, {89, 89, "tis620"}, {90, 90, "ucs2"},
	{91, 91, "ujis"}, {92, 93, "geostd8"}, {94, 94, "latin1"}, {95, 96, "cp932"}, {97, 98, "eucjpms"},
	{99, 99, "cp1250"}, {101, 124, "utf16"}, {128, 151, "ucs2"}, {159, 159, "ucs2"}, {160, 183, "utf32"},
	{192, 215, "utf8mb3"}, {223, 223, "utf8mb3"}, {224, 247, "utf8mb4"}, {248, 250, "gb18030"},
	{255, 323, "utf8mb4"}, {576, 578, "utf8mb3"}, {608, 610, "utf8mb4"}, {640, 642, "ucs2"},
	{672, 674, "utf16"}, {736, 738, "utf32"},
}

// CharsetOfCollationID returns the character set of a collation ID as the
// binlog carries it (MariaDB and MySQL numbering), or "" when unknown.
// MariaDB's NO PAD variants are their PAD SPACE twin + 1024 and its UCA 14.0
// collations fill blocks of 256 from 2048.
func CharsetOfCollationID(id uint64) string {
	switch {
	case id >= 1024 && id < 2048:
		return CharsetOfCollationID(id - 1024)
	case id >= 2048 && id < 2304:
		return "utf8mb3"
	case id >= 2304 && id < 2560:
		return "utf8mb4"
	case id >= 2560 && id < 2816:
		return "ucs2"
	case id >= 2816 && id < 3072:
		return "utf16"
	case id >= 3072 && id < 3328:
		return "utf32"
	}
	for _, r := range collationRanges {
		if int(id) >= r.lo && int(id) <= r.hi {
			return r.cs
		}
	}
	return ""
}

// init teaches the TiDB parser the character sets it does not support
// itself (cp1251, ucs2, ...), so DDL naming them parses. It only adds
// names the parser does not know; nothing it knows changes.
func init() {
	for cs, maxLen := range charsetMaxLen {
		if _, err := tidbcharset.GetCharsetInfo(cs); err == nil {
			continue
		}
		tidbcharset.AddCharset(&tidbcharset.Charset{
			Name: cs, DefaultCollation: cs + "_bin",
			Collations: map[string]*tidbcharset.Collation{},
			Desc:       cs, Maxlen: maxLen,
		})
	}
}

// parserKnowsCollation reports whether the TiDB parser accepts a collation
// name.
func parserKnowsCollation(name string) bool {
	_, err := tidbcharset.GetCollationByName(name)
	return err == nil
}
