package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/dbtrail/dbtrail/api"
)

// SessionLifetime is how long a session lasts after its login: then the
// console asks for the token again.
const SessionLifetime = 12 * time.Hour

// maxSessions bounds the sessions kept in memory: past it, the oldest is
// dropped (its user logs in again).
const maxSessions = 10000

// session is one logged-in browser. The token's secret stays in the
// server's memory (the cookie carries a random session id only), so a
// logout ends it and a server restart ends every session.
type session struct {
	id     string
	secret string // the API token's secret; "" without tokens
	name   string // the token's name, for the page and the log
	write  bool   // a read-write token (or no tokens)
	csrf   string
	expiry time.Time
}

// sessions is the console's sessions by id.
type sessions struct {
	now  func() time.Time
	mu   sync.Mutex
	byID map[string]*session
}

func newSessions(now func() time.Time) *sessions {
	return &sessions{now: now, byID: map[string]*session{}}
}

// randomText is n random bytes, base64url.
func randomText(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (it crashes the program instead)
	return base64.RawURLEncoding.EncodeToString(b)
}

// add starts a session of tok (secret its secret; both empty without
// tokens) and returns it.
func (ss *sessions) add(secret string, tok api.Token, write bool) *session {
	s := &session{id: randomText(32), secret: secret, name: tok.Name, write: write, csrf: randomText(32),
		expiry: ss.now().Add(SessionLifetime)}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if len(ss.byID) >= maxSessions {
		ss.prune()
	}
	ss.byID[s.id] = s
	return s
}

// prune drops the expired sessions, and the oldest one when none had
// expired. The caller holds mu.
func (ss *sessions) prune() {
	now := ss.now()
	var oldest *session
	for id, s := range ss.byID {
		if now.After(s.expiry) {
			delete(ss.byID, id)
			continue
		}
		if oldest == nil || s.expiry.Before(oldest.expiry) {
			oldest = s
		}
	}
	if len(ss.byID) >= maxSessions && oldest != nil {
		delete(ss.byID, oldest.id)
	}
}

// get returns the live session id names (nil: none, or expired).
func (ss *sessions) get(id string) *session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s := ss.byID[id]
	if s == nil {
		return nil
	}
	if ss.now().After(s.expiry) {
		delete(ss.byID, id)
		return nil
	}
	return s
}

// end removes the session id.
func (ss *sessions) end(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.byID, id)
}

// cookieName is the session cookie's name: under TLS with the __Host-
// prefix (the browser keeps it only when Secure, of this host, path /).
func (c *Console) cookieName() string {
	if c.tls {
		return "__Host-dbtrail_session"
	}
	return "dbtrail_session"
}

// setCookie sets (or with s nil, clears) the session cookie.
func (c *Console) setCookie(w http.ResponseWriter, s *session) {
	ck := &http.Cookie{Name: c.cookieName(), Path: "/", HttpOnly: true, Secure: c.tls, SameSite: http.SameSiteStrictMode}
	if s == nil {
		ck.MaxAge = -1
	} else {
		ck.Value = s.id
		ck.Expires = s.expiry
	}
	http.SetCookie(w, ck)
}

// session returns r's session. Without tokens a visitor without one gets
// a new one (its cookie set on w): there is nothing to log in with, but
// the forms still need a CSRF token bound to a session.
func (c *Console) session(w http.ResponseWriter, r *http.Request) *session {
	if ck, err := r.Cookie(c.cookieName()); err == nil {
		if s := c.sessions.get(ck.Value); s != nil {
			return s
		}
	}
	if len(c.tokens) > 0 {
		return nil
	}
	s := c.sessions.add("", api.Token{Name: "none"}, true)
	c.setCookie(w, s)
	return s
}

// handler is a page handler of a logged-in session.
type handler func(w http.ResponseWriter, r *http.Request, s *session) error

// get runs h for a session; a visitor without one is sent to the login.
func (c *Console) get(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := c.session(w, r)
		if s == nil {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		if err := h(w, r, s); err != nil {
			c.fail(w, r, s, err)
		}
	})
}

// post runs h for a session after the CSRF check: the form's csrf field
// is the session's. write: only a read-write token may (403 otherwise,
// before anything is asked of the API).
func (c *Console) post(write bool, h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, api.DefaultMaxBodyBytes)
		s := c.session(w, r)
		if s == nil {
			c.fail(w, r, nil, &api.Error{Status: http.StatusUnauthorized, Code: api.CodeUnauthorized, Message: "log in first: this session is not (or no longer) valid"})
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(s.csrf)) != 1 {
			c.log.Warn("console form refused: CSRF token", slog.String("path", r.URL.Path), slog.String("token", s.name), slog.String("remote", r.RemoteAddr))
			c.fail(w, r, s, &api.Error{Status: http.StatusForbidden, Code: api.CodeForbidden, Message: "the form's CSRF token is not this session's: reload the page and try again"})
			return
		}
		if write && !s.write {
			c.fail(w, r, s, &api.Error{Status: http.StatusForbidden, Code: api.CodeForbidden,
				Message: "token " + s.name + " is read-only: it sees everything and starts nothing"})
			return
		}
		if err := h(w, r, s); err != nil {
			c.fail(w, r, s, err)
		}
	})
}

// loginPage is GET /login: the token form (or, already logged in, the
// overview).
func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	if s := c.session(w, r); s != nil {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	c.render(w, r, http.StatusOK, "login", nil, loginView{})
}

type loginView struct{ Error string }

// login is POST /login: a valid token starts a session and goes to the
// overview; another is refused (401) with the form again. The token is
// compared with every API token in constant time (api.Authenticate); the
// cross-site rules have already refused a form posted from another site.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, api.DefaultMaxBodyBytes)
	if len(c.tokens) == 0 {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	secret := r.PostFormValue("token")
	tok, ok := api.Authenticate(c.tokens, secret)
	if !ok {
		c.log.Warn("console login refused", slog.String("remote", r.RemoteAddr))
		c.render(w, r, http.StatusUnauthorized, "login", nil, loginView{Error: "That token is not one of this server's API tokens."})
		return
	}
	s := c.sessions.add(secret, tok, tok.Write)
	c.setCookie(w, s)
	c.log.Info("console login", slog.String("token", tok.Name), slog.Bool("write", tok.Write), slog.String("remote", r.RemoteAddr))
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// logout is POST /logout: the session ends and its cookie is cleared.
func (c *Console) logout(w http.ResponseWriter, r *http.Request, s *session) error {
	c.sessions.end(s.id)
	c.setCookie(w, nil)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
	return nil
}
