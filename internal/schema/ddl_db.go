package schema

import "strings"

// database applies CREATE [OR REPLACE]/ALTER/DROP DATABASE (or SCHEMA).
// These are read from the tokens, not the TiDB parser, so options it does
// not know (COMMENT, ...) never get in the way. CREATE OR REPLACE DATABASE
// drops the schema's tables first (ChangeDropSchema).
func (a *applier) database() (Change, error) {
	p := a.p
	p.resig() // drop a blanked OR REPLACE
	i := 2    // after CREATE/ALTER/DROP DATABASE
	j, ifx := p.ifExists(i)
	i = j
	name := ""
	if t := p.tok(i); t.kind == tkIdent || (t.kind == tkWord && !dbOptionWords[p.word(i)]) {
		name = unquoteIdent(t)
		i++
	}
	if name == "" && p.kind == stmtAlterDB {
		name = a.db
	}
	if name == "" {
		return Change{Parsed: true}, &DDLError{Stmt: a.stmt, Err: errNoSchema}
	}
	ch := Change{Kind: ChangeNone, Parsed: true, Schema: name}
	if p.kind == stmtDropDB || (p.kind == stmtCreateDB && p.orReplace) {
		ch.Kind = ChangeDropSchema
		for _, t := range a.cat.SchemaTables(name) {
			ch.Tables = append(ch.Tables, TableChange{Schema: t.Schema, Name: t.Name, Old: t})
			a.cat.Delete(t.Schema, t.Name)
		}
		a.cat.SetSchemaCharset(name, "")
		if p.kind == stmtDropDB {
			return ch, nil
		}
	}
	switch p.kind {
	case stmtCreateDB:
		if ifx && a.cat.hasSchemaCharset(name) {
			ch.SchemaCharset = a.cat.SchemaCharset(name)
			return ch, nil
		}
	}
	cs := a.dbCharset(i)
	switch {
	case cs != "":
	case p.kind == stmtCreateDB:
		cs = a.cat.SchemaCharset("") // the server's default
	default:
		cs = a.cat.SchemaCharset(name) // ALTER without a charset keeps it
	}
	a.cat.SetSchemaCharset(name, cs)
	ch.SchemaCharset = cs
	return ch, nil
}

var dbOptionWords = set("DEFAULT", "CHARACTER", "CHARSET", "COLLATE", "COMMENT", "READ", "ENCRYPTION", "UPGRADE")

// dbCharset returns the charset the database options from token i set, ""
// when they set none.
func (a *applier) dbCharset(i int) string {
	p := a.p
	cs, co := "", ""
	for ; i < len(p.sig); i++ {
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
		v := unquoteIdent(p.tok(j))
		if kw == "CHARSET" && !strings.EqualFold(v, "DEFAULT") {
			cs = NormalizeCharset(v)
		} else if kw == "COLLATE" {
			co = CharsetOfCollation(v)
		}
		i = j
	}
	if cs == "" {
		cs = co
	}
	return cs
}
