package filemode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]Policy{"private": Private, "0600": Private, "600": Private, "group": Group, "0640": Group, "640": Group} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0644", "0755", "world", "0660", "Group", "0700"} {
		if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), Allowed) {
			t.Errorf("Parse(%q) = %v, want a refusal naming %q", in, err, Allowed)
		}
	}
	var p Policy
	if err := p.Set("0640"); err != nil || p != Group || p.String() != "group" {
		t.Errorf("Set(0640): %v, %v", p, err)
	}
	if err := p.Set("0644"); err == nil || p != Group {
		t.Errorf("Set(0644) = %v, left %v: want a refusal that leaves the value", err, p)
	}
}

func TestModes(t *testing.T) {
	for _, c := range []struct {
		p          Policy
		file, dir  os.FileMode
		umask      int
		othersBits os.FileMode
	}{{Private, 0o600, 0o700, 0o077, 0o077}, {Group, 0o640, 0o750, 0o027, 0o027}} {
		if c.p.File() != c.file || c.p.Dir() != c.dir || c.p.Umask() != c.umask {
			t.Errorf("%v: file %o dir %o umask %o; want %o %o %o", c.p, c.p.File(), c.p.Dir(), c.p.Umask(), c.file, c.dir, c.umask)
		}
		// What a child creates with 0666/0777 under the umask is what
		// dbtrail's own writers use.
		if 0o666&^os.FileMode(c.umask) != c.file || 0o777&^os.FileMode(c.umask) != c.dir {
			t.Errorf("%v: umask %o makes %o/%o", c.p, c.umask, 0o666&^os.FileMode(c.umask), 0o777&^os.FileMode(c.umask))
		}
		if c.file&0o007 != 0 || c.dir&0o007 != 0 {
			t.Errorf("%v lets others in", c.p)
		}
	}
}

// TestApplyUmask: after Apply, what the process creates with the usual
// 0666/0777 (as DuckDB and children do) follows the policy.
func TestApplyUmask(t *testing.T) {
	old, oldMask := Current(), umask(0)
	umask(oldMask)
	t.Cleanup(func() { current.Store(int32(old)); umask(oldMask) })
	for _, p := range []Policy{Group, Private} {
		Apply(p)
		if File() != p.File() || Dir() != p.Dir() {
			t.Fatalf("after Apply(%v): File %o Dir %o", p, File(), Dir())
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "f"), nil, 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(dir, "d"), 0o777); err != nil {
			t.Fatal(err)
		}
		f, err := Create(filepath.Join(dir, "c"))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		for name, want := range map[string]os.FileMode{"f": p.File(), "d": p.Dir(), "c": p.File()} {
			if got := mode(t, filepath.Join(dir, name)); got != want {
				t.Errorf("%v: %s is %o, want %o", p, name, got, want)
			}
		}
	}
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

func chmod(t *testing.T, path string, m os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, m); err != nil {
		t.Fatal(err)
	}
}

// TestTighten: files and folders lose exactly the bits the policy does not
// allow (bits it allows and lacks are not added), the count says what
// changed, a second run changes nothing, and a symbolic link under the
// root, to a file or a folder outside it, is neither changed nor walked
// through.
func TestTighten(t *testing.T) {
	for _, p := range []Policy{Private, Group} {
		t.Run(p.String(), func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "backups")
			sub := filepath.Join(root, "main", "snapshots")
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			outside := t.TempDir()
			outFile := filepath.Join(outside, "secret")
			if err := os.WriteFile(outFile, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			outDir := filepath.Join(outside, "dir")
			if err := os.Mkdir(outDir, 0o755); err != nil {
				t.Fatal(err)
			}
			inOutDir := filepath.Join(outDir, "f")
			if err := os.WriteFile(inOutDir, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			chmod(t, outFile, 0o644)
			chmod(t, outDir, 0o755)
			chmod(t, inOutDir, 0o666)
			files := map[string]os.FileMode{"a.parquet": 0o644, "b": 0o666, "ro": 0o400, "ok": 0o600, "gw": 0o620}
			for name, m := range files {
				path := filepath.Join(sub, name)
				if err := os.WriteFile(path, nil, 0o600); err != nil {
					t.Fatal(err)
				}
				chmod(t, path, m)
			}
			chmod(t, root, 0o777)
			chmod(t, filepath.Join(root, "main"), 0o755)
			chmod(t, sub, os.ModeSetgid|0o775) // setgid, as a group-owned tree has
			must(t, os.Symlink(outFile, filepath.Join(sub, "link-file")))
			must(t, os.Symlink(outDir, filepath.Join(sub, "link-dir")))

			got, err := Tighten(root, p)
			if err != nil {
				t.Fatal(err)
			}
			wantFiles := 0
			for name, m := range files {
				want := m & p.File()
				if want != m {
					wantFiles++
				}
				if g := mode(t, filepath.Join(sub, name)); g != want {
					t.Errorf("%s: %o, want %o", name, g, want)
				}
			}
			if got.Files != wantFiles || got.Dirs != 3 {
				t.Errorf("Tighten = %+v, want %d files and 3 folders", got, wantFiles)
			}
			for _, d := range []string{root, filepath.Join(root, "main")} {
				if g := mode(t, d); g != p.Dir() {
					t.Errorf("%s: %o, want %o", d, g, p.Dir())
				}
			}
			info, err := os.Lstat(sub)
			must(t, err)
			if info.Mode()&os.ModeSetgid == 0 || info.Mode().Perm() != p.Dir() {
				t.Errorf("snapshots: %v, want setgid and %o", info.Mode(), p.Dir())
			}
			// The links were not followed: their targets are untouched.
			for path, want := range map[string]os.FileMode{outFile: 0o644, outDir: 0o755, inOutDir: 0o666} {
				if g := mode(t, path); g != want {
					t.Errorf("%s (behind a link) became %o, want %o untouched", path, g, want)
				}
			}
			again, err := Tighten(root, p)
			if err != nil || again.Any() {
				t.Errorf("a second Tighten = %+v, %v; want nothing changed", again, err)
			}
		})
	}
}

// TestTightenRootLink: a root that is a link is followed (the operator
// named it); a missing root is nothing to do.
func TestTightenRootLink(t *testing.T) {
	real := t.TempDir()
	chmod(t, real, 0o755)
	link := filepath.Join(t.TempDir(), "backups")
	must(t, os.Symlink(real, link))
	got, err := Tighten(link, Private)
	if err != nil || got.Dirs != 1 || mode(t, real) != 0o700 {
		t.Errorf("Tighten(link) = %+v, %v; folder %o", got, err, mode(t, real))
	}
	got, err = Tighten(filepath.Join(real, "missing"), Private)
	if err != nil || got.Any() {
		t.Errorf("Tighten(missing) = %+v, %v", got, err)
	}
}

func TestOpenToOthers(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		m            os.FileMode
		priv, groupP bool
	}{{0o700, false, false}, {0o750, true, false}, {0o710, true, false}, {0o755, true, true}, {0o701, true, true}} {
		chmod(t, dir, c.m)
		for p, want := range map[Policy]bool{Private: c.priv, Group: c.groupP} {
			if got, err := OpenToOthers(dir, p); err != nil || got != want {
				t.Errorf("%o under %v: %v, %v; want %v", c.m, p, got, err, want)
			}
		}
	}
	if _, err := OpenToOthers(filepath.Join(dir, "missing"), Private); err == nil {
		t.Error("a missing folder: no error")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
