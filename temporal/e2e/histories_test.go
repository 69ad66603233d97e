package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/dbtrail/dbtrail/workers"
)

// historiesDir holds the stored workflow histories, one folder per release
// (docs/workflows.md#replaying-stored-histories): histories/<release>/<workflow>-<case>.json.
// They are never edited or deleted; TestRecordHistories adds a release.
const historiesDir = "testdata/histories"

// storedHistories lists every stored history file, sorted.
func storedHistories(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(historiesDir, "*", "*.json"))
	must(t, err)
	return files
}

// newReplayer is a replayer with every workflow a dbtrail worker registers,
// by the worker's own registration (children included: Refresh starts
// FullBackup and Compact).
func newReplayer() worker.WorkflowReplayer {
	r := worker.NewWorkflowReplayer()
	workers.RegisterWorkflows(r)
	return r
}

// TestReplayStoredHistories replays every stored history (this release's and
// every earlier one's) against the current workflow code: a change that is
// not deterministic for an old history fails here, naming its file, and must
// go behind workflow.GetVersion. No servers are needed.
func TestReplayStoredHistories(t *testing.T) {
	files := storedHistories(t)
	if len(files) == 0 {
		t.Fatalf("no histories under %s: the replay test would check nothing", historiesDir)
	}
	for _, f := range files {
		rel, _ := filepath.Rel(historiesDir, f)
		t.Run(rel, func(t *testing.T) {
			checkHistoryFile(t, f)
			if err := newReplayer().ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
				t.Fatalf("replay %s: %v", f, err)
			}
		})
	}
}

// secretShapes match what a workflow input or result must never carry,
// whoever configured it: a go-sql-driver DSN with a password, an AWS
// access key id, a bearer token, and a JSON field named like a secret with
// a value ("Password", "SecretAccessKey", "APIKey", "AccessToken", …; a
// "PasswordFile" names a file and is allowed, and so is a session's
// recreate "Token", which is no credential).
var secretShapes = []struct {
	what string
	re   *regexp.Regexp
}{
	{"a DSN with a password", regexp.MustCompile(`[^\s"/:@]+:[^\s"@]+@(tcp|unix)\(`)},
	{"an AWS access key id", regexp.MustCompile(`\b(AKIA|ASIA)[0-9A-Z]{16}\b`)},
	{"a bearer token", regexp.MustCompile(`(?i)bearer\s+[A-Za-z0-9._~+/=-]{8,}`)},
	{"a secret-named field", regexp.MustCompile(`(?i)"[a-z_]*(password|passwd|secret|secretkey|secret_?access_?key|access_?token|auth_?token|api_?token|api_?key)"\s*:\s*"[^"]+"`)},
}

// checkHistoryFile requires f to be a history the SDK reads, of at least a
// start and an end, whose text and payloads (decoded) hold none of the
// secretShapes and none of secrets (the exact passwords, DSNs, tokens and
// keys the test configured). A failure names the file and the kind of
// secret, never the secret.
func checkHistoryFile(t *testing.T, f string, secrets ...string) {
	t.Helper()
	for i, s := range secrets {
		if len(s) < 8 {
			t.Fatalf("secret %d to look for is too short to search for (%d characters)", i, len(s))
		}
	}
	if found := findSecret(historyText(t, f), secrets); found != "" {
		t.Fatalf("%s holds %s", f, found)
	}
}

// findSecret says what secret text holds (secretShapes, or one of
// secrets, by its index), or "" when none. It never quotes a whole secret.
func findSecret(text string, secrets []string) string {
	for _, s := range secretShapes {
		if m := s.re.FindString(text); m != "" {
			return fmt.Sprintf("%s (%s…)", s.what, m[:min(len(m), 12)])
		}
	}
	for i, s := range secrets {
		if strings.Contains(text, s) {
			return fmt.Sprintf("secret %d of the test's (a password, DSN, token or key)", i)
		}
	}
	return ""
}

// TestFindSecret: each kind of secret planted in a stored history's text
// is found; the history itself holds none.
func TestFindSecret(t *testing.T) {
	files := storedHistories(t)
	if len(files) == 0 {
		t.Fatal("no stored history")
	}
	text := historyText(t, files[0])
	const mine = "the-test's-own-secret-42"
	if f := findSecret(text, []string{mine}); f != "" {
		t.Fatalf("%s: %s", files[0], f)
	}
	for _, plant := range []string{
		`"DSN":"dbtrail:hunter2hunter2@tcp(127.0.0.1:3306)/"`,
		`"Key":"AKIAIOSFODNN7EXAMPLE"`,
		`"Header":"Authorization: Bearer abcdefgh12345678"`,
		`"SecretAccessKey":"wJalrXUtnFEMI"`,
		`"TargetPassword":"x"`,
		`"Note":"` + mine + `"`,
	} {
		if findSecret(text+plant, []string{mine}) == "" {
			t.Errorf("planted %s not found", plant)
		}
	}
	if f := findSecret(text+`"PasswordFile":"/run/secrets/target"`, nil); f != "" {
		t.Errorf("a password file's name taken for a secret: %s", f)
	}
}

// historyText reads a history file and returns it as JSON with every
// payload decoded (Temporal's shorthand form), to search it for secrets.
func historyText(t *testing.T, f string) string {
	t.Helper()
	r, err := os.Open(f)
	must(t, err)
	defer r.Close()
	hist, err := client.HistoryFromJSON(r, client.HistoryJSONOptions{})
	if err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	if len(hist.Events) < 3 {
		t.Fatalf("%s: %d events", f, len(hist.Events))
	}
	b, err := temporalproto.CustomJSONMarshalOptions{
		Metadata: map[string]any{commonpb.EnablePayloadShorthandMetadataKey: true},
	}.Marshal(hist)
	if err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	raw, err := os.ReadFile(f)
	must(t, err)
	return string(b) + "\n" + string(raw)
}
