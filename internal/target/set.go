package target

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/dbtrail/dbtrail/internal/filemode"
)

// ErrUnknown is the error of a name the worker does not know.
var ErrUnknown = errors.New("unknown restore target")

// Set is a worker's restore targets by name. It is safe for concurrent
// use; the zero Set (and a nil *Set) holds none.
type Set struct {
	mu     sync.RWMutex
	byName map[string]Target
}

// NewSet returns the set of ts, each checked (Target.Check); a name given
// twice is refused.
func NewSet(ts ...Target) (*Set, error) {
	s := &Set{}
	for _, t := range ts {
		if err := s.Add(t); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Add adds t, checked; a name already there is refused.
func (s *Set) Add(t Target) error {
	if err := t.Check(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.byName[t.Name]; dup {
		return fmt.Errorf("restore target %s is configured twice", t.Name)
	}
	if s.byName == nil {
		s.byName = map[string]Target{}
	}
	s.byName[t.Name] = t
	return nil
}

// Get returns the target named name, or an error wrapping ErrUnknown that
// lists the names the worker knows.
func (s *Set) Get(name string) (Target, error) {
	if s != nil {
		s.mu.RLock()
		t, ok := s.byName[name]
		s.mu.RUnlock()
		if ok {
			return t, nil
		}
	}
	known := "none is configured (--restore-targets)"
	if names := s.Names(); len(names) > 0 {
		known = "it knows " + strings.Join(names, ", ")
	}
	return Target{}, fmt.Errorf("%w %q: this worker does not know it (%s)", ErrUnknown, name, known)
}

// Names are the targets' names, sorted.
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.byName))
	for n := range s.byName {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// All are the targets, by name.
func (s *Set) All() []Target {
	var out []Target
	for _, n := range s.Names() {
		t, _ := s.Get(n)
		out = append(out, t)
	}
	return out
}

// Marshal is the targets file's text of s (Parse reads it back).
func (s *Set) Marshal() ([]byte, error) {
	return json.MarshalIndent(file{Targets: s.All()}, "", "  ")
}

// file is the targets file's shape.
type file struct {
	Targets []Target `json:"targets"`
}

// Parse reads a targets file's text: {"targets": [{"name": …, "dsn": …,
// "password_file": …, "schemas": […], "replace": …, "index_server": …,
// "replicas": [{"dsn": …, "password_file": …}], "throttle_query": …}]}.
// An unknown field is refused; what names the text in errors.
func Parse(text []byte, what string) (*Set, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	var f file
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	s, err := NewSet(f.Targets...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return s, nil
}

// Load reads the targets file path (Parse). A file that others may read
// or write (group or world permission bits) is refused: it says where the
// worker may write and where its passwords are.
func Load(path string) (*Set, error) {
	b, err := filemode.ReadPrivate(path, "restore targets file")
	if err != nil {
		return nil, err
	}
	return Parse(b, "restore targets file "+path)
}
