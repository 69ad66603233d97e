package schema

import "strings"

// stmtKind classifies a statement by its leading keywords.
type stmtKind int

const (
	stmtOther stmtKind = iota // cannot change a table definition
	stmtCreateTable
	stmtCreateIndex
	stmtAlterTable
	stmtDropTable
	stmtDropIndex
	stmtRenameTable
	stmtTruncate
	stmtCreateDB
	stmtAlterDB
	stmtDropDB
)

// markerPrefix starts the COMMENT the pre-pass appends to a column whose
// MariaDB type the TiDB parser does not know (UUID, INET6, GEOMETRY, ...):
// the type is replaced by one it parses and the marker names the real one.
const markerPrefix = "__dbtrail_type__:"

// prepared is a statement made ready for the TiDB parser.
type prepared struct {
	kind        stmtKind
	toks        []token
	sig         []int          // indexes into toks of significant tokens
	sql         string         // the rewritten statement
	retry       string         // a second attempt: table options cut to charset/collation, column expressions cut; "" if none
	retryFn     func() string  // builds retry once all rewrites are done
	exprs       []span         // default, ON UPDATE, CHECK and generation expressions, cut on the retry
	suffix      map[int]string // text appended after a token (type markers), by index in toks
	orReplace   bool           // CREATE OR REPLACE
	lenient     bool           // an IF [NOT] EXISTS the parser rejects was removed
	unsupported string         // why the statement cannot be modelled (system versioning...)
}

// span is a range [from, to) of significant tokens, replaced by repl.
type span struct {
	from, to int
	repl     string
}

var (
	constraintWords = set("PRIMARY", "UNIQUE", "KEY", "INDEX", "FULLTEXT", "SPATIAL", "CONSTRAINT", "FOREIGN", "CHECK")
	geometryTypes   = set("GEOMETRY", "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING",
		"MULTIPOLYGON", "GEOMETRYCOLLECTION", "GEOMCOLLECTION")
	// tableOptions are the table options of MariaDB and MySQL; an ALTER spec
	// made of them may be cut to its charset options on a second attempt.
	tableOptions = set("AUTO_INCREMENT", "AVG_ROW_LENGTH", "CHARACTER", "CHARSET", "CHECKSUM", "COLLATE",
		"COMMENT", "COMPRESSION", "CONNECTION", "DATA", "DEFAULT", "DELAY_KEY_WRITE", "ENCRYPTED",
		"ENCRYPTION", "ENCRYPTION_KEY_ID", "ENGINE", "ENGINE_ATTRIBUTE", "IETF_QUOTES", "INSERT_METHOD",
		"KEY_BLOCK_SIZE", "MAX_ROWS", "MIN_ROWS", "PACK_KEYS", "PAGE_CHECKSUM", "PAGE_COMPRESSED",
		"PAGE_COMPRESSION_LEVEL", "PASSWORD", "ROW_FORMAT", "SECONDARY_ENGINE_ATTRIBUTE", "SEQUENCE",
		"STATS_AUTO_RECALC", "STATS_PERSISTENT", "STATS_SAMPLE_PAGES", "STORAGE", "TABLESPACE",
		"TRANSACTIONAL", "UNION")
)

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// prepare classifies stmt and rewrites the MariaDB syntax the TiDB parser
// rejects into syntax it accepts, without changing what the statement does
// to table shapes. Only tokens at known positions are touched, never the
// inside of strings, quoted identifiers or comments.
func prepare(stmt string) *prepared {
	p := &prepared{toks: tokenize(stmt)}
	for i, t := range p.toks {
		if t.kind != tkSpace && t.kind != tkComment {
			p.sig = append(p.sig, i)
		}
	}
	p.classify()
	if p.kind != stmtOther {
		p.rewriteCollations()
	}
	p.sql = p.text(0, len(p.sig))
	if p.retryFn != nil {
		p.retry = p.retryFn()
	}
	return p
}

func (p *prepared) tok(i int) token {
	if i < 0 || i >= len(p.sig) {
		return token{}
	}
	return p.toks[p.sig[i]]
}

// word returns the upper-cased text of significant token i if it is a bare
// word, else "".
func (p *prepared) word(i int) string {
	if t := p.tok(i); t.kind == tkWord {
		return strings.ToUpper(t.text)
	}
	return ""
}

func (p *prepared) is(i int, punct string) bool {
	t := p.tok(i)
	return t.kind == tkPunct && t.text == punct
}

func (p *prepared) set(i int, text string) { p.toks[p.sig[i]].text = text }

// blank removes significant tokens [from, to); they stay in p.sig, as
// empty words, until resig.
func (p *prepared) blank(from, to int) {
	for i := from; i < to && i < len(p.sig); i++ {
		p.set(i, "")
	}
}

// withoutExprs returns a copy of p with its column expressions (p.exprs)
// replaced, for a second attempt when an expression is what the TiDB parser
// rejects: expressions never change a table's shape.
func (p *prepared) withoutExprs() *prepared {
	q := *p
	q.toks = append([]token(nil), p.toks...)
	for _, sp := range p.exprs {
		q.blank(sp.from, sp.to)
		if sp.repl != "" {
			q.set(sp.from, sp.repl)
		}
	}
	return &q
}

// valueEnd returns the index after the value starting at i: a parenthesized
// expression, a literal (with sign, introducer or decimals), a name, or a
// function call, NEXT VALUE FOR seq.
func (p *prepared) valueEnd(i int) int {
	switch {
	case p.is(i, "("):
		return p.closing(i) + 1
	case p.word(i) == "NEXT" && p.word(i+1) == "VALUE" && p.word(i+2) == "FOR":
		return p.skipName(i + 3)
	case p.is(i, "-") || p.is(i, "+"):
		return p.valueEnd(i + 1)
	}
	t := p.tok(i)
	if t.kind != tkWord && t.kind != tkString && t.kind != tkIdent {
		return i
	}
	i++
	switch {
	case t.kind == tkWord && p.tok(i).kind == tkString: // _utf8mb4'x', b'01', x'ff'
		i++
	case t.kind == tkWord && t.text[0] >= '0' && t.text[0] <= '9' && p.is(i, "."):
		i++
		if p.tok(i).kind == tkWord {
			i++
		}
	case p.is(i, "("):
		i = p.closing(i) + 1
	}
	return i
}

// resig drops blanked tokens from p.sig, so positions again count only the
// tokens left.
func (p *prepared) resig() {
	sig := p.sig[:0]
	for _, i := range p.sig {
		if p.toks[i].text != "" {
			sig = append(sig, i)
		}
	}
	p.sig = sig
}

// text joins the tokens from significant token from up to (not including)
// significant token to, with the space and comments in between.
func (p *prepared) text(from, to int) string {
	var b strings.Builder
	start := 0
	if from >= len(p.sig) {
		start = len(p.toks)
	} else if from > 0 {
		start = p.sig[from]
	}
	end := len(p.toks)
	if to < len(p.sig) {
		end = p.sig[to]
	}
	for i := start; i < end; i++ {
		b.WriteString(p.toks[i].text)
		b.WriteString(p.suffix[i])
	}
	return b.String()
}

// ifExists reports whether IF EXISTS (or IF NOT EXISTS) starts at i and
// returns the index after it.
func (p *prepared) ifExists(i int) (int, bool) {
	if p.word(i) == "IF" && p.word(i+1) == "EXISTS" {
		return i + 2, true
	}
	if p.word(i) == "IF" && p.word(i+1) == "NOT" && p.word(i+2) == "EXISTS" {
		return i + 3, true
	}
	return i, false
}

// skipName returns the index after a possibly qualified name at i.
func (p *prepared) skipName(i int) int {
	i++
	for p.is(i, ".") {
		i += 2
	}
	return i
}

// closing returns the index of the ')' matching the '(' at open, or the
// number of significant tokens when it has none.
func (p *prepared) closing(open int) int {
	depth := 0
	for i := open; i < len(p.sig); i++ {
		switch {
		case p.is(i, "("):
			depth++
		case p.is(i, ")"):
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return len(p.sig)
}

// segments splits [from, to) at commas outside parentheses.
func (p *prepared) segments(from, to int) [][2]int {
	var out [][2]int
	depth, start := 0, from
	for i := from; i < to; i++ {
		switch {
		case p.is(i, "("):
			depth++
		case p.is(i, ")"):
			depth--
		case p.is(i, ",") && depth == 0:
			out = append(out, [2]int{start, i})
			start = i + 1
		}
	}
	return append(out, [2]int{start, to})
}

// stripWait removes MariaDB's WAIT n and NOWAIT (lock wait options) outside
// parentheses.
func (p *prepared) stripWait() {
	depth := 0
	for i := range p.sig {
		switch {
		case p.is(i, "("):
			depth++
		case p.is(i, ")"):
			depth--
		case depth == 0 && p.word(i) == "NOWAIT":
			p.blank(i, i+1)
		case depth == 0 && p.word(i) == "WAIT" && p.tok(i+1).kind == tkWord && strings.Trim(p.tok(i+1).text, "0123456789.") == "":
			p.blank(i, i+2)
		}
	}
}

// rewriteCollations replaces collation names the TiDB parser does not know
// (utf8mb4_uca1400_ai_ci, utf8mb4_nopad_bin, ...) by the _bin collation of
// the same character set, which is all dbtrail reads from a collation, and
// removes MariaDB 11's charset-less context collations (uca1400_ai_ci).
func (p *prepared) rewriteCollations() {
	for i := range p.sig {
		if p.word(i) != "COLLATE" {
			continue
		}
		j := i + 1
		if p.is(j, "=") {
			j++
		}
		t := p.tok(j)
		if t.kind != tkWord && t.kind != tkIdent && t.kind != tkString {
			continue
		}
		name := unquoteIdent(t)
		if parserKnowsCollation(name) {
			continue
		}
		cs := CharsetOfCollation(name)
		switch {
		case cs == "binary":
			p.set(j, "binary")
		case cs != "" && parserKnowsCollation(cs+"_bin"):
			p.set(j, cs+"_bin")
		case cs == "" && strings.HasPrefix(strings.ToLower(name), "uca1400_"):
			// a MariaDB 11 context collation: it keeps the charset in force
			from := i
			if p.word(i-1) == "DEFAULT" {
				from--
			}
			p.blank(from, j+1)
		}
	}
}

// charsetOptions returns the character set and collation options found
// outside parentheses in [from, to) as table options text, dropping every
// other option.
func (p *prepared) charsetOptions(from, to int) string {
	var b strings.Builder
	depth := 0
	for i := from; i < to; i++ {
		switch {
		case p.is(i, "("):
			depth++
			continue
		case p.is(i, ")"):
			depth--
			continue
		case depth > 0:
			continue
		}
		kw := p.word(i)
		j := i + 1
		if kw == "CHARACTER" && p.word(j) == "SET" {
			kw, j = "CHARSET", j+1
		}
		if kw != "CHARSET" && kw != "COLLATE" {
			continue
		}
		if p.is(j, "=") {
			j++
		}
		b.WriteString(" DEFAULT " + kw + "=" + p.tok(j).text)
		i = j
	}
	return b.String()
}
