package target

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckSchemaAndReplace(t *testing.T) {
	open := Target{Name: "any", Server: Server{DSN: "u@tcp(h:1)/"}}
	for _, s := range []string{"shop", "Shop_Restored", "dbtrail"} {
		if err := open.CheckSchema(s); err != nil {
			t.Errorf("%s on a target with no schema list: %v", s, err)
		}
	}
	for _, s := range []string{"mysql", "SYS", "information_schema", "performance_schema"} {
		if err := open.CheckSchema(s); err == nil || !strings.Contains(err.Error(), "server's own") {
			t.Errorf("%s: %v; want refused as the server's own", s, err)
		}
	}
	narrow := Target{Name: "scratch", Server: Server{DSN: "u@tcp(h:1)/"}, Schemas: []string{"shop_restored", "dbtrail_drill_*", "dbtrail"}}
	for s, ok := range map[string]bool{"shop_restored": true, "SHOP_RESTORED": true, "dbtrail_drill_app": true, "dbtrail": true, "shop": false, "dbtrail2": false} {
		if err := narrow.CheckSchema(s); (err == nil) != ok {
			t.Errorf("%s: %v; want allowed %v", s, err, ok)
		}
	}
	if err := narrow.CheckReplace(true); err == nil || !strings.Contains(err.Error(), "does not allow --replace") {
		t.Errorf("--replace on a target without replace: %v", err)
	}
	if err := narrow.CheckReplace(false); err != nil {
		t.Error(err)
	}
}

func TestCheckRefusesBadTargets(t *testing.T) {
	for _, c := range []struct {
		t    Target
		want string
	}{
		{Target{Name: "bad name", Server: Server{DSN: "u@tcp(h:1)/"}}, "want a name"},
		{Target{Name: "x"}, "dsn is missing"},
		{Target{Name: "x", Server: Server{DSN: "u@tcp(h:1)/?allowAllFiles=true"}}, "refused"},
		{Target{Name: "x", Server: Server{DSN: "u:pw@tcp(h:1)/"}}, "password file"},
		{Target{Name: "x", Server: Server{DSN: "u@tcp(h:1)/?sql_log_bin=0"}}, "not allowed"},
		{Target{Name: "x", Server: Server{DSN: "u@tcp(h:1)/", PasswordFile: "pw"}}, "absolute"},
		{Target{Name: "x", Server: Server{DSN: "u@tcp(h:1)/"}, Replicas: []Server{{DSN: "r@tcp(h:2)/?allowCleartextPasswords=1"}}}, "replica 1"},
		{Target{Name: "x", Server: Server{DSN: "u@tcp(h:1)/"}, Schemas: []string{"[a"}}, "schema pattern"},
	} {
		if err := c.t.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want %q", c.t, err, c.want)
		}
	}
}

func TestSetGetAndLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "targets.json")
	text := `{"targets": [{"name": "scratch", "dsn": "dba@tcp(db9:3306)/", "password_file": "/etc/dbtrail/pw", "schemas": ["shop_*"], "replace": true,
	  "replicas": [{"dsn": "dba@tcp(db10:3306)/"}], "throttle_query": "SELECT 0"}]}`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a targets file others may read: %v", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Get("scratch")
	if err != nil || got.PasswordFile != "/etc/dbtrail/pw" || !got.Replace || len(got.Replicas) != 1 || got.ThrottleQuery != "SELECT 0" {
		t.Fatalf("scratch: %+v %v", got, err)
	}
	if _, err := s.Get("prod"); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "it knows scratch") {
		t.Fatalf("an unknown name: %v", err)
	}
	var none *Set
	if _, err := none.Get("x"); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "none is configured") {
		t.Fatalf("no targets: %v", err)
	}
	b, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(b, "marshalled")
	if err != nil || len(back.All()) != 1 {
		t.Fatalf("round trip: %v", err)
	}
	for bad, want := range map[string]string{
		`{"targets": [{"name": "a", "dsn": "u@tcp(h:1)/", "dsn_extra": 1}]}`:                      "unknown field",
		`{"targets": [{"name": "a", "dsn": "u@tcp(h:1)/"}, {"name": "a", "dsn": "u@tcp(h:2)/"}]}`: "configured twice",
	} {
		if _, err := Parse([]byte(bad), "f"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", bad, err, want)
		}
	}
}

func TestSameIdentity(t *testing.T) {
	a := Identity{ServerID: 1, Hostname: "db1", Port: 3306, GTIDDomain: "0"}
	if !a.Same(a) {
		t.Fatal("an identity is not itself")
	}
	for _, b := range []Identity{{ServerID: 2, Hostname: "db1", Port: 3306, GTIDDomain: "0"}, {ServerID: 1, Hostname: "db2", Port: 3306, GTIDDomain: "0"},
		{ServerID: 1, Hostname: "db1", Port: 3307, GTIDDomain: "0"}} {
		if a.Same(b) {
			t.Errorf("%v and %v are the same", a, b)
		}
	}
	u1, u2 := Identity{UUID: "u1", Port: 1}, Identity{UUID: "u1", Port: 2}
	if !u1.Same(u2) || u1.Same(Identity{UUID: "u2", Port: 1}) {
		t.Error("server_uuid decides where both have one")
	}
}

func TestCheckSecretFile(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "restore-1")
	if err := os.WriteFile(ok, []byte("pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CheckSecretFile(dir, ok); err != nil {
		t.Fatal(err)
	}
	wide := filepath.Join(dir, "restore-2")
	if err := os.WriteFile(wide, []byte("pw\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "restore-3")
	if err := os.Symlink("/proc/self/environ", link); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{"/proc/self/environ": "must be in", filepath.Join(dir, "..", filepath.Base(dir), "..", "x"): "must be in",
		wide: "mode 0600", link: "regular file", filepath.Join(dir, "gone"): "no such file"} {
		if err := CheckSecretFile(dir, file); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", file, err, want)
		}
	}
	if err := CheckSecretFile("", ok); err == nil {
		t.Error("no secrets folder: accepted")
	}
}
