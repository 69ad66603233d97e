package api

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"

	"github.com/dbtrail/dbtrail/internal/filemode"
)

// MinTokenLength is the shortest secret a token may have.
const MinTokenLength = 20

// Token is one bearer token: read-only tokens may only GET (and ask a
// read-only question, POST /v1/query); read-write ones may start and
// cancel jobs.
type Token struct {
	// Name identifies the token in logs (never the secret): its name in the
	// token file, else "token-<line>".
	Name  string
	Write bool
	// sum is the SHA-256 of the secret: compared in constant time, every
	// token every time, so neither a secret nor its length leaks through
	// timing.
	sum [sha256.Size]byte
}

// ParseTokens reads tokens, one per line: "ro SECRET [NAME]" or
// "rw SECRET [NAME]"; blank lines and lines starting with '#' are skipped.
// what names the text in errors (a file name, an environment variable).
// A secret shorter than MinTokenLength, a duplicate secret or an unknown
// mode is refused, naming the line (never the secret).
func ParseTokens(text, what string) ([]Token, error) {
	var out []Token
	seen := map[[sha256.Size]byte]bool{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 || len(f) > 3 {
			return nil, fmt.Errorf("%s line %d: want \"ro SECRET [NAME]\" or \"rw SECRET [NAME]\"", what, n)
		}
		t := Token{Name: fmt.Sprintf("token-%d", n)}
		switch f[0] {
		case "ro":
		case "rw":
			t.Write = true
		default:
			return nil, fmt.Errorf("%s line %d: mode %q: want ro or rw", what, n, f[0])
		}
		if len(f[1]) < MinTokenLength {
			return nil, fmt.Errorf("%s line %d: the secret is shorter than %d characters", what, n, MinTokenLength)
		}
		if len(f) == 3 {
			t.Name = f[2]
		}
		t.sum = sha256.Sum256([]byte(f[1]))
		if seen[t.sum] {
			return nil, fmt.Errorf("%s line %d: the same secret is given twice", what, n)
		}
		seen[t.sum] = true
		out = append(out, t)
	}
	return out, sc.Err()
}

// LoadTokens reads the token file path (ParseTokens). A file others may
// read (group or world permission bits) is refused: it holds secrets.
func LoadTokens(path string) ([]Token, error) {
	b, err := filemode.ReadPrivate(path, "token file")
	if err != nil {
		return nil, err
	}
	toks, err := ParseTokens(string(b), "token file "+path)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("token file %s holds no token", path)
	}
	return toks, nil
}

// authenticate returns the token r's "Authorization: Bearer" header
// carries, comparing it with every token in constant time.
func authenticate(tokens []Token, r *http.Request) (Token, *Error) {
	h := r.Header.Get("Authorization")
	secret, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || secret == "" {
		return Token{}, &Error{Status: http.StatusUnauthorized, Code: CodeUnauthorized,
			Message: "this API needs a bearer token: Authorization: Bearer <token>"}
	}
	tok, ok := Authenticate(tokens, secret)
	if !ok {
		return Token{}, &Error{Status: http.StatusUnauthorized, Code: CodeUnauthorized, Message: "the bearer token is not valid"}
	}
	return tok, nil
}

// Authenticate returns the token whose secret is secret (surrounding
// spaces ignored), comparing it with every token in constant time; ok is
// false when none is.
func Authenticate(tokens []Token, secret string) (tok Token, ok bool) {
	sum := sha256.Sum256([]byte(strings.TrimSpace(secret)))
	found := -1
	for i := range tokens {
		if subtle.ConstantTimeCompare(sum[:], tokens[i].sum[:]) == 1 {
			found = i
		}
	}
	if found < 0 || secret == "" {
		return Token{}, false
	}
	return tokens[found], true
}
