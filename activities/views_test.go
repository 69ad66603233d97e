package activities

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/views/viewstest"
)

// TestWriteViews: the activity writes views.sql after the first publish,
// leaves it alone while the shape stays, and rewrites it for a new column.
func TestWriteViews(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	a := &Activities{BackupDir: t.TempDir()}
	env.RegisterActivity(a)
	src := filepath.Join(a.BackupDir, "main")
	run := func(wrote bool) calls.WriteViewsResult {
		t.Helper()
		v, err := env.ExecuteActivity(a.WriteViews, calls.WriteViewsInput{Source: "main"})
		if err != nil {
			t.Fatal(err)
		}
		var res calls.WriteViewsResult
		if err := v.Get(&res); err != nil {
			t.Fatal(err)
		}
		if res.Wrote != wrote || res.Tables != 1 {
			t.Fatalf("WriteViews %+v, want wrote %v and 1 table", res, wrote)
		}
		return res
	}
	if _, err := env.ExecuteActivity(a.WriteViews, calls.WriteViewsInput{Source: "main"}); err == nil {
		t.Fatal("WriteViews before any publish: no error")
	}
	viewstest.Publish(t, src, viewstest.Table{Schema: "s", Create: "CREATE TABLE t (id INT PRIMARY KEY)"})
	res := run(true)
	run(false)
	viewstest.Publish(t, src, viewstest.Table{Schema: "s", Create: "CREATE TABLE t (id INT PRIMARY KEY, added DATE)"})
	run(true)
	b, err := os.ReadFile(res.Path)
	if err != nil || !strings.Contains(string(b), `TRY_CAST("added" AS DATE) AS "added"`) {
		t.Fatalf("views.sql (%v):\n%s", err, b)
	}
}
