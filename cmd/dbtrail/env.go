package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dbtrail/dbtrail/internal/dsn"
)

// envName is the environment variable that sets a flag: DBTRAIL_ and the
// flag's name in upper case with dashes as underscores.
func envName(flag string) string {
	return "DBTRAIL_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// applyEnv sets every flag not given on the command line from its DBTRAIL_*
// variable. It returns the names of flags given on the command line.
func applyEnv(cmd *cobra.Command) (fromArgs map[string]bool, err error) {
	fromArgs = map[string]bool{}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err != nil {
			return
		}
		if f.Changed {
			fromArgs[f.Name] = true
			return
		}
		v, ok := os.LookupEnv(envName(f.Name))
		if !ok {
			return
		}
		if e := cmd.Flags().Set(f.Name, v); e != nil {
			err = fmt.Errorf("environment variable %s: %w", envName(f.Name), e)
		}
	})
	return fromArgs, err
}

// dsnFlag is a DSN flag with its companion password file flag. A password
// must not be given on the command line, where any user can read it in the
// process list.
type dsnFlag struct {
	name         string // e.g. "source-dsn"
	value        string
	passwordFile string
}

func (d *dsnFlag) register(fs *pflag.FlagSet, what string) {
	fs.StringVar(&d.value, d.name, "", fmt.Sprintf("%s DSN, user:@tcp(host:port)/ (go-sql-driver syntax); put the password in %s or --%s-password-file, never on the command line", what, envName(d.name), strings.TrimSuffix(d.name, "-dsn")))
	fs.StringVar(&d.passwordFile, strings.TrimSuffix(d.name, "-dsn")+"-password-file", "", fmt.Sprintf("file holding the %s password", what))
}

// resolve returns the DSN with the password from the password file, and
// refuses a password that came on the command line.
func (d *dsnFlag) resolve(fromArgs map[string]bool) (string, error) {
	if d.value == "" {
		return "", fmt.Errorf("--%s (or %s) is required", d.name, envName(d.name))
	}
	what := "--" + d.name
	if !fromArgs[d.name] {
		what = envName(d.name)
	}
	cfg, err := dsn.Parse(what, d.value)
	if err != nil {
		return "", err
	}
	if cfg.Passwd != "" && fromArgs[d.name] {
		return "", fmt.Errorf("--%s carries a password on the command line, where every user of this machine can read it; set %s in the environment or use --%s-password-file",
			d.name, envName(d.name), strings.TrimSuffix(d.name, "-dsn"))
	}
	if d.passwordFile != "" {
		b, err := os.ReadFile(d.passwordFile)
		if err != nil {
			return "", fmt.Errorf("read password file for --%s: %w", d.name, err)
		}
		cfg.Passwd = strings.TrimRight(string(b), "\r\n")
	}
	return cfg.FormatDSN(), nil
}
