package jobs

import (
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/converter"
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
	want := "WorkflowType IN ('Export') AND DbtrailSource IS NOT NULL AND ExecutionStatus = 'Failed' AND DbtrailLabel = 'x1' AND DbtrailSource = 'main'"
	if q != want {
		t.Fatalf("query %q, want %q", q, want)
	}
	if _, err := (Filter{Label: "x' OR 1=1"}).query(); err == nil {
		t.Fatal("a label with a quote made a query")
	}
}

// TestReindexKeepsItsOldNames: the index rebuild's kind is "reindex";
// "restore-index", its name before issue 35, still parses to it, and its
// jobs are the runs of both workflow types (Reindex, and RestoreIndex for
// runs started before the rename), in listings and in the one-at-a-time
// rule alike.
func TestReindexKeepsItsOldNames(t *testing.T) {
	for _, s := range []string{"reindex", "restore-index"} {
		if k, err := ParseKind(s); err != nil || k != Reindex {
			t.Fatalf("ParseKind(%q) = %q, %v; want reindex", s, k, err)
		}
	}
	if KindOf("RestoreIndex") != Reindex || KindOf("Reindex") != Reindex {
		t.Fatalf("KindOf: RestoreIndex %q, Reindex %q", KindOf("RestoreIndex"), KindOf("Reindex"))
	}
	q, err := Filter{Kind: Reindex}.query()
	if err != nil || !strings.Contains(q, "WorkflowType IN ('Reindex', 'RestoreIndex')") {
		t.Fatalf("query %q, %v: want both workflow types", q, err)
	}
}

// TestIsJob: a job is a workflow of a job kind's type that carries the
// source search attribute; a drill, a child without the attribute and
// another application's workflow are not.
func TestIsJob(t *testing.T) {
	src, err := converter.GetDefaultDataConverter().ToPayload("main")
	if err != nil {
		t.Fatal(err)
	}
	info := func(typ string, withSource bool) *workflowpb.WorkflowExecutionInfo {
		i := &workflowpb.WorkflowExecutionInfo{Type: &commonpb.WorkflowType{Name: typ}}
		if withSource {
			i.SearchAttributes = &commonpb.SearchAttributes{IndexedFields: map[string]*commonpb.Payload{AttrSource: src}}
		}
		return i
	}
	for _, tc := range []struct {
		typ    string
		source bool
		want   bool
	}{
		{"FullBackup", true, true},
		{"Verify", true, true},
		{"FullBackup", false, false},
		{"Compact", false, false},
		{"RestoreDrill", true, false},
		{"PaymentWorkflow", true, false},
	} {
		if got := isJob(info(tc.typ, tc.source)); got != tc.want {
			t.Errorf("%s with source %v: isJob %v, want %v", tc.typ, tc.source, got, tc.want)
		}
	}
	if q := jobQuery(""); !strings.HasPrefix(q, "WorkflowType IN ('FullBackup', 'Refresh', ") || !strings.HasSuffix(q, ") AND DbtrailSource IS NOT NULL") {
		t.Errorf("jobQuery: %s", q)
	}
}
