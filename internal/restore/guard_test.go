package restore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/target"
)

// TestGuardRefusesSourceAndIndex: on a real MariaDB, a target that is the
// source server (by identity) is refused before anything is written; the
// index server is refused unless its configuration allows it, and then
// its index database is still refused; a target the worker does not know
// is refused without connecting.
func TestGuardRefusesSourceAndIndex(t *testing.T) {
	ctx := context.Background()
	srv, tg := testTarget(t, 84)
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte(srv.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	server := target.Server{DSN: fmt.Sprintf("%s@tcp(127.0.0.1:%d)/", srv.User, srv.Port), PasswordFile: pw}
	set, err := target.NewSet(target.Target{Name: "plain", Server: server}, target.Target{Name: "beside", Server: server, IndexServer: true})
	if err != nil {
		t.Fatal(err)
	}
	id, err := target.Identify(ctx, tg.DB)
	if err != nil {
		t.Fatal(err)
	}
	isSource := func(context.Context) (target.Identity, bool) { return id, true }
	unknown := func(context.Context) (target.Identity, bool) { return target.Identity{}, false }

	g := Guard{Targets: set, SourceIdentity: isSource}
	if _, err := g.Open(ctx, Ref{Name: "plain"}, "src"); KindOf(err) != KindTargetRefused || !strings.Contains(err.Error(), "is the source server src") {
		t.Fatalf("a target that is the source: %v", err)
	}
	g = Guard{Targets: set, SourceIdentity: unknown, Index: tg.DB, IndexDatabase: "dbtrail_index"}
	if _, err := g.Open(ctx, Ref{Name: "plain"}, "src"); KindOf(err) != KindTargetRefused || !strings.Contains(err.Error(), "index server") {
		t.Fatalf("the index server without index_server: %v", err)
	}
	op, err := g.Open(ctx, Ref{Name: "beside"}, "src")
	if err != nil || !op.Index {
		t.Fatalf("the index server with index_server: %+v %v", op, err)
	}
	defer op.DB.Close()
	if err := g.CheckSchemas(op, Options{}, "app"); err != nil {
		t.Fatalf("a scratch schema beside the index: %v", err)
	}
	if err := g.CheckSchemas(op, Options{}, "DBTRAIL_INDEX"); KindOf(err) != KindTargetRefused || !strings.Contains(err.Error(), "index database") {
		t.Fatalf("the index database: %v", err)
	}
	if _, err := g.Open(ctx, Ref{Name: "prod"}, "src"); KindOf(err) != KindTargetRefused {
		t.Fatalf("an unknown target: %v", err)
	}
	if _, err := g.Open(ctx, Ref{AdHoc: &server}, "src"); KindOf(err) != KindTargetRefused || !strings.Contains(err.Error(), "ad-hoc") {
		t.Fatalf("an ad-hoc target where they are off: %v", err)
	}
}
