package storage_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/storage"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestParseS3URL(t *testing.T) {
	cfg, err := storage.ParseS3URL("s3://bucket/some/prefix/?endpoint=http://127.0.0.1:7070&path-style=true&region=eu-west-3&credentials-file=/etc/dbtrail/s3&profile=backup&part-size=8388608")
	if err != nil {
		t.Fatal(err)
	}
	want := storage.S3Config{Bucket: "bucket", Prefix: "some/prefix", Endpoint: "http://127.0.0.1:7070", PathStyle: true,
		Region: "eu-west-3", CredentialsFile: "/etc/dbtrail/s3", Profile: "backup", PartSize: 8 << 20}
	if cfg != want {
		t.Fatalf("ParseS3URL = %+v, want %+v", cfg, want)
	}
	cfg, err = storage.ParseS3URL("s3://bucket")
	if err != nil || cfg != (storage.S3Config{Bucket: "bucket"}) {
		t.Fatalf("ParseS3URL(s3://bucket) = %+v, %v", cfg, err)
	}
	for _, c := range []struct{ url, want string }{
		{"s3://AKIA:secret@bucket/p", "credentials never go in the URL"},
		{"s3://bucket/p?access-key=AKIA", "credentials never go in the URL"},
		{"s3://bucket/p?secret_access_key=x", "credentials never go in the URL"},
		{"s3://bucket/p?sessiontoken=x", "credentials never go in the URL"},
		{"s3://bucket/p?colour=blue", "unknown parameter colour"},
		{"s3:///p", "no bucket"},
		{"s3://bucket/a/../b", "bad prefix"},
		{"s3://bucket/p?endpoint=127.0.0.1:7070", "endpoint"},
		{"s3://bucket/p?path-style=maybe", "path-style"},
		{"s3://bucket/p?part-size=1024", "part-size"},
		{"s3://bucket/p?region=a&region=b", "given 2 times"},
	} {
		_, err := storage.ParseS3URL(c.url)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseS3URL(%q) = %v, want an error with %q", c.url, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") && strings.Contains(c.url, "secret@") {
			t.Errorf("ParseS3URL(%q) error echoes the secret: %v", c.url, err)
		}
	}
}

func TestOpenLocalForms(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, u := range []string{filepath.Join(dir, "plain"), "file://" + filepath.Join(dir, "url"), "file://localhost" + filepath.Join(dir, "host")} {
		s, err := storage.Open(ctx, u, storage.Options{})
		if err != nil {
			t.Fatalf("Open(%q): %v", u, err)
		}
		l, ok := s.(*storage.Local)
		if !ok {
			t.Fatalf("Open(%q) = %T, want *storage.Local", u, s)
		}
		if st, err := os.Stat(l.Root()); err != nil || !st.IsDir() {
			t.Fatalf("Open(%q) did not create its folder: %v", u, err)
		}
	}
	file := filepath.Join(dir, "file")
	writeFile(t, file, "x")
	for _, c := range []struct{ url, want string }{
		{file, "open local store " + file},
		{"file://otherhost/srv", "host"},
		{"file:///srv?x=1", "no user or parameters"},
		{"gs://bucket/p", "unknown scheme"},
	} {
		_, err := storage.Open(ctx, c.url, storage.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%q) = %v, want an error with %q", c.url, err, c.want)
		}
	}
}
