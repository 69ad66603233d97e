package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/dbtrail/dbtrail/internal/dsn"
	"github.com/dbtrail/dbtrail/internal/target"
	"github.com/dbtrail/dbtrail/payload"
)

// endpointOf turns an ad-hoc DSN flag into what a restore's worker
// connects with: the DSN without its password (held to the targets' DSN
// rule, dsn.ParseTarget), and a password file in the user's secrets folder
// (target.SecretsDir, 0600), the only place a worker takes an ad-hoc
// target's password from; a workflow's history never holds the password.
// A password on the command line is refused (dsnFlag.resolve's rule); the
// password comes from the environment's DSN or --<name>-password-file,
// copied into the secrets folder; cleanup removes that copy when the run
// has ended.
func endpointOf(value, flag, passwordFile string, fromArgs map[string]bool) (ep payload.Endpoint, addr string, cleanup func(), err error) {
	cleanup = func() {}
	cfg, err := dsn.Parse("--"+flag, value)
	if err != nil {
		return ep, "", cleanup, err
	}
	if cfg.Passwd != "" && fromArgs[flag] {
		return ep, "", cleanup, fmt.Errorf("--%s carries a password on the command line, where every user of this machine can read it; set %s in the environment or use --%s",
			flag, envName(flag), passwordFlag(flag))
	}
	pw := cfg.Passwd
	cfg.Passwd = ""
	ep.DSN = cfg.FormatDSN()
	if _, err := dsn.ParseTarget("--"+flag, ep.DSN); err != nil {
		return ep, "", cleanup, err
	}
	if passwordFile != "" {
		b, err := os.ReadFile(passwordFile)
		if err != nil {
			return ep, "", cleanup, fmt.Errorf("--%s: %w", passwordFlag(flag), err)
		}
		pw = strings.TrimRight(string(b), "\r\n")
	}
	if pw == "" {
		return ep, cfg.Addr, cleanup, nil
	}
	if ep.PasswordFile, err = target.WriteSecret(cfg.User+"@"+cfg.Addr, pw); err != nil {
		return ep, "", cleanup, fmt.Errorf("--%s: keep its password for the worker: %w", flag, err)
	}
	path := ep.PasswordFile
	return ep, cfg.Addr, func() { os.Remove(path) }, nil
}

// passwordFlag is the password file flag of a DSN flag.
func passwordFlag(flag string) string { return flag[:len(flag)-len("-dsn")] + "-password-file" }
