package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestEnvSetsFlagsNotGivenOnCommandLine(t *testing.T) {
	var a, b string
	var n int
	cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
	cmd.Flags().StringVar(&a, "batch-name", "def", "")
	cmd.Flags().StringVar(&b, "other-flag", "def", "")
	cmd.Flags().IntVar(&n, "batch-rows", 1, "")
	t.Setenv("DBTRAIL_BATCH_NAME", "from-env")
	t.Setenv("DBTRAIL_OTHER_FLAG", "from-env")
	t.Setenv("DBTRAIL_BATCH_ROWS", "42")
	if err := cmd.ParseFlags([]string{"--other-flag=from-args"}); err != nil {
		t.Fatal(err)
	}
	fromArgs, err := applyEnv(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if a != "from-env" || b != "from-args" || n != 42 || !fromArgs["other-flag"] || fromArgs["batch-name"] {
		t.Fatalf("a=%q b=%q n=%d fromArgs=%v", a, b, n, fromArgs)
	}
	t.Setenv("DBTRAIL_BATCH_ROWS", "many")
	cmd.Flags().Lookup("batch-rows").Changed = false
	if _, err := applyEnv(cmd); err == nil || !strings.Contains(err.Error(), "DBTRAIL_BATCH_ROWS") {
		t.Fatalf("a bad value must name its variable, got %v", err)
	}
}

func TestPasswordNeverFromCommandLine(t *testing.T) {
	d := dsnFlag{name: "source-dsn", value: "u:secret@tcp(127.0.0.1:3306)/"}
	_, err := d.resolve(map[string]bool{"source-dsn": true})
	if err == nil || !strings.Contains(err.Error(), "DBTRAIL_SOURCE_DSN") || strings.Contains(err.Error(), "secret") {
		t.Fatalf("want a refusal naming the variable and not echoing the password, got %v", err)
	}
	dsn, err := d.resolve(map[string]bool{})
	if err != nil || !strings.Contains(dsn, "secret") {
		t.Fatalf("a password from the environment is accepted: %q %v", dsn, err)
	}
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte("filepass\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d = dsnFlag{name: "source-dsn", value: "u@tcp(127.0.0.1:3306)/", passwordFile: pw}
	dsn, err = d.resolve(map[string]bool{"source-dsn": true})
	if err != nil || !strings.Contains(dsn, "u:filepass@") {
		t.Fatalf("password file: %q %v", dsn, err)
	}
}
