package schema

import (
	"strings"
)

// classify sets p.kind from the leading keywords and applies the rewrites
// of that kind of statement.
func (p *prepared) classify() {
	switch p.word(0) {
	case "CREATE":
		i := 1
		if p.word(i) == "OR" && p.word(i+1) == "REPLACE" {
			p.orReplace = true
			p.blank(i, i+2)
			i += 2
		}
		switch p.word(i) {
		case "TABLE":
			p.kind = stmtCreateTable
			p.createTable(i + 1)
		case "UNIQUE", "FULLTEXT", "SPATIAL", "INDEX":
			if p.word(i) == "SPATIAL" {
				p.blank(i, i+1)
			}
			if p.word(i) == "INDEX" || p.word(i+1) == "INDEX" {
				p.kind = stmtCreateIndex
				p.stripWait()
			}
		case "DATABASE", "SCHEMA":
			p.kind = stmtCreateDB
		}
	case "ALTER":
		i := 1
		for p.word(i) == "ONLINE" || p.word(i) == "IGNORE" {
			p.blank(i, i+1)
			i++
		}
		switch p.word(i) {
		case "TABLE":
			p.kind = stmtAlterTable
			p.alterTable(i + 1)
		case "DATABASE", "SCHEMA":
			p.kind = stmtAlterDB
		}
	case "DROP":
		switch p.word(1) {
		case "TABLE", "TABLES":
			p.kind = stmtDropTable
			p.set(1, "TABLE")
			p.stripWait()
		case "INDEX":
			p.kind = stmtDropIndex
			p.stripWait()
		case "DATABASE", "SCHEMA":
			p.kind = stmtDropDB
		}
	case "RENAME":
		if w := p.word(1); w == "TABLE" || w == "TABLES" {
			p.kind = stmtRenameTable
			p.set(1, "TABLE")
			if j, ok := p.ifExists(2); ok {
				p.blank(2, j)
				p.lenient = true
			}
			p.stripWait()
		}
	case "TRUNCATE":
		p.kind = stmtTruncate
		p.stripWait()
	}
}

// createTable rewrites CREATE TABLE from significant token i (after TABLE).
func (p *prepared) createTable(i int) {
	i, _ = p.ifExists(i)
	i = p.skipName(i)
	tailFrom := i
	if p.is(i, "(") && p.word(i+1) != "LIKE" && p.word(i+1) != "SELECT" {
		tailFrom = p.elements(i) + 1
	}
	p.checkVersioning(0, len(p.sig))
	for j := tailFrom; j < len(p.sig); j++ {
		if p.word(j) == "SELECT" || p.word(j) == "LIKE" {
			return // no retry: cutting the tail would lose the query or the source
		}
	}
	if tailFrom > i {
		p.retryFn = func() string {
			q := p.withoutExprs()
			return q.text(0, tailFrom) + q.charsetOptions(tailFrom, len(q.sig))
		}
	}
}

// elements rewrites the column and index definitions inside the parentheses
// opening at open and returns the index of the closing one.
func (p *prepared) elements(open int) int {
	end := p.closing(open)
	for _, seg := range p.segments(open+1, end) {
		s, e := seg[0], seg[1]
		switch w := p.word(s); {
		case constraintWords[w]:
			p.constraint(s, e)
		case w == "PERIOD":
			p.unsupported = "PERIOD FOR (system versioning or application time)"
		case s < e:
			p.columnDef(s, s+1, e)
		}
	}
	return end
}

// constraint rewrites an index definition in [s, e): SPATIAL becomes a plain
// index and MariaDB's IF NOT EXISTS after the index kind is removed.
func (p *prepared) constraint(s, e int) {
	for i := s; i < e; i++ {
		if p.word(i) == "SPATIAL" {
			p.blank(i, i+1)
		}
		if j, ok := p.ifExists(i); ok {
			p.blank(i, j)
			p.lenient = true
		}
		if p.is(i, "(") {
			return
		}
	}
}

// columnDef rewrites a column definition whose name is at name, type at typ
// and which ends before e.
func (p *prepared) columnDef(name, typ, e int) {
	marker, w := "", p.word(typ)
	switch {
	case (w == "UUID" || w == "INET6" || w == "INET4") && !p.is(typ+1, "("):
		marker = strings.ToLower(w)
		if w == "INET4" {
			p.set(typ, "BINARY(4)")
		} else {
			p.set(typ, "BINARY(16)")
		}
	case geometryTypes[w] && !p.is(typ+1, "("):
		marker = strings.ToLower(w)
		if w == "GEOMCOLLECTION" {
			marker = "geometrycollection"
		}
		p.set(typ, "LONGBLOB")
	case w == "NATIONAL" || w == "NCHAR" || w == "NVARCHAR":
		marker = "national"
	case w == "YEAR" && p.is(typ+1, "("): // YEAR(2) and YEAR(4) are both YEAR here
		p.blank(typ+1, p.closing(typ+1)+1)
	}
	if after := p.afterType(typ); p.word(after) == "BYTE" && (w == "CHAR" || w == "CHARACTER") {
		p.set(typ, "BINARY") // CHAR [(n)] BYTE is BINARY [(n)]
		p.blank(after, after+1)
	} else if p.word(after) == "ASCII" {
		p.set(after, "CHARACTER SET latin1")
	} else if p.word(after) == "UNICODE" {
		p.set(after, "CHARACTER SET ucs2")
	}
	depth := 0
	for i := typ + 1; i < e; i++ {
		switch {
		case p.is(i, "("):
			depth++
		case p.is(i, ")"):
			depth--
		}
		if depth > 0 {
			continue
		}
		switch p.word(i) {
		case "DEFAULT":
			p.exprs = append(p.exprs, span{i, p.valueEnd(i + 1), ""})
			i = p.exprs[len(p.exprs)-1].to - 1
		case "ON":
			if p.word(i+1) == "UPDATE" {
				p.exprs = append(p.exprs, span{i, p.valueEnd(i + 2), ""})
				i = p.exprs[len(p.exprs)-1].to - 1
			}
		case "CHECK":
			if p.is(i+1, "(") && p.word(i+2) != "JSON_VALID" {
				p.exprs = append(p.exprs, span{i, p.closing(i+1) + 1, ""})
				i = p.exprs[len(p.exprs)-1].to - 1
			}
		case "AS":
			if p.is(i+1, "(") {
				p.exprs = append(p.exprs, span{i + 1, p.closing(i+1) + 1, "(0)"})
				i = p.exprs[len(p.exprs)-1].to - 1
			}
		case "INVISIBLE":
			p.blank(i, i+1)
		case "COMPRESSED":
			p.blank(i, i+1)
			if p.is(i+1, "=") {
				p.blank(i+1, i+3)
			}
		case "PERSISTENT":
			p.set(i, "STORED")
		case "REF_SYSTEM_ID":
			p.blank(i, i+3)
		case "WITHOUT":
			if p.word(i+1) == "SYSTEM" && p.word(i+2) == "VERSIONING" {
				p.blank(i, i+3)
			}
		}
	}
	if marker == "" || e <= typ {
		return
	}
	last := e - 1 // the marker goes before a FIRST / AFTER col position clause
	if p.word(last) == "FIRST" {
		last--
	} else if p.word(last-1) == "AFTER" {
		last -= 2
	}
	if p.suffix == nil {
		p.suffix = map[int]string{}
	}
	p.suffix[p.sig[last]] += " COMMENT '" + markerPrefix + marker + "'"
}

// afterType returns the index after the type word at typ and its
// parenthesized length, if any.
func (p *prepared) afterType(typ int) int {
	if p.is(typ+1, "(") {
		return p.closing(typ+1) + 1
	}
	return typ + 1
}

// checkVersioning marks statements that create or change system-versioned
// tables, whose hidden row_start/row_end columns the statement text does not
// show.
func (p *prepared) checkVersioning(from, to int) {
	for i := from; i < to; i++ {
		switch {
		case p.word(i) == "SYSTEM" && p.word(i+1) == "VERSIONING" && p.word(i-1) != "WITHOUT":
			p.unsupported = "WITH SYSTEM VERSIONING"
		case p.word(i) == "PERIOD" && p.word(i+1) == "FOR":
			p.unsupported = "PERIOD FOR"
		case p.word(i) == "AS" && p.word(i+1) == "ROW" && (p.word(i+2) == "START" || p.word(i+2) == "END"):
			p.unsupported = "GENERATED ALWAYS AS ROW START/END"
		}
	}
}

// alterTable rewrites ALTER TABLE from significant token i (after TABLE).
func (p *prepared) alterTable(i int) {
	if j, ok := p.ifExists(i); ok {
		p.blank(i, j)
		p.lenient = true
	}
	p.stripWait()
	p.resig() // now ALTER TABLE name ...: ONLINE, IGNORE, IF EXISTS and WAIT are gone
	i = p.skipName(2)
	p.checkVersioning(i, len(p.sig))
	var options [][2]int
	for _, seg := range p.segments(i, len(p.sig)) {
		s, e := seg[0], seg[1]
		switch w := p.word(s); w {
		case "ADD":
			k := s + 1
			if p.word(k) == "COLUMN" {
				k++
			}
			k, _ = p.ifExists(k)
			switch {
			case p.is(k, "("):
				p.elements(k)
			case constraintWords[p.word(k)]:
				p.constraint(k, e)
			case p.word(k) == "PARTITION":
			default:
				p.columnDef(k, k+1, e)
			}
		case "MODIFY", "CHANGE":
			k := s + 1
			if p.word(k) == "COLUMN" {
				k++
			}
			k, _ = p.ifExists(k)
			if w == "CHANGE" {
				k++
			}
			p.columnDef(k, k+1, e)
		case "DROP":
			if w1 := p.word(s + 1); w1 == "CONSTRAINT" || w1 == "FOREIGN" {
				p.constraint(s+1, e)
			}
		case "ALTER":
			for j := s + 1; j < e; j++ {
				if p.word(j) == "IGNORED" {
					if p.word(j-1) == "NOT" {
						p.blank(j-1, j)
						p.set(j, "VISIBLE")
					} else {
						p.set(j, "INVISIBLE")
					}
				}
			}
		default:
			if s < e && (tableOptions[w] || (p.tok(s).kind == tkIdent && p.is(s+1, "="))) {
				options = append(options, seg)
			}
		}
	}
	if len(options) > 0 || len(p.exprs) > 0 { // retry with table options cut to charset/collation
		p.retryFn = func() string { return p.withoutExprs().cutOptions(options) }
	}
}

// cutOptions returns the statement with the table-option segments reduced to
// their charset and collation options, or to FORCE when they have none.
func (p *prepared) cutOptions(options [][2]int) string {
	var b strings.Builder
	from := 0
	for _, seg := range options {
		b.WriteString(p.text(from, seg[0]))
		if kept := p.charsetOptions(seg[0], seg[1]); kept != "" {
			b.WriteString(kept + " ")
		} else {
			b.WriteString(" FORCE ")
		}
		from = seg[1]
	}
	b.WriteString(p.text(from, len(p.sig)))
	return b.String()
}
