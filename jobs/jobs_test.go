package jobs

import (
	"strings"
	"testing"
	"time"
)

func TestDefaultLabelIsAValidLabel(t *testing.T) {
	at := time.Date(2026, 11, 29, 8, 15, 0, 250_000_000, time.FixedZone("x", 3600))
	l := DefaultLabel(Backup, at)
	if l != "backup-20261129T071500.250Z" {
		t.Fatalf("DefaultLabel = %q", l)
	}
	if err := CheckName("label", l); err != nil {
		t.Fatal(err)
	}
	if DefaultLabel(Backup, at.Add(time.Millisecond)) == l {
		t.Fatal("two labels a millisecond apart are equal")
	}
}

func TestCheckNameRefuses(t *testing.T) {
	for _, n := range []string{"", "a:b", "../x", "a/b", "a'b", "-x", strings.Repeat("x", 65), "a b"} {
		if CheckName("label", n) == nil {
			t.Errorf("%q accepted", n)
		}
	}
}

func TestFilterQuery(t *testing.T) {
	q, err := Filter{Kind: Export, State: Failed, Label: "x1", Source: "main"}.query()
	if err != nil {
		t.Fatal(err)
	}
	want := "WorkflowType = 'Export' AND ExecutionStatus = 'Failed' AND DbtrailLabel = 'x1' AND DbtrailSource = 'main'"
	if q != want {
		t.Fatalf("query %q, want %q", q, want)
	}
	if _, err := (Filter{Label: "x' OR 1=1"}).query(); err == nil {
		t.Fatal("a label with a quote made a query")
	}
}
