package views

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	stdsync "sync" // the package has a test helper named sync
)

// checked is what checkStatement learned of a statement before it runs.
type checked struct {
	// explain: the statement is an EXPLAIN of a SELECT.
	explain bool
	// names are the schema.table names it reads (every BASE_TABLE
	// reference, CTEs and subqueries included).
	names map[string]bool
}

// parser is an empty in-memory DuckDB whose only use is parsing statements
// (json_serialize_sql): it holds no view, file or setting of a session.
var parser = stdsync.OnceValues(func() (*sql.DB, error) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, fmt.Errorf("views: open the statement parser: %w", err)
	}
	db.SetMaxOpenConns(2)
	db.SetMaxIdleConns(2) // an in-memory database lives while a connection does
	return db, nil
})

// serializeStmt is the parser's json_serialize_sql, prepared once: a
// statement's parse then costs no planning of its own.
var serializeStmt = stdsync.OnceValues(func() (*sql.Stmt, error) {
	db, err := parser()
	if err != nil {
		return nil, err
	}
	st, err := db.Prepare("SELECT json_serialize_sql(?::VARCHAR)::VARCHAR")
	if err != nil {
		return nil, fmt.Errorf("views: prepare the statement parser: %w", err)
	}
	return st, nil
})

// ParseJSON is DuckDB's parse of text as JSON (json_serialize_sql): its
// statements, or the parse error (a statement other than SELECT is one).
// Only parsing: nothing is bound or run.
// Parses of statements up to parseCacheText bytes are kept (at most
// parseCacheEntries, all dropped when full): the SQL port parses a
// statement to rewrite it and again to check it, most often the same text.
func ParseJSON(ctx context.Context, text string) (string, error) {
	if js, ok := parses.get(text); ok {
		return js, nil
	}
	st, err := serializeStmt()
	if err != nil {
		return "", err
	}
	var js string
	if err := st.QueryRowContext(ctx, text).Scan(&js); err != nil {
		return "", fmt.Errorf("views: parse the statement: %w", err)
	}
	parses.put(text, js)
	return js, nil
}

const (
	parseCacheText    = 4 << 10
	parseCacheEntries = 256
)

// parses are the kept parses, by statement text.
var parses = &parseCache{m: map[string]string{}}

type parseCache struct {
	mu stdsync.Mutex
	m  map[string]string
}

func (c *parseCache) get(text string) (string, bool) {
	if len(text) > parseCacheText {
		return "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	js, ok := c.m[text]
	return js, ok
}

func (c *parseCache) put(text, js string) {
	if len(text) > parseCacheText {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= parseCacheEntries {
		clear(c.m)
	}
	c.m[text] = js
}

// CheckStatement is Session.Query's check of stmt, without a session:
// from DuckDB's parse alone, before anything opens, reads the index or
// stages a tail. The API and `dbtrail query` call it first, so a refused
// statement costs a parse only.
func CheckStatement(ctx context.Context, stmt string) error {
	_, err := checkStatement(ctx, stmt)
	return err
}

// checkStatement refuses, from DuckDB's parse of stmt alone (nothing is
// bound, planned, staged or run), anything but one SELECT (in all its
// forms: WITH, VALUES, FROM, DESCRIBE, SHOW, SUMMARIZE) or an EXPLAIN of
// one, and a statement that calls a function the sandbox refuses or does
// not know (sandbox_functions.go), naming it. It returns the tables the
// statement names.
func checkStatement(ctx context.Context, stmt string) (checked, error) {
	var c checked
	inner := stmt
	if loc := explainPrefix.FindStringIndex(stmt); loc != nil {
		c.explain, inner = true, stmt[loc[1]:]
	}
	// json_serialize_sql parses SELECT statements only: any other
	// statement is an error of its answer.
	text, err := ParseJSON(ctx, inner)
	if err != nil {
		return c, err
	}
	var tree struct {
		Error      bool              `json:"error"`
		ErrorType  string            `json:"error_type"`
		Message    string            `json:"error_message"`
		Statements []json.RawMessage `json:"statements"`
	}
	if err := json.Unmarshal([]byte(text), &tree); err != nil {
		return c, fmt.Errorf("views: parse the statement: %w", err)
	}
	switch {
	case tree.Error && tree.ErrorType == "parser":
		return c, fmt.Errorf("%w: the statement does not parse: %s", ErrNotReadOnly, tree.Message)
	case tree.Error:
		return c, ErrNotReadOnly
	case len(tree.Statements) != 1:
		return c, fmt.Errorf("%w: one statement at a time (got %d)", ErrNotReadOnly, len(tree.Statements))
	}
	var node any
	if err := json.Unmarshal(tree.Statements[0], &node); err != nil {
		return c, fmt.Errorf("views: parse the statement: %w", err)
	}
	c.names = map[string]bool{}
	return c, walkParse(node, &c)
}

// walkParse collects the tables v names into c and refuses a function the
// sandbox does not allow.
func walkParse(v any, c *checked) error {
	switch v := v.(type) {
	case map[string]any:
		switch v["type"] {
		case "BASE_TABLE":
			schemaName, _ := v["schema_name"].(string)
			table, _ := v["table_name"].(string)
			c.names[schemaName+"."+table] = true
		}
		// Every call (scalar, aggregate, window, table function) carries
		// its function_name.
		if name, ok := v["function_name"].(string); ok {
			if err := checkFunction(strings.ToLower(name)); err != nil {
				return err
			}
		}
		for _, child := range v {
			if err := walkParse(child, c); err != nil {
				return err
			}
		}
	case []any:
		for _, child := range v {
			if err := walkParse(child, c); err != nil {
				return err
			}
		}
	}
	return nil
}
