// Package shell is the SQL shell of `dbtrail query`: statements split at
// their semicolons, run one by one on a views session (RunScript) or read
// from a terminal or a script (Shell), and their results written as an
// aligned table, CSV or JSON (Result) with every value as its text; the
// API's query answers encode their rows with the same JSON (AppendJSON).
package shell

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"

	"github.com/dbtrail/dbtrail/internal/views"
)

// Prompts of the interactive shell.
const (
	promptFirst = "dbtrail> "
	promptMore  = "     ...> "
)

const shellHelp = `Statements end with ';' and may span lines. Only read statements run.
  .tables               list the views (schema.table)
  .schema [name]        columns and types of every view, or of name (table or schema.table)
  .format table|csv|json  output format
  .help                 this text
  .quit, .exit          leave (so does Ctrl-D)
Ctrl-C cancels the running statement, or the one being typed.
`

// shell is `dbtrail query` without SQL: statements from a terminal (with
// prompts) or from standard input (a script).
type Shell struct {
	Session     *views.Session
	Format      string
	Out, ErrOut io.Writer
	SourceDir   string // the source folder, for the cut line
	interactive bool
	failed      bool // a statement of a script failed
}

// line is one line read from the input, or its end.
type line struct {
	text string
	err  error // io.EOF at the end
}

// run reads statements until .quit or the end of in. On a terminal, Ctrl-C
// cancels the running statement (or clears the one being typed) and the
// shell goes on; an error is printed and the shell goes on. From a script
// every statement runs, and the shell fails when one did. ctx ending (a
// SIGTERM) ends the shell.
func (sh *Shell) Run(ctx context.Context, in io.Reader) error {
	sh.interactive = IsTerminal(in)
	interrupts := make(chan os.Signal, 1)
	if sh.interactive {
		// Ctrl-C belongs to the shell, not to the process-wide context set
		// up in main (which still ends on SIGTERM).
		signal.Reset(os.Interrupt)
		signal.Notify(interrupts, os.Interrupt)
		defer signal.Stop(interrupts)
		fmt.Fprintf(sh.ErrOut, "dbtrail query: snapshot %s, %d tables (.tables lists them, .help for help)\n",
			sh.Session.Snapshot(), len(sh.Session.Tables()))
	}
	lines := make(chan line)
	go readLines(in, lines)
	var buf strings.Builder
	for {
		sh.prompt(buf.Len() > 0)
		var l line
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-interrupts:
			buf.Reset()
			fmt.Fprintln(sh.Out)
			continue
		case l = <-lines:
		}
		if l.err != nil {
			if _, rest, pending := SplitStatements(buf.String()); pending {
				sh.runAll(ctx, interrupts, []string{strings.TrimSpace(rest)})
			}
			if sh.interactive {
				fmt.Fprintln(sh.Out)
			}
			return sh.result(l.err)
		}
		if buf.Len() == 0 && strings.HasPrefix(strings.TrimSpace(l.text), ".") {
			if quit := sh.command(ctx, strings.Fields(l.text)); quit {
				return sh.result(io.EOF)
			}
			continue
		}
		buf.WriteString(l.text)
		buf.WriteByte('\n')
		stmts, rest, pending := SplitStatements(buf.String())
		sh.runAll(ctx, interrupts, stmts)
		buf.Reset()
		if pending {
			buf.WriteString(strings.TrimLeft(rest, " \t\r\n"))
		}
	}
}

// result is what run returns at the end of its input.
func (sh *Shell) result(err error) error {
	switch {
	case !errors.Is(err, io.EOF):
		return fmt.Errorf("read statements: %w", err)
	case sh.failed && !sh.interactive:
		return errors.New("a statement failed")
	}
	return nil
}

// readLines sends each line of in (without its newline) to lines, then the
// error that ended it.
func readLines(in io.Reader, lines chan<- line) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		lines <- line{text: sc.Text()}
	}
	err := sc.Err()
	if err == nil {
		err = io.EOF
	}
	lines <- line{err: err}
}

func (sh *Shell) prompt(more bool) {
	if !sh.interactive {
		return
	}
	if more {
		fmt.Fprint(sh.Out, promptMore)
	} else {
		fmt.Fprint(sh.Out, promptFirst)
	}
}

// runAll runs stmts in order, each cancelled by an interrupt; an error is
// printed and the next statement runs.
func (sh *Shell) runAll(ctx context.Context, interrupts <-chan os.Signal, stmts []string) {
	for _, stmt := range stmts {
		sctx, cancel := context.WithCancel(ctx)
		stop := make(chan struct{})
		go func() {
			select {
			case <-interrupts:
				cancel()
			case <-stop:
			}
		}()
		err := sh.statement(sctx, stmt)
		interrupted := sctx.Err() != nil && ctx.Err() == nil
		close(stop)
		cancel()
		switch {
		case err != nil && interrupted:
			sh.failed = true
			fmt.Fprintln(sh.ErrOut, "Error: interrupted")
		case err != nil:
			sh.failed = true
			fmt.Fprintln(sh.ErrOut, "Error:", err)
		}
	}
}

// statement reloads the views when current moved to another shape, then
// runs stmt.
func (sh *Shell) statement(ctx context.Context, stmt string) error {
	changed, err := sh.Session.Reload(ctx)
	if err != nil {
		return err
	}
	if changed {
		fmt.Fprintf(sh.ErrOut, "(views reloaded: snapshot %s has other tables or columns)\n", sh.Session.Snapshot())
	}
	if sh.Session.Tail() != nil {
		fmt.Fprintln(sh.ErrOut, CutNote(sh.Session, sh.SourceDir))
	}
	return runStatement(ctx, sh.Session, stmt, sh.Format, sh.Out)
}

// command runs a dot command and reports whether it is .quit or .exit.
func (sh *Shell) command(ctx context.Context, f []string) (quit bool) {
	switch f[0] {
	case ".quit", ".exit":
		return true
	case ".help":
		fmt.Fprint(sh.Out, shellHelp)
	case ".tables":
		sh.reload(ctx)
		for _, t := range sh.Session.Tables() {
			fmt.Fprintln(sh.Out, qualified(t))
		}
	case ".schema":
		sh.reload(ctx)
		if err := sh.schema(ctx, f[1:]); err != nil {
			sh.failed = true
			fmt.Fprintln(sh.ErrOut, "Error:", err)
		}
	case ".format":
		if len(f) != 2 || CheckFormat(f[1]) != nil {
			fmt.Fprintln(sh.ErrOut, "Error: usage: .format table|csv|json")
			sh.failed = true
			return false
		}
		sh.Format = f[1]
	default:
		fmt.Fprintf(sh.ErrOut, "Error: unknown command %s (.help lists them)\n", f[0])
		sh.failed = true
	}
	return false
}

// reload reloads the views before a dot command, reporting a failure.
func (sh *Shell) reload(ctx context.Context) {
	if _, err := sh.Session.Reload(ctx); err != nil {
		fmt.Fprintln(sh.ErrOut, "Error:", err)
	}
}

// schema prints the columns and DuckDB types of the views named (a table,
// or schema.table), or of all.
func (sh *Shell) schema(ctx context.Context, names []string) error {
	if len(names) > 1 {
		return errors.New("usage: .schema [table | schema.table]")
	}
	var match []views.TableRef
	for _, t := range sh.Session.Tables() {
		if len(names) == 0 || names[0] == t.Table || names[0] == qualified(t) {
			match = append(match, t)
		}
	}
	if len(match) == 0 {
		return fmt.Errorf("no view %s (.tables lists them)", names[0])
	}
	for i, t := range match {
		if i > 0 {
			fmt.Fprintln(sh.Out)
		}
		fmt.Fprintln(sh.Out, qualified(t))
		if err := sh.describe(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// describe prints "  column  TYPE" for each column of t's view.
func (sh *Shell) describe(ctx context.Context, t views.TableRef) error {
	rows, _, err := sh.Session.Query(ctx, "SELECT column_name, column_type FROM (DESCRIBE "+quoteIdent(t.Schema)+"."+quoteIdent(t.Table)+")")
	if err != nil {
		return err
	}
	defer rows.Close()
	var cols [][2]string
	width := 0
	for rows.Next() {
		var c [2]string
		if err := rows.Scan(&c[0], &c[1]); err != nil {
			return err
		}
		cols = append(cols, c)
		width = max(width, displayWidth(c[0]))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, c := range cols {
		fmt.Fprintf(sh.Out, "  %s%s  %s\n", c[0], strings.Repeat(" ", width-displayWidth(c[0])), c[1])
	}
	return nil
}

// qualified is schema.table, each part quoted when it needs to be.
func qualified(t views.TableRef) string {
	return identText(t.Schema) + "." + identText(t.Table)
}

// identText is name as it may be typed in SQL: bare when it is a plain
// lower-case identifier, quoted otherwise.
func identText(name string) string {
	if name != "" && !slices.ContainsFunc([]byte(name), func(c byte) bool {
		return !(c == '_' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9')
	}) && (name[0] < '0' || name[0] > '9') {
		return name
	}
	return quoteIdent(name)
}

// quoteIdent quotes a DuckDB identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
