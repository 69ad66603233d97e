package activities

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/dbtrail/dbtrail/internal/target"
	"github.com/dbtrail/dbtrail/payload"
)

// TestResolveTargetRefusals: a restore names a target the worker knows;
// nothing a caller passes makes the worker use another server, file or
// query. Every refusal is ErrTargetRefused, before anything connects.
func TestResolveTargetRefusals(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "restore-abc")
	if err := os.WriteFile(secret, []byte("pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	set, err := target.NewSet(target.Target{Name: "scratch", Server: target.Server{DSN: "u@tcp(127.0.0.1:1)/"}})
	if err != nil {
		t.Fatal(err)
	}
	named := &Activities{Targets: set}
	adHoc := &Activities{Targets: set, AdHocTargets: true, AdHocSecrets: dir}
	attack := &payload.Endpoint{DSN: "x@tcp(127.0.0.1:9)/?allowAllFiles=true&allowCleartextPasswords=true", PasswordFile: "/proc/self/environ"}
	for _, c := range []struct {
		name string
		a    *Activities
		sp   payload.RestoreSpec
		want string
	}{
		{"unknown name", named, payload.RestoreSpec{Target: payload.TargetRef{Name: "prod"}}, `"prod": this worker does not know it (it knows scratch)`},
		{"no targets", &Activities{}, payload.RestoreSpec{Target: payload.TargetRef{Name: "scratch"}}, "none is configured"},
		{"ad-hoc off", named, payload.RestoreSpec{Target: payload.TargetRef{AdHoc: &payload.Endpoint{DSN: "u@tcp(127.0.0.1:9)/"}}}, "ad-hoc"},
		{"the issue's DSN, ad-hoc off", named, payload.RestoreSpec{Target: payload.TargetRef{AdHoc: attack}}, "ad-hoc"},
		{"the issue's DSN, ad-hoc on", adHoc, payload.RestoreSpec{Target: payload.TargetRef{AdHoc: attack}}, "refused"},
		{"environ as password", adHoc, payload.RestoreSpec{Target: payload.TargetRef{AdHoc: &payload.Endpoint{DSN: "u@tcp(127.0.0.1:9)/", PasswordFile: "/proc/self/environ"}}}, "must be in"},
		{"session variable", adHoc, payload.RestoreSpec{Target: payload.TargetRef{AdHoc: &payload.Endpoint{DSN: "u@tcp(127.0.0.1:9)/?sql_log_bin=0"}}}, "not allowed"},
		{"replica of a named target", named, payload.RestoreSpec{Target: payload.TargetRef{Name: "scratch"}, Replicas: []payload.Endpoint{{DSN: "u@tcp(127.0.0.1:9)/"}}}, "configuration"},
		{"throttle query of a named target", named, payload.RestoreSpec{Target: payload.TargetRef{Name: "scratch"}, ThrottleQuery: "SELECT LOAD_FILE('/etc/passwd')"}, "configuration"},
		{"replica password outside", adHoc, payload.RestoreSpec{Target: payload.TargetRef{AdHoc: &payload.Endpoint{DSN: "u@tcp(127.0.0.1:9)/", PasswordFile: secret}},
			Replicas: []payload.Endpoint{{DSN: "u@tcp(127.0.0.1:8)/", PasswordFile: "/etc/shadow"}}}, "must be in"},
	} {
		_, err := c.a.resolveTarget(c.sp)
		var app *temporal.ApplicationError
		if err == nil || !errors.As(err, &app) || app.Type() != ErrTargetRefused || !app.NonRetryable() || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want a non-retryable %s with %q", c.name, err, ErrTargetRefused, c.want)
		}
	}
	got, err := adHoc.resolveTarget(payload.RestoreSpec{Target: payload.TargetRef{AdHoc: &payload.Endpoint{DSN: "u@tcp(127.0.0.1:9)/?tls=true", PasswordFile: secret}}})
	if err != nil || got.PasswordFile != secret {
		t.Fatalf("an ad-hoc target with its password in the secrets folder: %+v %v", got, err)
	}
	if got, err := named.resolveTarget(payload.RestoreSpec{Target: payload.TargetRef{Name: "scratch"}}); err != nil || got.Name != "scratch" {
		t.Fatalf("the named target: %+v %v", got, err)
	}
}

// TestTargetRefJSON: a name is a JSON string, an ad-hoc endpoint an
// object, the form every restore's history had before targets were named.
func TestTargetRefJSON(t *testing.T) {
	for text, want := range map[string]payload.TargetRef{
		`"scratch"`: {Name: "scratch"},
		`{"DSN":"u@tcp(h:1)/","PasswordFile":"/p"}`: {AdHoc: &payload.Endpoint{DSN: "u@tcp(h:1)/", PasswordFile: "/p"}},
		`null`: {},
	} {
		var got payload.TargetRef
		if err := got.UnmarshalJSON([]byte(text)); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if got.Name != want.Name || (got.AdHoc == nil) != (want.AdHoc == nil) || got.AdHoc != nil && *got.AdHoc != *want.AdHoc {
			t.Errorf("%s: %+v, want %+v", text, got, want)
		}
		if text == "null" {
			continue
		}
		back, err := got.MarshalJSON()
		if err != nil || string(back) != text {
			t.Errorf("%s: marshalled back as %s (%v)", text, back, err)
		}
	}
}
