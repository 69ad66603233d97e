package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/activities"
)

// endpointOf turns a DSN flag into what a restore's worker connects with:
// the DSN without its password, and a password file the worker reads (a
// workflow's history never holds the password). A password on the command
// line is refused (dsnFlag.resolve's rule); --<name>-password-file is
// passed as its absolute path (a path on the worker's machine: dev's is
// this one); a password from the environment is written to a 0600 file in
// the user's cache folder, which cleanup removes when the run has ended.
func endpointOf(value, flag, passwordFile string, fromArgs map[string]bool) (ep activities.Endpoint, addr string, cleanup func(), err error) {
	cleanup = func() {}
	cfg, err := mysql.ParseDSN(value)
	if err != nil {
		return ep, "", cleanup, fmt.Errorf("--%s: %w", flag, err)
	}
	if cfg.Passwd != "" && fromArgs[flag] {
		return ep, "", cleanup, fmt.Errorf("--%s carries a password on the command line, where every user of this machine can read it; set %s in the environment or use --%s",
			flag, envName(flag), passwordFlag(flag))
	}
	pw := cfg.Passwd
	cfg.Passwd = ""
	ep.DSN = cfg.FormatDSN()
	switch {
	case passwordFile != "":
		if ep.PasswordFile, err = filepath.Abs(passwordFile); err != nil {
			return ep, "", cleanup, err
		}
		if _, err := os.Stat(ep.PasswordFile); err != nil {
			return ep, "", cleanup, fmt.Errorf("--%s: %w", passwordFlag(flag), err)
		}
	case pw != "":
		if ep.PasswordFile, err = secretFile(cfg.User+"@"+cfg.Addr, pw); err != nil {
			return ep, "", cleanup, fmt.Errorf("%s: keep its password for the worker: %w", envName(flag), err)
		}
		path := ep.PasswordFile
		cleanup = func() { os.Remove(path) }
	}
	return ep, cfg.Addr, cleanup, nil
}

// passwordFlag is the password file flag of a DSN flag.
func passwordFlag(flag string) string { return flag[:len(flag)-len("-dsn")] + "-password-file" }

// secretFile writes pw to a 0600 file named after who in the user's cache
// folder (created 0700) and returns its path.
func secretFile(who, pw string) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(base, "dbtrail", "secrets")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	h := sha256.Sum256([]byte(who))
	path := filepath.Join(dir, "restore-"+hex.EncodeToString(h[:8]))
	f, err := os.OpenFile(path+".tmp", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(pw + "\n"); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return path, os.Rename(path+".tmp", path)
}
