package sqlport

import (
	"fmt"
	"net"
	"strings"

	"github.com/dbtrail/dbtrail/api"
)

// ClientLine is the mariadb command line that connects to the port at addr
// as the first token of the token file path, reading its secret from the
// file (as api.Curl does), for dev and the demo to print.
func ClientLine(addr, path string) (string, error) {
	toks, err := api.LoadTokens(path)
	if err != nil {
		return "", err
	}
	if len(toks) == 0 {
		return "", fmt.Errorf("token file %s holds no token", path)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("sql port address %s: %w", addr, err)
	}
	quoted := "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
	return fmt.Sprintf(`mariadb -h %s -P %s -u %s -p"$(awk '/^r[ow] /{print $2; exit}' %s)"`, host, port, toks[0].Name, quoted), nil
}
